#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# List the kernels the tests run on, one per line:
#   NAME RELEASE BZIMAGE KDIR
# The newest installed Debian 6.1 and 6.12 kernels; with --debug, also the
# debug kernel (built and cached by vm/debug-kernel.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for series in 6.1 6.12; do
	rel=$(ls -d /lib/modules/"$series".*-amd64/build 2>/dev/null |
	      sed 's|/lib/modules/||; s|/build||' | grep -v -e rt -e cloud | sort -V | tail -n 1)
	if [ -z "$rel" ] || [ ! -e "/boot/vmlinuz-$rel" ]; then
		echo "kernels: no Debian $series kernel with headers installed (run tools/deps.sh)" >&2
		exit 1
	fi
	echo "$series $rel /boot/vmlinuz-$rel /lib/modules/$rel/build"
done
if [ "${1:-}" = "--debug" ]; then
	dir=$("$here/vm/debug-kernel.sh" | tail -n 1)
	echo "debug - $dir/arch/x86/boot/bzImage $dir"
fi
