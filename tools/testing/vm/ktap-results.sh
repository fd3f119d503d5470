#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn the KTAP that KUnit printed into the console into result lines.
# kunit.py parse (from the kernel source) is the reference parser; it is used
# to judge the whole report when it is at hand, and the per-case lines are
# taken from the KTAP itself.
name=$1 log=$2
tr -d '\r' < "$log" | sed -E 's/^\[ *[0-9.]+\] //' |
	awk -v n="$name" '
	/^ *# Subtest: / { sub(/^ *# Subtest: /, ""); suite = $0; next }
	/^    (not )?ok [0-9]+ / {
		line = $0; sub(/^ +/, "", line)
		ok = (line !~ /^not ok/)
		sub(/^(not )?ok [0-9]+ /, "", line)
		skip = (line ~ /# SKIP/)
		sub(/ *#.*/, "", line)
		if (skip) print "skip " n ":kunit." suite "." line ": skipped"
		else if (ok) print "ok " n ":kunit." suite "." line
		else print "not ok " n ":kunit." suite "." line
	}'
kunitpy=$(ls -d "${UNIQD_CACHE:-/var/cache/uniqd}"/linux-source-6.12*/tools/testing/kunit/kunit.py 2>/dev/null | head -n 1)
if [ -n "$kunitpy" ]; then
	if tr -d '\r' < "$log" | python3 "$kunitpy" parse >"${log%.log}.kunit.txt" 2>&1; then
		echo "ok $name:kunit.parse"
	else
		echo "not ok $name:kunit.parse: kunit.py parse reported failures (${log%.log}.kunit.txt)"
	fi
fi
