# SPDX-License-Identifier: LGPL-2.1-or-later
"""python3 -m uniqd: a pool's statistics and contents, as JSON.

    python3 -m uniqd stats   --pool NAME [--json]
    python3 -m uniqd classes --pool NAME [--json]
    python3 -m uniqd dump    --pool NAME [--class NAME] [--json]

`stats` prints the pool's counters (uniqd_stats()); `classes` walks every
entry once (uniqd_foreach()) and reports each class: its id, name, entries
and content bytes, largest first (what a build put in its pool, by kind);
`dump` prints every entry in handle order. The pool must exist: nothing is
created. Exit status 0, or 1 with libuniqd's sentence on stderr.
"""
import argparse
import json
import sys
from typing import Any, Optional

from . import Error, Pool


def _text(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")


def classes(pool: Pool) -> list[dict[str, Any]]:
    """Per class: id, name, entries and content bytes, most bytes first."""
    per: dict[int, tuple[int, int]] = {}
    for _, cls, data in pool:
        n, b = per.get(cls, (0, 0))
        per[cls] = (n + 1, b + len(data))
    order = sorted(per, key=lambda c: (-per[c][1], c))
    return [{"id": c, "name": pool.class_name(c), "entries": per[c][0], "bytes": per[c][1]}
            for c in order]


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m uniqd", description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=("stats", "classes", "dump"))
    ap.add_argument("-p", "--pool", required=True, help="the pool's name")
    ap.add_argument("-c", "--class", dest="cls", help="dump: only this class")
    ap.add_argument("-j", "--json", action="store_true", help="print JSON")
    ap.add_argument("--device", help="the device (default /dev/uniqd)")
    a = ap.parse_args(argv)
    out: Any
    try:
        with Pool(a.pool, create=False, device=a.device) as pool:
            if a.command == "stats":
                out = pool.stats()
                if not a.json:
                    for k, v in out.items():
                        print(f"{k:14} {v}")
            elif a.command == "classes":
                out = classes(pool)
                if not a.json:
                    print(f"{'id':>5} {'entries':>10} {'bytes':>12}  name")
                    for r in out:
                        print(f"{r['id']:5} {r['entries']:10} {r['bytes']:12}  {r['name']}")
            else:
                cls = pool.cls(a.cls, create=False) if a.cls else None
                out = [{"handle": h, "class": c, "data": _text(d)}
                       for h, c, d in pool.entries(cls)]
                if not a.json:
                    for e in out:
                        print(f"{e['handle']:#x} {e['class']} {e['data']}")
    except Error as e:
        print(f"python3 -m uniqd: {e.strerror}", file=sys.stderr)
        return 1
    if a.json:
        json.dump({"pool": a.pool, a.command: out}, sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
