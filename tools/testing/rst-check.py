#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Documentation/*.rst must parse without a docutils warning or error.

    rst-check.py FILE...

Prints one result line ("ok host:docs.rst" or "not ok host:docs.rst: ...")
and every report on stderr. Sphinx's own directives (toctree) are not
docutils' and are let through: the kernel's documentation build knows them.
"""
import io
import sys

import docutils.core

SPHINX_ONLY = ('Unknown directive type "toctree"',)


def reports(path):
    err = io.StringIO()
    with open(path, encoding='utf-8') as f:
        src = f.read()
    docutils.core.publish_doctree(src, source_path=path, settings_overrides={
        'report_level': 2, 'warning_stream': err, 'halt_level': 5})
    out = []
    for line in err.getvalue().splitlines():
        if not any(k in line for k in ('(WARNING/', '(ERROR/', '(SEVERE/')):
            continue
        if any(s in line for s in SPHINX_ONLY):
            continue
        out.append(line)
    return out


def main():
    bad = []
    for path in sys.argv[1:]:
        bad += reports(path)
    for line in bad:
        print(line, file=sys.stderr)
    if bad:
        print(f"not ok host:docs.rst: {len(bad)} reports, first: {bad[0]}")
        return 1
    print(f"ok host:docs.rst ({len(sys.argv) - 1} files)")
    return 0


if __name__ == '__main__':
    sys.exit(main())
