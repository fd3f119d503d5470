#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""LLVM 19's MLIR tests as a corpus for the MLIR plugin (Documentation/mlir.rst).

    mlir_corpus.py prepare [--opt mlir-opt-19]
    mlir_corpus.py slice CORPUS N
    mlir_corpus.py run --corpus CORPUS --files LIST --modes M,M.. --plugin SO
                       --out DIR [--pool P] [--jobs J] [--chunk K] [--user U] [--log]
                       [--key printed|handles]
    mlir_corpus.py verify --ctl UNIQDCTL --pool P [--user U] LOG...

prepare (on the host): every mlir/test/**/*.mlir of Debian's llvm-toolchain-19
source (tools/testing/srcpkg.sh), split at `// -----` lines as
--split-input-file splits it; a piece is kept when Debian's mlir-opt-19 parses
and verifies it with the registered dialects alone (no
--allow-unregistered-dialect, no pass: pieces written for a test dialect,
for expected-error diagnostics or for a RUN: line's flags fail and are left
out). The kept pieces of each file are written back as one file, joined by
`// -----`, under $UNIQD_CACHE/mlir-corpus-<key>/files/, with list.txt
(path, pieces kept, pieces in all) beside them; <key> hashes the source
package's version, mlir-opt-19's version and FORMAT. The last line on
stdout is the corpus directory.

slice: N of list.txt's files, evenly spaced in its (sorted) order, so that a
slice crosses every dialect's tests.

run (in a guest, as root): every file of LIST, one mlir-opt-19 process each
with --split-input-file (as lit runs them), as user U, J at a time, in each
mode; the files go in chunks of K, and the modes take turns per chunk,
their order turning each chunk (plain none private uniqd, none private
uniqd plain, ...), so that slow and fast stretches of the machine fall on
every mode alike; a chunk's modes run back to back, so their CPU times
pair (an mlir-chunk line per chunk and mode). Modes: plain (mlir-opt without the plugin), and none,
private, uniqd (both passes with that table=). Each process writes its
stats to DIR/MODE/N.stats (and with --log its log to DIR/MODE/N.log) and
its output to DIR/MODE/N.out. Prints UBENCH lines: per mode, the processes,
their CPU time (user + system, from wait4) and wall time; the stats summed
(modules, interns, cached, mapped, syscalls, created, key bytes, and the
private tables' bytes: each process's last line); and one line per file
whose exit status was not 0.

