#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317  # the checks are called through check()
#
# Full-system guest (tools/testing/system.sh): quotas and pool names across
# user and ipc namespaces, made with the tools a user has. Debian's
# newuidmap (package uidmap) gives tester its subordinate uids
# (/etc/subuid: tester:100000:65536) in a user namespace of its own
# (unshare --map-auto); those uids together get no more pools and entries
# than tester's own quota, and other users keep working. Two containers
# (unshare --ipc --user) naming the same pool get two pools. A name
# squatted with --share-all is refused by --owned.
# Results on fd 3 as "ok namespaces.<case>" / "not ok namespaces.<case>: why".
user=tester
SUITE=namespaces
# shellcheck source=tests/system/result.bash
. "${UNIQD_SYSTEM_LIB:-/usr/local/lib/uniqd-system}/result.bash"
P=/sys/module/uniqd/parameters
work=$(mktemp -d)
chmod 1777 "$work"

# An earlier test may have unloaded it (security.sh's autoload check).
[ -d /sys/module/uniqd ] || modprobe uniqd
saved_pools=$(cat $P/max_user_pools)
saved_entries=$(cat $P/max_user_entries)
# The holds a check left behind, if it failed half-way.
stop_holds() {
	pkill -f 'uniqdctl.* hold' 2>/dev/null
	sleep 0.5
}
restore() {
	stop_holds
	echo "$saved_pools" > $P/max_user_pools
	echo "$saved_entries" > $P/max_user_entries
}
trap 'restore; rm -rf "$work"' EXIT

# CMD as root of a new user namespace of tester's that maps its
# subordinate uids 100000... to 0... (newuidmap, from /etc/subuid).
as_subuids() {
	as_user unshare --map-auto --setuid 0 --setgid 0 -- "$@"
}

# Waits (30 s at most) until every FILE has a line.
await() {
	local f _
	for _ in $(seq 150); do
		for f in "$@"; do [ -s "$f" ] || break; done
		[ -s "$f" ] && return 0
		sleep 0.2
	done
	echo "timed out waiting for $*"
	return 1
}

# The pools named NAME-PATTERN (an awk regex) that root sees: "id owner
# entries". uniqdctl quotes the name.
pools_named() {
	uniqdctl pools | awk -v re="$1" 'NR > 1 { n = $NF; gsub("\047", "", n) }
		NR > 1 && n ~ re { print $1, $2, $4 }'
}

# Another user, whose quota nothing here uses ("others keep working").
id other >/dev/null 2>&1 || useradd -m -u 1001 other
as_other() {
	setpriv --reuid=other --regid=other --init-groups env HOME=/home/other "$@"
}

have_tools() {
	command -v newuidmap && grep "^$user:" /etc/subuid
}
check tools have_tools

