# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154  # work, ports, farm_redis: the sourcing script sets them
#
# The build farm's set-up, sourced by the farm test (tests/system/farm.sh,
# in the full-system guest) and the farm benchmark (tools/bench/guest-farm.sh,
# in the host-userland guest): Redis Cluster nodes on the guest's loopback
# and machines, each a pool "farm" held in an ipc namespace of its own.
#
# The sourcing script sets, before it calls these:
#   work            a directory of its own (the nodes' files, the holds' output)
#   ports           the nodes' ports, an array (7001 7002 7003)
#   hold            declare -A hold: the holding process of each machine
#   farm_redis      redis-server's options beyond port, cluster and log, an
#                   array (the node timeout, what is persisted)
#   farm_ctl        uniqdctl to run (default: uniqdctl on PATH)
#   farm_hold_secs  how long a machine's hold lasts (default 3600)

# Start the node on port $1 (its files in $work/redis-$1), daemonized.
node_start() {
	mkdir -p "$work/redis-$1"
	(cd "$work/redis-$1" && redis-server --port "$1" --bind 127.0.0.1 \
		--cluster-enabled yes --cluster-config-file nodes.conf \
		"${farm_redis[@]}" --daemonize yes --logfile redis.log)
}

# Wait (20 s at most) until every node answers PING.
nodes_up() {
	local p _ up
	for _ in $(seq 100); do
		up=0
		for p in "${ports[@]}"; do
			redis-cli -p "$p" ping 2>/dev/null | grep -q PONG && up=$((up + 1))
		done
		[ "$up" -eq ${#ports[@]} ] && return 0
		sleep 0.2
	done
	return 1
}

# Wait (60 s at most) until every node says the cluster is ok.
cluster_ok() {
	local p _ n
	for _ in $(seq 120); do
		n=0
		for p in "${ports[@]}"; do
			redis-cli -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' && n=$((n + 1))
		done
		[ "$n" -eq ${#ports[@]} ] && return 0
		sleep 0.5
	done
	echo "the cluster is not ok"
	return 1
}

# Start every node, make them one cluster (redis-cli's output in $1) and
# wait until it is ok; on failure, says which step failed.
cluster_start() {
	local log=$1 p addrs=()
	for p in "${ports[@]}"; do
		node_start "$p" || { echo "redis-server on port $p did not start"; return 1; }
		addrs+=("127.0.0.1:$p")
	done
	nodes_up || { echo "the nodes do not answer"; return 1; }
	redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes \
		> "$log" 2>&1 || { echo "redis-cli --cluster create failed ($log)"; return 1; }
	cluster_ok
}

# Shut every node down, nothing saved.
cluster_stop() {
	local p
	for p in "${ports[@]}"; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1; done
}

# Machine $1: a pool "farm" held in an ipc namespace of its own, its holder
# in hold[$1]; returns once the pool is held.
machine() {
	local _
	rm -f "$work/hold-$1"
	unshare --ipc "${farm_ctl:-uniqdctl}" hold farm --seconds "${farm_hold_secs:-3600}" \
		> "$work/hold-$1" 2>&1 &
	hold[$1]=$!
	for _ in $(seq 100); do
		grep -q '^holding' "$work/hold-$1" && return 0
		sleep 0.1
	done
	cat "$work/hold-$1"
	return 1
}

# Run the command "$@" (after the machine) in machine $1's namespace.
in_m() {
	local m=$1
	shift
	nsenter -t "${hold[$m]}" --ipc -- "$@"
}
