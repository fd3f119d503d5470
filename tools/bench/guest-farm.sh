#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench's part "farm", run as root in the host-userland guest
# (tools/testing/vm/hostfs-guest.sh; tools/testing/bench.sh starts it): the
# host's redis-server and the freshly built uniqd-farm and uniqdctl beside
# a loaded uniqd.ko. Three redis-server nodes in cluster mode on the guest's
# loopback, nothing persisted; two machines a and b, each an ipc namespace
# of its own (unshare --ipc) holding its pool "farm", as
# tests/system/farm.sh has them. A round, on an emptied cluster and new
# pools:
#
#   a: intern its list (uniqdctl intern, keys on stdin), push
#   b: intern its list, push (the overlap is in the cluster already)
#   a pulls b's, b pulls a's
#   c: a third machine, its pool empty, pulls a's
#
# Each step is one command, timed as a whole in the guest. CORPUS is a list
# of distinct identifiers, one a line (bench.sh makes it from the host's
# /usr/include/*.h, as farm.sh does): a takes the first 60 %, b the last
# 60 %, so a fifth of the corpus is in both.
#
#   guest-farm.sh BINDIR CORPUS ROUNDS
#
# Writes UBENCH lines (tools/bench/report.py, "Sharing across machines")
# to stdout and to $UNIQD_GUEST_OUT/farm.raw, "ok farm.CASE" / "not ok ..."
# on fd 3. Never judges speed: a case fails only when a step fails or the
# pools do not end up holding the whole corpus.
set -u
bin=$1 corpus=$2 rounds=$3
ctl=$bin/uniqdctl
farm=$bin/uniqd-farm
out=${UNIQD_GUEST_OUT:-/tmp}
raw=$out/farm.raw
ports=(7001 7002 7003)
work=$(mktemp -d)
res() { echo "$*" >&3; }
ub() { echo "UBENCH $*"; echo "UBENCH $*" >> "$raw"; }
say() { echo "farm: $*"; }
bad() { res "not ok farm.$1: $2"; ub "farm-error case=$1 what=$(echo "$2" | tr ' ' '_')"; }
declare -A hold
# Nothing persisted; the holds outlive every round.
farm_redis=(--cluster-node-timeout 5000 --appendonly no --save '')
farm_ctl=$ctl
farm_hold_secs=3600
# The nodes and the machines (cluster_start, machine, in_m): the set-up of
# the farm test, tests/system/farm.sh.
# shellcheck source=tests/system/farm-cluster.bash
. "$(dirname "$0")/../../tests/system/farm-cluster.bash"

: > "$raw"
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
	local m
	for m in "${!hold[@]}"; do kill "${hold[$m]}" 2>/dev/null; done
	cluster_stop
	rm -rf "$work"
}
trap cleanup EXIT

# ---- the cluster ------------------------------------------------------------
ip link set lo up || { bad loopback "cannot bring lo up"; exit 1; }
why=$(cluster_start "$out/cluster-create.log") || { bad cluster "$(echo "$why" | tail -n 1)"; exit 1; }
res "ok farm.cluster"

# ---- the corpus ---------------------------------------------------------------
n=$(wc -l < "$corpus")
head -n $((n * 6 / 10)) "$corpus" > "$work/list-a"
tail -n $((n * 6 / 10)) "$corpus" > "$work/list-b"
na=$(wc -l < "$work/list-a")
nb=$(wc -l < "$work/list-b")
bytes=$(awk '{ s += length($0) } END { print s }' "$corpus")
ub "farm-guest kernel=$(uname -r) cpus=$(nproc) mem_kb=$(awk '/MemTotal/ { print $2 }' /proc/meminfo)" \
	"redis=$(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') nodes=${#ports[@]}" \
	"corpus=$n corpus_bytes=$bytes a=$na b=$nb overlap=$((na + nb - n)) rounds=$rounds"

# ---- the machines -------------------------------------------------------------
machine_end() {
	kill "${hold[$1]}" 2>/dev/null
	wait "${hold[$1]}" 2>/dev/null
	unset "hold[$1]"
}
entries_of() {
	in_m "$1" "$ctl" -p farm stats | awk '$1 == "entries" { print $2 }'
}
now() { date +%s%N; }

# step ROUND MACHINE OP LOGNAME CMD...: run CMD in MACHINE's namespace,
# timed; its output in $work/LOGNAME. Non-zero when it failed.
step() {
	local r=$1 m=$2 op=$3 log=$work/$4 t0 t1 rc
	shift 4
	t0=$(now)
	in_m "$m" "$@" > "$log" 2>&1
	rc=$?
	t1=$(now)
	if [ "$rc" -ne 0 ]; then
		bad "$op.$m.$r" "exit $rc: $(tail -n 1 "$log")"
		return 1
	fi
	last_ns=$((t1 - t0))
}

fail=0
for r in $(seq 1 "$rounds"); do
	for p in "${ports[@]}"; do redis-cli -p "$p" flushall > /dev/null; done
	ok=1
	for m in a b c; do machine "$m" || { bad "machine.$m.$r" "no pool"; ok=; }; done
	[ -n "$ok" ] || { fail=1; break; }
	for m in a b; do
		l=$([ "$m" = a ] && echo "$na" || echo "$nb")
		if step "$r" "$m" intern "intern-$m" "$ctl" -p farm -c ident intern < "$work/list-$m"; then
			ub "farm round=$r machine=$m op=intern n=$l ns=$last_ns"
		else
			ok=
		fi
		# "pushed N entries of pool 'farm' as M (E of them already in the cluster), B bytes"
		if step "$r" "$m" push "push-$m" "$farm" -s 127.0.0.1:7001 -p farm push "$m"; then
			read -r pn pe pb < <(sed -n 's/^pushed \([0-9]*\) entries .*(\([0-9]*\) of them already.*), \([0-9]*\) bytes$/\1 \2 \3/p' "$work/push-$m")
			ub "farm round=$r machine=$m op=push n=${pn:-0} existed=${pe:-0} bytes=${pb:-0} ns=$last_ns"
		else
			ok=
		fi
	done
	# "pulled N entries of M's pool 'farm' (C new here), B bytes"
	for pair in a:b b:a c:a; do
		m=${pair%%:*} o=${pair#*:}
		op=pull
		[ "$m" = c ] && op=pull_empty
		if step "$r" "$m" "$op" "pull-$m" "$farm" -s 127.0.0.1:7002 -p farm pull "$o" "$work/map-$m"; then
			read -r qn qc qb < <(sed -n "s/^pulled \([0-9]*\) entries .*(\([0-9]*\) new here), \([0-9]*\) bytes\$/\1 \2 \3/p" "$work/pull-$m")
			ub "farm round=$r machine=$m op=$op from=$o n=${qn:-0} created=${qc:-0} bytes=${qb:-0} ns=$last_ns"
		else
			ok=
		fi
	done
	# Both hold the whole corpus, c a's list.
	for m in a b c; do
		want=$n
		[ "$m" = c ] && want=$na
		got=$(entries_of "$m")
		[ "${got:-0}" -eq "$want" ] || { bad "contents.$m.$r" "$m holds ${got:-?} entries, not $want"; ok=; }
	done
	for m in a b c; do machine_end "$m"; done
	if [ -n "$ok" ]; then
		res "ok farm.round$r"
	else
		fail=1
	fi
	say "round $r done"
done
cat "$raw"
exit "$fail"
