#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the native (host) tests in DIR; print their result lines prefixed
# "native:".
dir=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
raw=$(mktemp)
export BLAKE3_VECTORS=${BLAKE3_VECTORS:-$top/tests/data/blake3_test_vectors.json}
for t in "$dir"/test_*; do
	[ -x "$t" ] || continue
	if UNIQD_RESULTS=$raw "$t" >"$t.log" 2>&1; then
		echo "ok native:exit.$(basename "$t")"
	else
		echo "not ok native:exit.$(basename "$t"): exit status $? (see $t.log)"
	fi
done
sed -E 's/^(ok|not ok|skip) /\1 native:/' "$raw"
rm -f "$raw"
