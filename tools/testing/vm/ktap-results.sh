#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn the KTAP that uniqd's KUnit suites printed into the console into
# result lines, one per test case:
#
#   ok NAME:kunit.<suite>.<case>
#   not ok NAME:kunit.<suite>.<case>: failed (see LOG)
#   skip NAME:kunit.<suite>.<case>: <reason>
#
# plus "not ok NAME:kunit.<suite>: ..." when a suite did not report all its
# cases (suite_init failed, or the kernel died in the middle), and one
# "NAME:kunit.parse" verdict from kunit.py parse, the kernel's reference
# parser, when the unpacked kernel source is at hand.
#
#   ktap-results.sh NAME CONSOLE.LOG
#
# The console holds kernel timestamps and other messages between the KTAP
# lines. A kernel with KUnit but no built-in suites prints an empty report
# ("KTAP version 1", "1..0") at boot; the module's report starts at the last
# top-level "KTAP version 1" before the first "# Subtest: uniqd" suite.
# Levels are told apart by indentation: suites at 0, cases at 4, the
# parameters of a parameterised case at 8 (those are not counted: each case
# is one result).
name=$1 log=$2
ktap=${log%.log}.ktap
kunit_txt=${log%.log}.kunit.txt

# The module's report, timestamps and all, from its header to the end.
start=$(tr -d '\r' < "$log" | awk '
	/^(\[ *[0-9.]+\] )?KTAP version 1$/ { top = NR }
	/^(\[ *[0-9.]+\] )?    # Subtest: uniqd/ { print top ? top : NR; exit }')
if [ -z "$start" ]; then
	echo "not ok $name:kunit.report: no KTAP from uniqd's suites in $log"
	exit 0
fi
tr -d '\r' < "$log" | tail -n +"$start" > "$ktap"

sed -E 's/^\[ *[0-9.]+\] //' "$ktap" |
	awk -v n="$name" -v logf="$log" '
	function close_suite(how) {
		if (suite == "")
			return
		if (how != "")
			print "not ok " n ":kunit." suite ": " how " (see " logf ")"
		else if (plan >= 0 && cases < plan)
			print "not ok " n ":kunit." suite ": " cases " of " plan \
			      " cases reported (see " logf ")"
		else if (failed && !cases)
			print "not ok " n ":kunit." suite ": failed (see " logf ")"
		suite = ""
	}
	/^1\.\.[0-9]+$/ && !toplan_seen { toplan = substr($0, 4) + 0; toplan_seen = 1; next }
	/^    # Subtest: / {
		close_suite("no result line")
		suite = substr($0, 16); plan = -1; cases = 0; failed = 0; suites++
		next
	}
	/^    1\.\.[0-9]+$/ && suite != "" { plan = substr($0, 8) + 0; next }
	/^    (not )?ok [0-9]+ / && suite != "" {
		line = substr($0, 5)
		ok = (line !~ /^not ok/)
		sub(/^(not )?ok [0-9]+ /, "", line)
		why = ""
		if (match(line, / # SKIP/)) {
			why = substr(line, RSTART + 7); sub(/^ +/, "", why)
			line = substr(line, 1, RSTART - 1)
		}
		cases++
		if (why != "" || line ~ / # SKIP$/) {
			sub(/ # SKIP$/, "", line)
			print "skip " n ":kunit." suite "." line ": " (why != "" ? why : "skipped")
		} else if (ok) {
			print "ok " n ":kunit." suite "." line
		} else {
			print "not ok " n ":kunit." suite "." line ": failed (see " logf ")"
		}
		next
	}
	/^(not )?ok [0-9]+ / {
		failed = ($0 ~ /^not ok/)
		if (suite != "") {
			close_suite("")
		} else {
			# No "# Subtest:" header: suite_init failed, say.
			suites++
			line = $0; sub(/^(not )?ok [0-9]+ /, "", line); sub(/ *#.*/, "", line)
			if (failed)
				print "not ok " n ":kunit." line ": failed before its cases (see " logf ")"
		}
	}
	END {
		close_suite("no result line: the kernel stopped in this suite?")
		if (toplan_seen && suites < toplan)
			print "not ok " n ":kunit.suites: " suites " of " toplan \
			      " suites reported (see " logf ")"
	}'

# The reference parser judges the whole report: plans, nesting, totals.
kunitpy=$(ls -d "${UNIQD_CACHE:-/var/cache/uniqd}"/linux-source-6.12*/tools/testing/kunit/kunit.py 2>/dev/null | head -n 1)
if [ -z "$kunitpy" ]; then
	echo "skip $name:kunit.parse: no kunit.py (the debug kernel's source is not unpacked)"
elif python3 "$kunitpy" parse "$ktap" > "$kunit_txt" 2>&1; then
	echo "ok $name:kunit.parse"
else
	echo "not ok $name:kunit.parse: $(grep -m1 -E 'Testing complete|ERROR' "$kunit_txt" | sed -E 's/^\[[0-9:]+\] //') (see $kunit_txt)"
fi
