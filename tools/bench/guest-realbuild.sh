#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench's part "realbuild", run as root in the host-userland guest
# (tools/testing/vm/hostfs-guest.sh: the host's own gcc and make beside a
# loaded uniqd.ko; tools/testing/bench.sh starts it). A real project, a
# Debian source package (busybox), is copied to a tmpfs, configured with
# `make defconfig`, then built as the unprivileged user $UNIQD_GUEST_USER at
# -jJOBS in each MODE in turn, A B C A B C ... for ROUNDS rounds, with
# `make clean` before every build:
#
#   plain     gcc alone (no plugin)
#   uniqd     the GCC plugin interning into the pool "rbenchR" (one fresh
#             pool per round R, held by `uniqdctl hold` for the round)
#   private   the same plugin with -fplugin-arg-uniqd-table=private: the
#             same work, each compiler process's own table
#   none      (optional) the plugin with table=none: every key built,
#             nothing interned
#
#   guest-realbuild.sh TOP SRC TARGETS ROUNDS JOBS MODES
#
# TOP: the uniqd tree (build/ made); SRC: the unpacked source tree (read
# only); TARGETS: make's goals, comma-separated ("libbb/,coreutils/"; "all"
# or "-": the whole `make`); MODES: comma-separated. Writes UBENCH lines
# (tools/bench/report.py, "A real build with the GCC plugin") to stdout and
# to $UNIQD_GUEST_OUT/realbuild.raw, the build logs and the plugin's stats
# files beside it, and "ok realbuild.CASE" / "not ok ..." on fd 3.
set -u
top=$1 src=$2 targets=$3 rounds=$4 jobs=$5 modes=$6
plugin=${UNIQD_PLUGIN:-$top/build/gcc-plugin/uniqd.so}
ctl=$top/build/bin/uniqdctl
user=${UNIQD_GUEST_USER:?}
home=/home/$user
out=${UNIQD_GUEST_OUT:-/tmp}
raw=$out/realbuild.raw
res() { echo "$*" >&3; }
ub() { echo "UBENCH $*"; echo "UBENCH $*" >> "$raw"; }
as_user() { setpriv --reuid="$user" --regid="$user" --init-groups env HOME="$home" USER="$user" "$@"; }
say() { echo "realbuild: $*"; }
fail=0
bad() { res "not ok realbuild.$1: $2"; ub "realbuild-error case=$1 what=$(echo "$2" | tr ' ' '_')"; fail=1; }

: > "$raw"
goals=()
case $targets in all|-|'') ;; *) IFS=, read -r -a goals <<< "$targets" ;; esac
IFS=, read -r -a mlist <<< "$modes"

# The tree in a tmpfs of its own (the overlay's upper layer is one too, but
# this one is sized and emptied explicitly).
w=$home/rb
mkdir -p "$w"
mount -t tmpfs -o size=1200m,mode=0755 rbench "$w" || { bad tmpfs "cannot mount a tmpfs on $w"; exit 1; }
if ! cp -a "$src" "$w/src" || ! chown -R "$user:" "$w"; then
	bad copy "cannot copy $src"
	exit 1
fi
cd "$w/src" || exit 1
[ -x "$plugin" ] || [ -f "$plugin" ] || { bad plugin "no $plugin"; exit 1; }
ub "realbuild-guest kernel=$(uname -r) cpus=$(nproc) mem_kb=$(awk '/MemTotal/ { print $2 }' /proc/meminfo)" \
	"project=$(basename "$src") targets=${targets:-all} rounds=$rounds jobs=$jobs modes=$modes" \
	"gcc=$(gcc -dumpfullversion)"

say "make defconfig in $w/src ($(basename "$src"))"
if as_user make defconfig > "$out/defconfig.log" 2>&1; then
	res "ok realbuild.defconfig"
else
	bad defconfig "make defconfig failed (see defconfig.log)"
	exit 1
fi

