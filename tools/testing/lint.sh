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

cache=${UNIQD_CACHE:-/var/cache/uniqd}
cp=$(ls -d "$cache"/linux-source-6.12*/scripts/checkpatch.pl "$cache"/lint/*/scripts/checkpatch.pl 2>/dev/null | head -n 1)
# Without the debug kernel's unpacked tree, take just checkpatch and its
# data files out of Debian's source tarball.
if [ -z "$cp" ] && [ -f /usr/src/linux-source-6.12.tar.xz ]; then
	mkdir -p "$cache/lint"
	tar -C "$cache/lint" -xJf /usr/src/linux-source-6.12.tar.xz --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch' 2>/dev/null
	cp=$(ls -d "$cache"/lint/*/scripts/checkpatch.pl 2>/dev/null | head -n 1)
fi
if [ -z "$cp" ]; then
	echo "not ok host:lint.checkpatch: no checkpatch.pl: install linux-source-6.12 (tools/deps.sh)"
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
