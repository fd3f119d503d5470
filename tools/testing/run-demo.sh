#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job ("make run"): build everything, boot Debian's 6.12 kernel in
# QEMU with uniqd loaded, and run the demo programs (tools/demo/), which show
# several processes sharing one pool. Prints the demo's output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# A fresh clone has no build/ yet: the summary goes there before anything is built.
mkdir -p "$top/build"
"$top/tools/testing/check.sh" --mode run --kernels "${UNIQD_RUN_KERNEL:-6.12}" > "$top/build/run-summary.txt" 2>&1
rc=$?
log=$(ls "$top"/build/run/*/console.log 2>/dev/null | head -n 1)
if [ -n "$log" ]; then
	# The demo's own lines, without the kernel's boot messages.
	tr -d '\r' < "$log" | sed -n '/^uniqd-vm: kernel/,$p' | grep -v '^\[ *[0-9.]*\]'
	echo "(the guest's whole log: $log)"
fi
tail -n 1 "$top/build/run-summary.txt"
exit $rc