# The private table's bytes: the plugin's stats lines count keys, not bytes.
# What tools/gcc-plugin/table.cc holds at least, from a unit's count of new
# keys n: its slots (16 bytes each, 1024 doubling while at least half full)
# and its entry records (24 bytes each, id 0 included), without the keys'
# own bytes, which nothing reports.
sum_stats() {
	awk '
	{ n++; for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] += kv[2] }
	  c = 0; for (i = 2; i <= NF; i++) if ($i ~ /^created=/) { split($i, kv, "="); c = kv[2] }
	  slots = 1024; for (e = 1; e <= c; e++) if (2 * e >= slots) slots *= 2
	  min += slots * 16 + (c + 1) * 24 }
	END { printf "units=%d interns=%d cached=%d mapped=%d syscalls=%d created=%d private_min_bytes=%d\n",
	      n, s["interns"], s["cached"], s["mapped"], s["syscalls"], s["created"], min }' "$1"
}

holder=
for r in $(seq 1 "$rounds"); do
	pool=rbench$r
	# A fresh pool per round, alive while its holder runs.
	as_user "$ctl" --pool "$pool" --new hold &
	holder=$!
	for _ in $(seq 100); do
		as_user "$ctl" --pool "$pool" --existing stats >/dev/null 2>&1 && break
		sleep 0.2
	done
	for m in "${mlist[@]}"; do
		st=$w/stats.$m.$r
		rm -f "$st"
		case $m in
		plain) cc=gcc ;;
		uniqd|private|none)
			cc="gcc -fplugin=$plugin -fplugin-arg-uniqd-pool=$pool -fplugin-arg-uniqd-table=$m -fplugin-arg-uniqd-stats=$st" ;;
		*) bad "mode-$m" "unknown mode"; continue ;;
		esac
		as_user make clean > /dev/null 2>&1
		sync
		log=$out/build.$m.$r.log
		say "round $r, $m: make -j$jobs ${goals[*]:-}"
		t0=$(date +%s%N)
		as_user make -j"$jobs" CC="$cc" "${goals[@]}" > "$log" 2>&1
		rc=$?
		t1=$(date +%s%N)
		ns=$((t1 - t0))
		objs=$(find . -name '*.o' | wc -l)
		line="realbuild mode=$m round=$r ns=$ns rc=$rc objs=$objs"
		if [ "$m" != plain ]; then
			if [ -s "$st" ]; then
				line="$line $(sum_stats "$st")"
				cp "$st" "$out/"
			else
				line="$line units=0"
			fi
			# The plugin says so on stderr when it compiles without uniqd.
			if grep -q -e '^uniqd plugin:' -e 'cannot load plugin' "$log"; then
				bad "plugin-$m.$r" "$(grep -m1 -e '^uniqd plugin:' -e 'cannot load plugin' "$log")"
			fi
		fi
		ub "$line"
		say "  $(awk -v ns="$ns" 'BEGIN { printf "%.2f s", ns / 1e9 }'), exit status $rc"
		[ "$rc" -eq 0 ] || bad "build-$m.$r" "make exited $rc (see build.$m.$r.log)"
		if [ "$m" = uniqd ]; then
			js=$(as_user "$ctl" --pool "$pool" --existing stats --json 2>&1)
			echo "$js" > "$out/pool.$r.json"
			kv=$(echo "$js" | tr -d '{}"' | tr ',' '\n' |
				awk -F: '$1 ~ /^(entries|bytes|arena_bytes|table_bytes|table_slots|classes)$/ { printf " %s=%s", $1, $2 }')
			if [ -n "$kv" ]; then
				ub "realbuild-pool round=$r pool=$pool$kv"
			else
				bad "pool-stats.$r" "uniqdctl stats: $js"
			fi
		fi
	done
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	holder=
done
cd /
umount "$w" 2>/dev/null
[ "$fail" -eq 0 ] && res "ok realbuild.runs"
exit 0
