#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# List the kernels the tests run on, one per line:
#   NAME RELEASE BZIMAGE KDIR
# The newest installed Debian 6.1 and 6.12 kernels and their PREEMPT_RT
# builds (6.1-rt, 6.12-rt); with --debug, also the debug kernel (built and
# cached by vm/debug-kernel.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# NAME SERIES FLAVOUR: Debian's generic kernels and their PREEMPT_RT builds.
while read -r name series flavour; do
	rel=$(ls -d /lib/modules/"$series".*-"$flavour"/build 2>/dev/null |
	      sed 's|/lib/modules/||; s|/build||' | grep -v -e cloud |
	      { if [ "$flavour" = amd64 ]; then grep -v -e -rt-; else cat; fi; } |
	      sort -V | tail -n 1)
	if [ -z "$rel" ] || [ ! -e "/boot/vmlinuz-$rel" ]; then
		echo "kernels: no Debian $name kernel with headers installed (run tools/deps.sh)" >&2
		exit 1
	fi
	echo "$name $rel /boot/vmlinuz-$rel /lib/modules/$rel/build"
done <<EOF_KERNELS
6.1 6.1 amd64
6.12 6.12 amd64
6.1-rt 6.1 rt-amd64
6.12-rt 6.12 rt-amd64
EOF_KERNELS
if [ "${1:-}" = "--debug" ]; then
	dir=$("$here/vm/debug-kernel.sh" | tail -n 1)
	echo "debug - $dir/arch/x86/boot/bzImage $dir"
fi