# Eight subordinate uids each try to hold a pool; tester may hold 3.
subuid_pools() {
	local d=$work/pools held refused owners u
	mkdir -m 1777 "$d"
	echo 3 > $P/max_user_pools
	# shellcheck disable=SC2016  # expanded in the namespace's shell
	as_subuids bash -c 'for u in 1 2 3 4 5 6 7 8; do
		setpriv --reuid=$u --regid=$u --clear-groups \
			uniqdctl hold sub-p$u --seconds 60 > "$1/$u" 2>&1 &
	done; wait' sh "$d" >/dev/null 2>&1 &
	await "$d"/{1,2,3,4,5,6,7,8} || return 1
	cat "$d"/*
	held=$(grep -l '^holding pool' "$d"/* | wc -l)
	refused=$(grep -l 'EDQUOT' "$d"/* | wc -l)
	pools_named '^sub-p'
	[ "$(pools_named '^sub-p' | wc -l)" -eq 3 ] || { echo "root sees no 3 pools sub-p*"; return 1; }
	owners=$(pools_named '^sub-p' | awk '{ print $2 }' | sort -u | tr '\n' ' ')
	for u in $owners; do
		if [ "$u" -le 100000 ] || [ "$u" -gt 100008 ]; then echo "a pool of uid $u"; return 1; fi
	done
	if [ "$held" -ne 3 ] || [ "$refused" -ne 5 ]; then
		echo "held $held and refused $refused, not 3 and 5"
		return 1
	fi
	# tester has used its quota through them; root has not.
	as_user uniqdctl -p tester-own intern a > "$d/tester" 2>&1
	grep -q EDQUOT "$d/tester" || { cat "$d/tester"; echo "tester itself got a pool"; return 1; }
	as_other uniqdctl -p other-own intern a || { echo "another user was refused"; return 1; }
	pkill -f 'uniqdctl hold sub-p'
	wait
	# Their pools are gone: tester has its quota back.
	as_user uniqdctl -p tester-own intern a || { echo "tester's quota did not come back"; return 1; }
}
check subuid.pools subuid_pools
stop_holds
echo "$saved_pools" > $P/max_user_pools

# Four subordinate uids intern 50 keys each into pools of their own;
# together they create 100 entries, tester's max_user_entries.
subuid_entries() {
	local d=$work/entries sum refused
	mkdir -m 1777 "$d"
	echo 100 > $P/max_user_entries
	# shellcheck disable=SC2016  # expanded in the namespace's shell
	as_subuids bash -c 'for u in 1 2 3 4; do
		setpriv --reuid=$u --regid=$u --clear-groups \
			uniqdctl hold sub-e$u --seconds 60 > "$1/hold$u" 2>&1 &
	done
	for u in 1 2 3 4; do
		until [ -s "$1/hold$u" ]; do sleep 0.1; done
		setpriv --reuid=$u --regid=$u --clear-groups \
			uniqdctl -p sub-e$u intern $(seq -f "k$u-%g" 50) > "$1/intern$u" 2>&1
	done
	echo done > "$1/done"; wait' sh "$d" >/dev/null 2>&1 &
	await "$d/done" || return 1
	cat "$d"/intern* | grep -v '  new  '
	pools_named '^sub-e'
	sum=$(pools_named '^sub-e' | awk '{ n += $3 } END { print n + 0 }')
	refused=$(grep -l EDQUOT "$d"/intern* | wc -l)
	[ "$sum" -eq 100 ] || { echo "the subordinate uids created $sum entries, not 100"; return 1; }
	[ "$refused" -eq 2 ] || { echo "$refused of 4 were refused, not 2"; return 1; }
	# Everyone else keeps working.
	as_other uniqdctl -p other-own intern $(seq -f "r-%g" 100) | grep -c '  new  ' |
		grep -qx 100 || { echo "another user could not intern 100 keys"; return 1; }
	pkill -f 'uniqdctl hold sub-e'
	wait
}
check subuid.entries subuid_entries
stop_holds
echo "$saved_entries" > $P/max_user_entries

# Two containers name the pool "build": each gets its own, neither sees
# the other's key, and the host's ipc namespace has no "build" at all.
containers() {
	local d=$work/containers c n ids
	mkdir -m 1777 "$d"
	for c in a b; do
		# shellcheck disable=SC2016  # expanded in the container's shell
		as_user unshare --ipc --user --map-root-user -- bash -c '
			uniqdctl hold build --seconds 60 > "$1/hold-$2" 2>&1 &
			hold=$!
			until [ -s "$1/hold-$2" ]; do sleep 0.1; done
			uniqdctl -p build intern shared "only-$2" > "$1/intern-$2" 2>&1
			until [ -e "$1/go" ]; do sleep 0.1; done
			other=$([ "$2" = a ] && echo b || echo a)
			uniqdctl -p build lookup "only-$other" > "$1/lookup-$2" 2>&1
			echo $? > "$1/rc-$2"
			kill $hold' sh "$d" "$c" >/dev/null 2>&1 &
	done
	await "$d/intern-a" "$d/intern-b" || return 1
	cat "$d"/intern-*
	pools_named '^build$'
	n=$(pools_named '^build$' | wc -l)
	ids=$(pools_named '^build$' | awk '{ print $1 }' | sort -u | wc -l)
	if [ "$n" -ne 2 ] || [ "$ids" -ne 2 ]; then
		echo "$n pools named build ($ids ids), not 2"
		return 1
	fi
	# The same key has a handle of another pool in each container.
	[ "$(awk '$3 == "\047shared\047" { print $1 }' "$d"/intern-* | sort -u | wc -l)" -eq 2 ] ||
		{ echo "both containers gave 'shared' one handle"; return 1; }
	if uniqdctl -p build lookup shared > "$d/host" 2>&1; then
		cat "$d/host"; echo "the host's namespace found a container's pool"; return 1
	fi
	grep -q ENOENT "$d/host" || { cat "$d/host"; return 1; }
	touch "$d/go"
	await "$d/rc-a" "$d/rc-b" || return 1
	wait
	cat "$d"/lookup-*
	# Exit status 1: the key is absent from this container's pool.
	if [ "$(cat "$d/rc-a")" != 1 ] || [ "$(cat "$d/rc-b")" != 1 ]; then
		echo "a container found the other's key"
		return 1
	fi
}
check containers.two-pools containers
stop_holds

# tester squats "default" (uniqdctl's default name) open to everyone;
# another user's --owned refuses it, and so does root's.
squatted() {
	local out
	as_user uniqdctl hold default --share-all --seconds 60 > "$work/squat" 2>&1 </dev/null &
	await "$work/squat" || return 1
	out=$(as_other uniqdctl --owned intern mine 2>&1) &&
		{ echo "$out"; echo "--owned joined tester's pool"; return 1; }
	echo "$out"
	grep -q EPERM <<< "$out" || return 1
	out=$(uniqdctl --owned intern mine 2>&1) && { echo "root's --owned joined it"; return 1; }
	grep -q EPERM <<< "$out" || { echo "$out"; return 1; }
	# Without --owned the pool is joined, as its owner asked (--share-all).
	as_other uniqdctl intern mine ||
		{ echo "another user could not join a --share-all pool"; return 1; }
	pkill -f 'uniqdctl hold default'
	wait
}
check owned.squatted squatted
stop_holds