verify (in a guest): reads the logs (handle, class, content in hex: the
plugin's log= format), checks that equal (class, content) has one handle
and a handle one (class, content) over every log, then RESOLVEs every
handle in pool P through `uniqdctl --json resolve` and checks it
names the logged class and content. Prints "ok NAME" / "not ok NAME: why".
"""
import argparse
import hashlib
import json
import os
import pwd
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

CACHE = os.environ.get('UNIQD_CACHE', '/var/cache/uniqd')
HERE = os.path.dirname(os.path.abspath(__file__))
MARK = '// -----'
# Part of the cache's key: change it whenever split_pieces(), parses() or
# the layout of the files prepare() writes changes.
FORMAT = 'mlir-corpus 2: pieces parsed by mlir-opt, joined by // -----, each file run whole'


def split_pieces(text):
    """The pieces --split-input-file makes of TEXT: split at lines that are `// -----`."""
    pieces, cur = [], []
    for line in text.splitlines(keepends=True):
        if line.rstrip() == MARK:
            pieces.append(''.join(cur))
            cur = []
        else:
            cur.append(line)
    pieces.append(''.join(cur))
    return pieces


def parses(opt, args, piece=None, timeout=300):
    """Whether mlir-opt ARGS (with PIECE on its standard input) exits 0."""
    r = subprocess.run([opt] + args + ['-o', os.devnull],
                       input=piece.encode() if piece is not None else None,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout)
    return r.returncode == 0


def prepare(a):
    src = subprocess.run([os.path.join(HERE, 'srcpkg.sh'), 'llvm-toolchain-19'], check=True,
                         stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()[-1]
    tests = os.path.join(src, 'mlir', 'test')
    version = subprocess.run([a.opt, '--version'], check=True, stdout=subprocess.PIPE,
                             text=True).stdout
    h = hashlib.sha256()
    for part in (os.path.basename(os.path.dirname(src)), version):
        h.update(part.encode() + b'\0')
    h.update(FORMAT.encode())
    out = os.path.join(CACHE, 'mlir-corpus-' + h.hexdigest()[:12])
    if os.path.exists(os.path.join(out, '.ok')):
        print(out)
        return 0
    files = sorted(os.path.relpath(os.path.join(d, f), tests)
                   for d, _, fs in os.walk(tests) for f in fs if f.endswith('.mlir'))
    os.makedirs(CACHE, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='.mlir-corpus.', dir=CACHE)
    jobs = []
    for rel in files:
        with open(os.path.join(tests, rel), encoding='utf-8', errors='replace') as f:
            for i, p in enumerate(split_pieces(f.read())):
                jobs.append((rel, i, p))
    print(f'mlir-corpus: {len(files)} files, {len(jobs)} pieces from {tests}', file=sys.stderr)
    workers = max(2, os.cpu_count() or 2)
    # A file whose every piece parses keeps them all (one process, not one
    # a piece: --split-input-file parses each piece on its own, as below).
    whole = [os.path.join(tests, rel) for rel in files]
    with ThreadPoolExecutor(max_workers=workers) as ex:
        clean = {rel for rel, ok in zip(files, ex.map(
            lambda f: parses(a.opt, ['--split-input-file', f]), whole)) if ok}
        keep = list(ex.map(lambda j: j[0] in clean or parses(a.opt, ['-'], j[2], 120), jobs))
    kept = {}
    total = {}
    for (rel, _, p), k in zip(jobs, keep):
        total[rel] = total.get(rel, 0) + 1
        if k:
            kept.setdefault(rel, []).append(p)
    for rel in kept:
        dst = os.path.join(tmp, 'files', rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, 'w') as f:
            f.write(('\n' + MARK + '\n').join(kept[rel]))
    # The files as the runs take them, whole: where --split-input-file
    # splits other than split_pieces() (a marker inside a line), leave out.
    names = sorted(kept)
    with ThreadPoolExecutor(max_workers=workers) as ex:
        runs = dict(zip(names, ex.map(lambda rel: parses(
            a.opt, ['--split-input-file', os.path.join(tmp, 'files', rel)]), names)))
    with open(os.path.join(tmp, 'list.txt'), 'w') as lst:
        for rel in names:
            if runs[rel]:
                lst.write(f'{rel}\t{len(kept[rel])}\t{total[rel]}\n')
            else:
                os.unlink(os.path.join(tmp, 'files', rel))
                del kept[rel]
    open(os.path.join(tmp, '.ok'), 'w').close()
    os.chmod(tmp, 0o755)
    try:
        os.rename(tmp, out)
    except OSError:
        subprocess.run(['rm', '-rf', tmp])
        if not os.path.exists(os.path.join(out, '.ok')):
            raise
    n = sum(len(v) for v in kept.values())
    print(f'mlir-corpus: kept {n} pieces of {len(jobs)} in {len(kept)} files', file=sys.stderr)
    print(out)
    return 0


def read_list(corpus):
    with open(os.path.join(corpus, 'list.txt')) as f:
        return [line.split('\t')[0] for line in f if line.strip()]


def slice_(a):
    files = read_list(a.corpus)
    n = min(a.n, len(files))
    for i in range(n):
        print(files[i * len(files) // n])
    return 0


def stats_sum(paths):
    s = dict(modules=0, interns=0, cached=0, mapped=0, syscalls=0, created=0, key_bytes=0,
             skipped=0, private_bytes=0)
    for p in paths:
        last = None
        try:
            with open(p) as f:
                for line in f:
                    kv = dict(w.split('=', 1) for w in line.split() if '=' in w)
                    if 'interns' not in kv:
                        continue
                    s['modules'] += 1
                    for k in ('interns', 'cached', 'mapped', 'syscalls', 'created',
                              'key_bytes', 'skipped'):
                        s[k] += int(kv.get(k, 0))
                    last = kv
        except FileNotFoundError:
            continue
        if last:
            s['private_bytes'] += int(last.get('bytes', 0))
    return s


def run(a):
    files = [line.strip() for line in open(a.files) if line.strip()]
    modes = a.modes.split(',')
    pw = pwd.getpwnam(a.user) if a.user else None
    for m in modes:
        os.makedirs(os.path.join(a.out, m), exist_ok=True)
        if pw:
            os.chown(os.path.join(a.out, m), pw.pw_uid, pw.pw_gid)
    cpu = {m: 0.0 for m in modes}
    wall = {m: 0.0 for m in modes}
    fails = []

    def cmd(m, i, rel):
        base = os.path.join(a.out, m, str(i))
        args = [a.opt, '--split-input-file', os.path.join(a.corpus, 'files', rel),
                '-o', base + '.out']
        if m == 'plain':
            return args
        opts = f'table={m} key={a.key} stats={base}.stats'
        if m == 'uniqd':
            opts += f' pool={a.pool}'
        if a.log and m != 'none':
            opts += f' log={base}.log'
        return args + [f'--load-pass-plugin={a.plugin}',
                       f'--pass-pipeline=builtin.module(uniqd-intern{{{opts}}},'
                       f'uniqd-symbols{{{opts}}})']

    def one(m, i, rel):
        kw = dict(user=pw.pw_uid, group=pw.pw_gid, extra_groups=[]) if pw else {}
        with open(os.path.join(a.out, m, f'{i}.err'), 'w') as err:
            p = subprocess.Popen(cmd(m, i, rel), stdout=subprocess.DEVNULL, stderr=err, **kw)
            # wait4: this child's own CPU time, not the whole run's.
            _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        return p.returncode, ru.ru_utime + ru.ru_stime

    idx = list(enumerate(files))
    chunks = [idx[k:k + a.chunk] for k in range(0, len(idx), a.chunk)]
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for c, chunk in enumerate(chunks):
            order = modes[c % len(modes):] + modes[:c % len(modes)]
            for m in order:
                t0 = time.monotonic()
                c_cpu = 0.0
                for (i, rel), (rc, t) in zip(chunk, ex.map(lambda x: one(m, *x), chunk)):
                    c_cpu += t
                    if rc != 0:
                        fails.append((m, rel, rc))
                cpu[m] += c_cpu
                wall[m] += time.monotonic() - t0
                # Each chunk's modes ran back to back: their ratios are
                # paired, and their spread is the run's.
                print(f'UBENCH mlir-chunk chunk={c} mode={m} files={len(chunk)} '
                      f'cpu_s={c_cpu:.3f}', flush=True)
    for m in modes:
        n = len(files)
        s = stats_sum(os.path.join(a.out, m, f'{i}.stats') for i in range(n))
        print(f'UBENCH mlir-corpus mode={m} files={n} jobs={a.jobs} cpu_s={cpu[m]:.2f} '
              f'wall_s={wall[m]:.2f} ' + ' '.join(f'{k}={v}' for k, v in s.items()))
    for m, rel, rc in fails:
        print(f'UBENCH mlir-corpus-fail mode={m} file={rel} status={rc}')
    return 1 if fails else 0


def verify(a):
    ok = True

    def res(name, why=None):
        nonlocal ok
        if why is None:
            print(f'ok {name}')
        else:
            ok = False
            print(f'not ok {name}: {why}')

    by_key = {}
    by_handle = {}
    lines = 0
    bad = []
    for path in a.logs:
        with open(path) as f:
            for line in f:
                h, cls, content = line.rstrip('\n').split('\t')
                lines += 1
                k = (cls, content)
                if by_key.setdefault(k, h) != h or by_handle.setdefault(h, k) != k:
                    bad.append(f'{h} {cls} {content[:40]}')
    if lines == 0:
        res(f'{a.name}.handles-one-to-one', 'no log lines')
    elif bad:
        res(f'{a.name}.handles-one-to-one', f'{len(bad)} lines disagree, first: {bad[0]}')
    else:
        res(f'{a.name}.handles-one-to-one')
    # RESOLVE: every handle names the logged class and content in the pool.
    handles = sorted(by_handle)
    kw = {}
    if a.user:
        pw = pwd.getpwnam(a.user)
        kw = dict(user=pw.pw_uid, group=pw.pw_gid, extra_groups=[])
    wrong = []
    got = 0
    for k in range(0, len(handles), 1000):
        part = handles[k:k + 1000]
        r = subprocess.run([a.ctl, '--pool', a.pool, '--json', 'resolve'] +
                           ['0x' + h for h in part], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, **kw)
        if r.returncode != 0:
            wrong.append(f'uniqdctl resolve exited {r.returncode}: {r.stderr.strip()[:200]}')
            break
        for e in json.loads(r.stdout)['handles']:
            h = e['handle'][2:]
            got += 1
            if by_handle.get(h) != (e['class'], e['content_hex']):
                wrong.append(f'{h}: pool says {e["class"]} {e["content_hex"][:40]}')
    if not handles or wrong or got != len(handles):
        res(f'{a.name}.resolve', f'{len(handles)} handles, {got} resolved; '
            f'{wrong[0] if wrong else ""}')
    else:
        res(f'{a.name}.resolve')
    print(f'# {a.name}: {lines} log lines, {len(handles)} handles', file=sys.stderr)
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('prepare')
    p.add_argument('--opt', default='mlir-opt-19')
    p = sub.add_parser('slice')
    p.add_argument('corpus')
    p.add_argument('n', type=int)
    p = sub.add_parser('run')
    p.add_argument('--corpus', required=True)
    p.add_argument('--files', required=True)
    p.add_argument('--modes', default='plain,none,private,uniqd')
    p.add_argument('--plugin', required=True)
    p.add_argument('--out', required=True)
    p.add_argument('--pool', default='mlir-corpus')
    p.add_argument('--jobs', type=int, default=2)
    p.add_argument('--chunk', type=int, default=8)
    p.add_argument('--user')
    p.add_argument('--log', action='store_true')
    p.add_argument('--key', default='printed', choices=('printed', 'handles'))
    p.add_argument('--opt', default='mlir-opt-19')
    p = sub.add_parser('verify')
    p.add_argument('--ctl', required=True)
    p.add_argument('--pool', required=True)
    p.add_argument('--user')
    p.add_argument('--name', default='mlir-corpus')
    p.add_argument('logs', nargs='+')
    a = ap.parse_args()
    return {'prepare': prepare, 'slice': slice_, 'run': run, 'verify': verify}[a.cmd](a)


if __name__ == '__main__':
    sys.exit(main())
