#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every file linked into libuniqd.so carries a licence any compiler may link.

    licence-check.py [--root DIR] [-v]     one line: ok/not ok host:licence.spdx
    licence-check.py --planted             one line: ok/not ok host:licence.planted
    licence-check.py --copyright           one line: ok/not ok host:licence.copyright

The build is asked which files those are: `make -n -B` of libuniqd.so in
ROOT (default: this tree) prints the link command, whose objects are the
library, and the compile command of each object; each compile command is
run again with -M, so the compiler itself lists every header the object
includes. Every file of the tree among them must have an
SPDX-License-Identifier line (in its first 5 lines) whose expression is
allowed: each OR needs one allowed side, each AND both, and the allowed
licences are those compatible both with Apache-2.0 WITH LLVM-exception
(LLVM, MLIR) and with the GPL (GCC, the kernel): ALLOWED below, with why.
Headers outside the tree are the platform's (the C library, the kernel's
UAPI headers, the compiler's own), which every program includes under
their own terms; each must belong to a package of PLATFORM (dpkg -S says
which).

--planted checks the checker: in a copy of the files the build needs, a
planted GPL-2.0-only source, a planted header and a BLAKE3 file put back
to GPL-2.0 must each fail it, and the copy as it is must pass.

--copyright checks debian/copyright against the tree: for every file git
knows that has an SPDX line, the last Files paragraph matching its path
must name the same licence (DEBIAN_NAME gives the spellings).

