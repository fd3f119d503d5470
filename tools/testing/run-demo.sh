#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job ("make run"): build everything, boot Debian's 6.12 kernel in
# QEMU with uniqd loaded, and run the demo programs (tools/demo/), which show
# several processes sharing one pool; then the compiler demo
# (tools/demo/layout/): the host's own gcc with the GCC plugin builds a
# small project with a planted layout mismatch in a second 6.12 guest, and
# `uniqdctl layouts` finds it. Prints the demos' output and the summary.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# A fresh clone has no build/ yet: the summary goes there before anything is built.
mkdir -p "$top/build"
kernel=${UNIQD_RUN_KERNEL:-6.12}
"$top/tools/testing/check.sh" --mode run --kernels "$kernel" > "$top/build/run-summary.txt" 2>&1
rc=$?
# Each demo's own lines, without the kernel's boot messages.
for d in "$kernel" layout; do
	log=$top/build/run/$d/console.log
	[ -f "$log" ] || continue
	tr -d '\r' < "$log" | sed -n '/^uniqd-\(vm: kernel\|hostfs: running \)/,$p' |
		grep -v '^\[ *[0-9.]*\]'
	echo "(the guest's whole log: $log)"
done
# The failures, then the closing "N passed, N failed" line.
grep -E '^not ok ' "$top/build/run-summary.txt"
tail -n 1 "$top/build/run-summary.txt"
exit $rc
