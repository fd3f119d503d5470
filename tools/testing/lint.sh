#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel style and static checks on the module's sources, as result lines:
#   checkpatch.pl (from the unpacked kernel source in the cache) on every
#   uniqd/ and uapi file, and sparse (make C=2) against one kernel tree.
#
#   lint.sh KDIR OUTDIR
set -uo pipefail
kdir=$1 out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"

cp=$(ls -d "${UNIQD_CACHE:-/var/cache/uniqd}"/linux-source-6.12*/scripts/checkpatch.pl 2>/dev/null | head -n 1)
if [ -z "$cp" ]; then
	echo "not ok host:lint.checkpatch: no kernel source unpacked (tools/testing/vm/debug-kernel.sh unpacks it)"
else
	files=$(cd "$top" && ls uniqd/*.c uniqd/*.h uniqd/*/*.c include/uapi/linux/*.h 2>/dev/null)
	# --no-tree: out-of-tree module. Ignored: the new-file MAINTAINERS nag and
	# the SPDX-in-header-comment style that does not apply to uapi headers.
	if (cd "$top" && perl "$cp" --no-tree --terse --show-types \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG,COMMIT_LOG_LONG_LINE \
		-f $files) > "$out/checkpatch.txt" 2>&1 &&
	   ! grep -qE '(ERROR|WARNING):' "$out/checkpatch.txt"; then
		echo "ok host:lint.checkpatch"
	else
		echo "not ok host:lint.checkpatch: $(grep -cE '(ERROR|WARNING):' "$out/checkpatch.txt") reports, first: $(grep -m1 -E '(ERROR|WARNING):' "$out/checkpatch.txt")"
	fi
fi

if "$top/tools/build-module.sh" "$kdir" "$out/sparse" C=2 > "$out/sparse.txt" 2>&1; then
	echo "ok host:lint.sparse"
else
	echo "not ok host:lint.sparse: $(grep -m1 -E 'warning|error' "$out/sparse.txt")"
fi