Documentation/libuniqd.rst ("Licence") has the decision.
"""
import fnmatch
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

# Licences (SPDX ids) that a program under Apache-2.0 WITH LLVM-exception
# and a GPL-2.0-only one may both link.
ALLOWED = {
    'MIT': 'permissive',
    'BSD-2-Clause': 'permissive',
    'BSD-3-Clause': 'permissive',
    'ISC': 'permissive',
    'Zlib': 'permissive',
    'CC0-1.0': 'public domain dedication',
    'LGPL-2.1-or-later': 'GPL-2.0 through LGPL-2.1 section 3, Apache-2.0 through LGPL-3.0',
    'LGPL-2.1+': 'the deprecated spelling of LGPL-2.1-or-later',
    'Apache-2.0 WITH LLVM-exception': "LLVM's own; its exception lets it combine with GPL-2.0",
}

# Packages whose headers a program may include whatever its licence.
PLATFORM = {
    'libc6-dev': "glibc's headers (LGPL-2.1-or-later)",
    'linux-libc-dev': "the kernel's UAPI headers (GPL-2.0 WITH Linux-syscall-note)",
    'libgcc-12-dev': "GCC's own headers (GPL-3.0 WITH GCC-exception-3.1)",
}

# SPDX expressions of the tree and how debian/copyright spells them.
DEBIAN_NAME = {
    'GPL-2.0': 'GPL-2',
    'GPL-2.0-only': 'GPL-2',
    'LGPL-2.1-or-later': 'LGPL-2.1+',
    'GPL-2.0 OR MIT': 'GPL-2 or Expat',
    '(GPL-2.0 WITH Linux-syscall-note) OR MIT':
        'GPL-2 with Linux-syscall-note exception or Expat',
    'GPL-2.0 WITH Linux-syscall-note': 'GPL-2 with Linux-syscall-note exception',
    'CC0-1.0': 'CC0-1.0',
    'MIT': 'Expat',
    'Apache-2.0 WITH LLVM-exception': 'Apache-2.0 with LLVM exception',
}

SPDX_RE = re.compile(r'SPDX-License-Identifier:\s*(.*?)\s*(\*/|-->)?\s*$')


class BadExpr(Exception):
    pass


def tokens(expr):
    return re.findall(r'\(|\)|[^\s()]+', expr)


def allowed(expr):
    """Whether the SPDX expression EXPR is allowed; BadExpr if malformed."""
    toks = tokens(expr)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def take():
        nonlocal pos
        if pos >= len(toks):
            raise BadExpr('ends early')
        pos += 1
        return toks[pos - 1]

    def factor():
        t = take()
        if t == '(':
            v = disj()
            if take() != ')':
                raise BadExpr('no )')
            return v
        if t in ('AND', 'OR', 'WITH', ')'):
            raise BadExpr(f'{t} where a licence belongs')
        if peek() == 'WITH':
            take()
            return f'{t} WITH {take()}' in ALLOWED
        return t in ALLOWED

    def conj():
        v = factor()
        while peek() == 'AND':
            take()
            v = factor() and v
        return v

    def disj():
        v = conj()
        while peek() == 'OR':
            take()
            v = conj() or v
        return v

    if not toks:
        raise BadExpr('empty')
    v = disj()
    if pos != len(toks):
        raise BadExpr(f'{toks[pos]} after the expression')
    return v


def spdx_of(path):
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            for _ in range(5):
                m = SPDX_RE.search(f.readline())
                if m:
                    return m.group(1)
    except OSError:
        return None
    return None


def build_files(root):
    """The library's objects' compile commands, from make -n -B; and the .so."""
    out = subprocess.run(['make', '-s', '-n', '-B', '-C', root, 'lib'],
                         capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f'make -n lib: {out.stderr.strip()[:300]}')
    lines = out.stdout.replace('\\\n', ' ').splitlines()
    link = [l for l in lines if ' -shared ' in l and re.search(r'-o \S*libuniqd\.so\.\S+', l)]
    if len(link) != 1:
        raise RuntimeError(f'{len(link)} link commands of libuniqd.so in make -n lib')
    objs = [w for w in shlex.split(link[0]) if w.endswith('.o')]
    compiles = {}
    for l in lines:
        words = shlex.split(l)
        if '-c' in words and '-o' in words:
            o = words[words.index('-o') + 1]
            if o in objs:
                compiles[o] = l
    missing = [o for o in objs if o not in compiles]
    if not objs or missing:
        raise RuntimeError(f'no compile command for {missing or "any object"}')
    return objs, compiles


def headers_of(root, cmd, tmp):
    """Every file the compile command CMD reads, as the compiler says."""
    dep = os.path.join(tmp, 'dep.d')
    cmd = re.sub(r'\s-o\s+\S+', f' -M -MF {shlex.quote(dep)}', cmd)
    cmd = re.sub(r'\s-c\s', ' ', cmd)
    r = subprocess.run(cmd, shell=True, cwd=root, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f'{cmd[:120]}...: {r.stderr.strip()[:300]}')
    with open(dep) as f:
        text = f.read().replace('\\\n', ' ')
    return text.split(':', 1)[1].split()


def check(root, verbose=False, quiet=False):
    """(ok, why, number of files) for the tree ROOT."""
    root = os.path.abspath(root)
    # The generated version header must exist for -M to follow it.
    r = subprocess.run(['make', '-s', '-C', root, 'build/include/libuniqd_version.h'],
                       capture_output=True, text=True)
    if r.returncode:
        return False, f'make the version header: {r.stderr.strip()[:200]}', 0
    try:
        objs, compiles = build_files(root)
        files = set()
        with tempfile.TemporaryDirectory() as tmp:
            for o in objs:
                files.update(os.path.normpath(os.path.join(root, p))
                             for p in headers_of(root, compiles[o], tmp))
    except RuntimeError as e:
        return False, str(e), 0
    bad, system = [], []
    for path in sorted(files):
        rel = os.path.relpath(path, root)
        if rel.startswith('..'):
            system.append(path)
            continue
        expr = spdx_of(path)
        if expr is None:
            bad.append(f'{rel}: no SPDX-License-Identifier line')
            continue
        try:
            ok = allowed(expr)
        except BadExpr as e:
            bad.append(f'{rel}: "{expr}": {e}')
            continue
        if verbose:
            print(f'{"ok " if ok else "BAD"} {rel}: {expr}', file=sys.stderr)
        if not ok:
            bad.append(f'{rel}: {expr}')
    if system:
        r = subprocess.run(['dpkg', '-S'] + system, capture_output=True, text=True)
        owner = {}
        for line in r.stdout.splitlines():
            pkg, _, path = line.partition(': ')
            owner[path] = pkg.split(':')[0]
        for path in system:
            pkg = owner.get(path) or owner.get(os.path.realpath(path))
            if verbose:
                print(f'sys {path}: {pkg}', file=sys.stderr)
            if pkg not in PLATFORM:
                bad.append(f'{path}: from {pkg or "no package"}, not the platform\'s')
    for b in bad if not quiet else []:
        print(b, file=sys.stderr)
    n = len(files)
    if bad:
        return False, f'{len(bad)} of {n} files: {bad[0]}', n
    return True, '', n


def planted(top):
    """The checker against a copy of the tree with licences planted in it."""
    fails = []
    with tempfile.TemporaryDirectory(prefix='uniqd-licence.') as tmp:
        copy = os.path.join(tmp, 'tree')
        os.makedirs(copy)
        for d in ('mk', 'tools/libuniqd', 'uniqd/blake3', 'include'):
            shutil.copytree(os.path.join(top, d), os.path.join(copy, d))
        for f in ('Makefile', 'VERSION'):
            shutil.copy(os.path.join(top, f), copy)
        lib = os.path.join(copy, 'tools/libuniqd')

        def expect(what, want_ok, want_in=''):
            ok, why, _ = check(copy, quiet=True)
            if ok != want_ok or want_in not in why:
                fails.append(f'{what}: {"passed" if ok else "failed: " + why}')

        expect('the copy as it is', True)
        with open(os.path.join(lib, 'planted.c'), 'w') as f:
            f.write('// SPDX-License-Identifier: GPL-2.0-only\nint uq_planted;\n')
        expect('a GPL-2.0-only source', False, 'tools/libuniqd/planted.c: GPL-2.0-only')
        os.unlink(os.path.join(lib, 'planted.c'))
        with open(os.path.join(lib, 'planted.h'), 'w') as f:
            f.write('/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */\n')
        sys_c = os.path.join(lib, 'sys.c')
        with open(sys_c) as f:
            text = f.read()
        with open(sys_c, 'w') as f:
            f.write(text + '#include "planted.h"\n')
        expect('a header with the syscall note alone', False, 'tools/libuniqd/planted.h')
        with open(sys_c, 'w') as f:
            f.write(text)
        b3 = os.path.join(copy, 'uniqd/blake3/blake3.c')
        with open(b3) as f:
            text = f.read()
        with open(b3, 'w') as f:
            f.write(re.sub(r'SPDX-License-Identifier: .*', 'SPDX-License-Identifier: GPL-2.0',
                           text, count=1))
        expect('BLAKE3 back to GPL-2.0', False, 'uniqd/blake3/blake3.c: GPL-2.0')
    return fails


def copyright_check(top):
    """Whether debian/copyright names each file's SPDX licence."""
    paras, cur = [], {}
    with open(os.path.join(top, 'debian/copyright')) as f:
        key = None
        for line in f.read().splitlines() + ['']:
            if not line.strip():
                if cur:
                    paras.append(cur)
                cur, key = {}, None
            elif line[0] in ' \t' and key:
                cur[key] += ' ' + line.strip()
            else:
                key, _, val = line.partition(':')
                cur[key] = val.strip()
    files = [(p['Files'].split(), p.get('License', '').split('\n')[0]) for p in paras
             if 'Files' in p]
    ls = subprocess.run(['git', '-C', top, 'ls-files', '-co', '--exclude-standard'],
                        capture_output=True, text=True)
    if ls.returncode:
        return [f'git ls-files: {ls.stderr.strip()}']
    bad = []
    for rel in ls.stdout.split():
        if rel.startswith('build/') or not os.path.isfile(os.path.join(top, rel)):
            continue
        expr = spdx_of(os.path.join(top, rel))
        if expr is None:
            continue
        lic = None
        for globs, name in files:
            if any(fnmatch.fnmatchcase(rel, g) for g in globs):
                lic = name
        want = DEBIAN_NAME.get(expr)
        if want is None:
            bad.append(f'{rel}: "{expr}" has no Debian spelling in licence-check.py')
        elif lic != want:
            bad.append(f'{rel}: SPDX "{expr}", debian/copyright "{lic}"')
    return bad


