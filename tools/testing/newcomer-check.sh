#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a newcomer does (issue 30): `make run` from a clone in a directory
# only its owner may enter (`mktemp -d`; root's home, /root, is drwx------
# on Debian) whose path has a space. The part of `make run` that cares is
# its last guest: the compiler demo (tools/demo/layout/guest-demo.sh in
# vm/hostfs-guest.sh), where an unprivileged user builds with the GCC
# plugin from the checkout, which the guest sees with the host's modes.
#
# This runs that guest from a copy of the tree in such a directory: tools/
# (the scripts, the demo's sources) and the two artefacts the guest runs,
# build/bin/uniqdctl and build/gcc-plugin/uniqd.so, already built, so that
# it costs one guest boot (about 15 s under TCG) and no build.
#
#   newcomer-check.sh OUTDIR MODULE RELEASE
#
# MODULE: a uniqd.ko built for RELEASE (Debian's 6.12). Prints result lines
# (check.sh collects OUTDIR/results.txt):
#
#   ok newcomer:checkout              the copy is in a 0700 directory whose path has a space
#   ok newcomer:layout.<case>         the demo's own cases, as in make run
#   ok newcomer:vm.<case>             run-vm.sh's verdicts on the guest
#   not ok newcomer:<case>: why
#
# OUTDIR also gets the guest's console.log and files/ (build log, report).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 module=$2 release=$3
rm -rf "$out"
mkdir -p "$out"
res=$out/results.txt
: > "$res"
bad() { echo "not ok newcomer:$1: $2" >> "$res"; }

# mktemp -d makes the directory 0700, as the newcomer's.
d=$(mktemp -d "${TMPDIR:-/tmp}/uniqd newcomer.XXXXXX") || { bad checkout "mktemp -d failed"; exit 1; }
trap 'rm -rf "$d"' EXIT
src=$d/src
mode=$(stat -c %a "$d")
if [ "$mode" != 700 ]; then
	bad checkout "$d is $mode, not 700"
elif ! mkdir -p "$src/build/bin" "$src/build/gcc-plugin" ||
     ! cp -a "$top/tools" "$src/" ||
     ! cp "$top/build/bin/uniqdctl" "$src/build/bin/" ||
     ! cp "$top/build/gcc-plugin/uniqd.so" "$src/build/gcc-plugin/"; then
	bad checkout "cannot copy tools/, build/bin/uniqdctl and build/gcc-plugin/uniqd.so to $src"
else
	echo "ok newcomer:checkout" >> "$res"
	# As check.sh --mode run starts it, but with everything in the copy:
	# the scripts, the guest's output directory, the tree it is given.
	"$src/tools/testing/vm/hostfs-guest.sh" --name newcomer --module "$module" \
		--release "$release" --out "$src/build/run/layout" --timeout 600 \
		--script "$src/tools/demo/layout/guest-demo.sh" -- "$src"
	vm=$src/build/run/layout
	if [ -s "$vm/results.txt" ]; then
		cat "$vm/results.txt" >> "$res"
	else
		bad vm "the guest left no results (see $out/console.log)"
	fi
	cp "$vm/console.log" "$out/" 2>/dev/null
	cp -r "$vm/files" "$out/" 2>/dev/null
fi
cat "$res"
! grep -q '^not ok ' "$res"
