#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build uniqd_bench.ko (uniqd/bench/) for one kernel build tree, in a
# private copy next to copies of uniqd/table.{c,h}, uniqd/keys.{c,h} and
# uniqd/blake3/, which it compiles in.
# It is never part of uniqd.ko.
#
#   build-bench-module.sh KDIR OUTDIR
# Result: OUTDIR/src/uniqd_bench.ko
set -euo pipefail
kdir=$1 out=$2
mkdir -p "$out"
out=$(cd "$out" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out/src"
mkdir -p "$out/src"
cp "$top"/uniqd/bench/Kbuild "$top"/uniqd/bench/*.[ch] "$top/uniqd/table.c" \
	"$top/uniqd/table.h" "$top/uniqd/keys.c" "$top/uniqd/keys.h" \
	"$top/uniqd/uniqd.h" "$top"/uniqd/blake3/*.[ch] "$top/uniqd/blake3/blake3.kbuild" \
	"$out/src/"
# The crypto API glue of uniqd.ko is not the bench's.
rm -f "$out/src/blake3_shash.c" "$out/src/blake3_ahash.c"
# keys.h and uniqd.h include <uapi/linux/uniqd.h>: this tree's copy.
mkdir -p "$out/src/include/uapi/linux"
cp "$top/include/uapi/linux/uniqd.h" "$out/src/include/uapi/linux/"
make -s -C "$kdir" M="$out/src" W=1 modules >"$out/build.log" 2>&1 || {
	cat "$out/build.log" >&2
	exit 1
}
if grep -E 'warning:|error:' "$out/build.log" >&2; then
	echo "build-bench-module: warnings building for $kdir" >&2
	exit 1
fi