def main():
    top = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    ap = argparse.ArgumentParser()
    ap.add_argument('--root', default=top)
    ap.add_argument('--planted', action='store_true')
    ap.add_argument('--copyright', action='store_true')
    ap.add_argument('-v', '--verbose', action='store_true')
    a = ap.parse_args()
    if a.copyright:
        bad = copyright_check(top)
        for b in bad:
            print(b, file=sys.stderr)
        if bad:
            print(f'not ok host:licence.copyright: {len(bad)} files, first: {bad[0]}')
            return 1
        print('ok host:licence.copyright')
        return 0
    if a.planted:
        # The expression rules themselves first.
        cases = {'GPL-2.0': False, 'GPL-2.0-only': False, 'GPL-2.0-or-later': False,
                 'GPL-2.0 WITH Linux-syscall-note': False, 'GPL-2.0 OR MIT': True,
                 '(GPL-2.0 WITH Linux-syscall-note) OR MIT': True, 'MIT AND GPL-2.0': False,
                 'LGPL-2.1-or-later': True, 'Apache-2.0': False,
                 'Apache-2.0 WITH LLVM-exception': True, 'MIT AND (BSD-2-Clause OR GPL-2.0)': True}
        fails = [f'"{e}" judged {not v}' for e, v in cases.items() if allowed(e) != v]
        fails += planted(top)
        if fails:
            print(f'not ok host:licence.planted: {fails[0]}')
            return 1
        print('ok host:licence.planted')
        return 0
    ok, why, n = check(a.root, a.verbose)
    if not ok:
        print(f'not ok host:licence.spdx: {why}')
        return 1
    print(f'ok host:licence.spdx ({n} files)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
