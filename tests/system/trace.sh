#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317  # the checks are called through check()
#
# Full-system guest (tools/testing/system.sh): Documentation/admin.rst's
# recipe for watching uniqd, run as written there with Debian's perf:
# `perf record -e 'uniqd:*' -a` around a job of the unprivileged user
# tester (a pool of three entries that refuses a fourth), then `perf
# script`; every event of the pool's life is in it, with tester's uid and
# no kernel address. `perf stat` counts the same job. The events are for
# root only: tester can neither read tracefs nor open the tracepoints.
# Results on fd 3 as "ok trace.<case>" / "not ok trace.<case>: why".
user=tester
SUITE=trace
# shellcheck source=tests/system/result.bash
. "${UNIQD_SYSTEM_LIB:-/usr/local/lib/uniqd-system}/result.bash"
uid=$(id -u "$user")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# An earlier test may have unloaded it (security.sh's autoload check).
[ -d /sys/module/uniqd ] || modprobe uniqd

listed() {
	local n
	n=$(perf list 'uniqd:*' 2>&1 | grep -c 'uniqd:uniqd_.*\[Tracepoint event\]')
	perf list 'uniqd:*' 2>&1 | grep 'uniqd:'
	[ "$n" -eq 8 ] || { echo "perf lists $n uniqd tracepoints, not 8"; return 1; }
}
check listed listed

# The job: three keys go in, the fourth is refused (max_entries 3).
cat > "$work/job.sh" <<EOF
exec setpriv --reuid=$user --regid=$user --init-groups \\
	uniqdctl --pool trace-demo --new --max-entries 3 intern a b c d
EOF

recorded() {
	perf record -q -e 'uniqd:*' -a -o "$work/uniqd.data" -- \
		bash "$work/job.sh" >"$work/job.out" 2>&1
	perf script -i "$work/uniqd.data" -F comm,pid,event,trace >"$work/script.txt" 2>"$work/script.err" ||
		{ cat "$work/script.err"; return 1; }
	cat "$work/script.txt"
	grep -q 'EDQUOT\|Disk quota' "$work/job.out" || { cat "$work/job.out"; echo "the fourth key was not refused"; return 1; }
	pool=$(sed -n 's/.*uniqd_pool_create: pool=\([0-9]*\) name=trace-demo .*/\1/p' "$work/script.txt")
	[ -n "$pool" ] || { echo "no uniqd_pool_create of trace-demo"; return 1; }
	local want=(
		"uniqd_pool_create: pool=$pool name=trace-demo owner=$uid mode=0x0 .* max_entries=3 "
		"uniqd_attach: pool=$pool uid=$uid created=1$"
		"uniqd_index_grow: pool=$pool slots=0->"
		"uniqd_refuse: pool=$pool uid=$uid limit=max_entries err=-122$"
		"uniqd_detach: pool=$pool uid=$uid$"
		"uniqd_pool_destroy: pool=$pool entries=3 "
	) w
	for w in "${want[@]}"; do
		grep -q "$w" "$work/script.txt" || { echo "missing: $w"; return 1; }
	done
	n=$(grep -c "uniqd_entry_create: pool=$pool handle=0x" "$work/script.txt")
	[ "$n" -eq 3 ] || { echo "$n uniqd_entry_create, not 3"; return 1; }
	# Pool ids and handles, never an address (0xffff...).
	! grep -q '0xffff[0-9a-f]\{12\}' "$work/script.txt" || { echo "a kernel address in the events"; return 1; }
}
check perf-record recorded

counted() {
	perf stat -x, -e uniqd:uniqd_entry_create,uniqd:uniqd_refuse -a -- \
		bash "$work/job.sh" >/dev/null 2>"$work/stat.txt"
	cat "$work/stat.txt"
	grep -q '^3,,uniqd:uniqd_entry_create' "$work/stat.txt" &&
		grep -q '^1,,uniqd:uniqd_refuse' "$work/stat.txt"
}
check perf-stat counted

root_only() {
	if as_user cat /sys/kernel/tracing/trace >/dev/null 2>&1; then
		echo "tester reads /sys/kernel/tracing/trace"
		return 1
	fi
	if as_user perf stat -e uniqd:uniqd_entry_create -- true >/dev/null 2>&1; then
		echo "tester opens the uniqd tracepoints"
		return 1
	fi
	echo "tester: no tracefs, no tracepoints (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid))"
}
check root-only root_only
exit 0
