# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a Pool.intern() costs from Python, by where it is answered.

    PYTHONPATH=build/python LD_LIBRARY_PATH=build/python-fake \\
        /usr/bin/python3 tools/python/examples/bench_hits.py

Against the fake device (mk/python.mk's build/python-fake/libuniqd.so.1),
so that no kernel is needed; the hits never reach it. Each figure is the
best of 5 rounds, less the cost of calling an empty function the same way.
Not a test: Documentation/python.rst quotes it.
"""
import timeit

import uniqd


def best(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def main():
    with uniqd.Pool("bench-hits") as p:
        ty = p.cls("t")
        key = b"some_identifier_27_bytes_xx"
        p.intern(ty, key)
        n = 200_000
        empty = best(lambda: None, n)
        keys = [f"key{i:024d}".encode() for i in range(4096)]
        hot = keys[:512]
        p.intern_many(ty, keys)

        def loop(ks):
            for k in ks:
                p.intern(ty, k)

        def bare(ks):
            for k in ks:
                pass

        print(f"call of an empty lambda: {empty * 1e9:.0f} ns")
        print(f"hit of the Pool's table, same object: {(best(lambda: p.intern(ty, key), n) - empty) * 1e9:.0f} ns")
        loop(hot)
        t = (best(lambda: loop(hot), 200) - best(lambda: bare(hot), 200)) / len(hot)
        print(f"hit of the Pool's table, 512 keys in turn: {t * 1e9:.0f} ns")
        loop(keys)
        t = (best(lambda: loop(keys), 20) - best(lambda: bare(keys), 20)) / len(keys)
        print(f"table miss, libuniqd's cache hit (GIL released), 4096 keys in turn: {t * 1e9:.0f} ns")
        t = best(lambda: p.intern_many(ty, keys), 20) / len(keys)
        print(f"intern_many() of 4096 keys libuniqd's cache holds: {t * 1e9:.0f} ns a key")


if __name__ == "__main__":
    main()
