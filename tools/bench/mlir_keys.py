#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The MLIR plugin's two keys, measured on LLVM's own MLIR test corpus.

    mlir_keys.py [--limit N] [--plugin SO] [--replay BIN] CORPUS_DIR

Every *.mlir under CORPUS_DIR (LLVM 19's mlir/test, from
`tools/testing/srcpkg.sh llvm-toolchain-19`), sorted, is run through
mlir-opt-19 --split-input-file --allow-unregistered-dialect three times, one
process each: without the plugin's passes, with uniqd-intern{key=printed}
and with uniqd-intern{key=handles} (table=private, a log and stats each).
Files on which any run fails (a piece that does not parse or verify, or
that needs a test dialect Debian's mlir-opt lacks) are left out. Prints,
for the files kept: the CPU time (user and system) of each run kind, what the stats lines
sum to (keys, key bytes), and the pool each key makes of the whole corpus
(every log replayed into one pool by build/native/symbols_replay --dump:
its entries and content bytes), and checks that both pools hold the same
printed forms. Not part of make check; Documentation/mlir.rst has the
figures.
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile

top = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '../..'))


def run(args, env=None):
    """Exit status and CPU time (user + system) of one child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=env, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.returncode, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('corpus')
    ap.add_argument('--limit', type=int, default=0)
    ap.add_argument('--plugin', default=os.path.join(top, 'build/mlir/uniqd-mlir.so'))
    ap.add_argument('--replay', default=os.path.join(top, 'build/native/symbols_replay'))
    ap.add_argument('--opt', default='mlir-opt-19')
    a = ap.parse_args()
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(a.corpus)
                   for f in fs if f.endswith('.mlir'))
    if a.limit:
        files = files[:a.limit]
    base = [a.opt, '--split-input-file', '--allow-unregistered-dialect',
            '--mlir-disable-threading']
    kinds = ('printed', 'handles')
    t_all = {'none': 0.0, 'printed': 0.0, 'handles': 0.0}
    kept = 0
    with tempfile.TemporaryDirectory(prefix='uniqd-mlir-keys.') as tmp:
        logs = {k: [] for k in kinds}
        stats = {k: os.path.join(tmp, f'stats.{k}') for k in kinds}
        for i, f in enumerate(files):
            rc, t0 = run(base + [f, '-o', os.devnull])
            if rc:
                continue
            ok, times, mine = True, {}, {}
            for k in kinds:
                log = os.path.join(tmp, f'{i}.{k}.log')
                st = os.path.join(tmp, f'{i}.{k}.stats')
                pipe = (f'builtin.module(uniqd-intern{{table=private key={k} log={log} '
                        f'stats={st}}})')
                rc, t = run(base + [f'--load-pass-plugin={a.plugin}',
                                    f'--pass-pipeline={pipe}', f, '-o', os.devnull])
                if rc or not os.path.exists(log):
                    ok = False
                    break
                times[k], mine[k] = t, (log, st)
            if not ok:
                continue
            kept += 1
            t_all['none'] += t0
            for k in kinds:
                t_all[k] += times[k]
                logs[k].append(mine[k][0])
                with open(mine[k][1]) as s, open(stats[k], 'a') as out:
                    out.write(s.read())
        print(f'files: {len(files)} found, {kept} kept (every run succeeded)')
        for k in ('none',) + kinds:
            print(f'CPU time {k:8s} {t_all[k]:8.2f} s')
        pools = {}
        for k in kinds:
            keys = kb = 0
            with open(stats[k]) as s:
                for line in s:
                    w = dict(x.split('=', 1) for x in line.split() if '=' in x)
                    keys += int(w['interns'])
                    kb += int(w['key_bytes'])
            size = subprocess.run([a.replay, '--bytes'] + logs[k], capture_output=True,
                                  text=True)
            dump = subprocess.run([a.replay, '--dump'] + logs[k], capture_output=True)
            if size.returncode or dump.returncode:
                print(f'{k}: replay failed: {size.stderr[:200]} {dump.stderr[:200]}',
                      file=sys.stderr)
                return 1
            pools[k] = {tuple(l.split(b'\t', 2)[1:]) for l in dump.stdout.split(b'\n')
                        if l and b'\tmlir.' not in l}
            entries, content = size.stdout.split()
            print(f'key={k:8s} keys interned {keys:9d} ({kb} bytes); the corpus\'s pool: '
                  f'{entries} entries, {content} content bytes')
        print('the two pools hold the same printed forms:',
              pools['printed'] == pools['handles'])
    return 0


if __name__ == '__main__':
    sys.exit(main())
