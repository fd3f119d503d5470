#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench's part "mlir", run as root in the host-userland guest
# (tools/testing/vm/hostfs-guest.sh: the host's mlir-opt-19 beside a loaded
# uniqd.ko; tools/testing/bench.sh starts it): the MLIR plugin over the
# whole of LLVM 19's MLIR test corpus (tools/testing/mlir_corpus.py), one
# mlir-opt-19 process a file as the unprivileged $UNIQD_GUEST_USER, JOBS at
# a time, in the modes plain (no plugin), none, private and uniqd (the
# plugin's table=), taking turns every few files (mlir_corpus.py run), all
# of uniqd's processes interning into one pool that user holds. Then, not
# timed, the corpus once more with table=uniqd and logs into a fresh pool,
# and mlir_corpus.py verify over every log: equal (class, content) has one
# handle and a handle one (class, content) in every process, and RESOLVE
# gives each back.
#
#   guest-mlir.sh TOP CORPUS LIST JOBS
#
# Writes UBENCH lines (tools/bench/report.py, "The MLIR plugin on LLVM's
# MLIR tests") to stdout and $UNIQD_GUEST_OUT/mlir.raw: mlir-guest, one
# mlir-corpus line per mode, mlir-pool (the pool's stats), mlir-verify; and
# "ok mlir.CASE" / "not ok ..." on fd 3.
set -u
top=$1 corpus=$2 list=$3 jobs=$4
user=${UNIQD_GUEST_USER:?}
out=${UNIQD_GUEST_OUT:-/tmp}
raw=$out/mlir.raw
res() { echo "$*" >&3; }
ub() { echo "UBENCH $*"; echo "UBENCH $*" >> "$raw"; }
bad() { res "not ok mlir.$1: $2"; ub "mlir-error case=$1 what=$(echo "$2" | tr ' ' '_')"; }

: > "$raw"
. "$top/tools/testing/vm/hostfs-lib.bash"
s=/run/uniqd-mlir
hostfs_stage "$s" "$top/build/mlir/uniqd-mlir.so" "$top/build/bin/uniqdctl" \
	"$top/tools/testing/mlir_corpus.py" "$list" || { bad stage "cannot copy the plugin and uniqdctl"; exit 1; }
ctl=$s/uniqdctl files=$s/$(basename "$list")
w=/tmp/mlir-bench
mount -t tmpfs -o size=1500m,mode=0755 mlirbench "$w" 2>/dev/null || mkdir -p "$w"
ub "mlir-guest kernel=$(uname -r) cpus=$(nproc) files=$(wc -l < "$files") jobs=$jobs" \
	"opt=$(mlir-opt-19 --version | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -n 1)"

trap 'kill "${HOSTFS_HOLDERS[@]}" 2>/dev/null; wait' EXIT
hold() { hostfs_hold "$ctl" "$1"; }
# The pool's entries and memory, from `uniqdctl pools --json` (map_bytes:
# the mapping's pages, records among them; table_bytes: the kernel-only
# tables).
pool_stats() {
	local kv
	kv=$(as_user "$ctl" pools --json | /usr/bin/python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p["name"] == sys.argv[1]:
        print(" ".join("%s=%s" % (k, p[k]) for k in
              ("entries", "bytes", "arena_bytes", "table_bytes", "map_bytes")))' "$1")
	[ -n "$kv" ] && ub "mlir-pool pool=$1 $kv" || bad "pool-stats" "uniqdctl pools: no pool $1"
}

hold mbench || { bad hold "cannot hold the pool mbench"; exit 1; }
/usr/bin/python3 "$s/mlir_corpus.py" run --corpus "$corpus" --files "$files" \
	--modes plain,none,private,uniqd --chunk 4 --plugin "$s/uniqd-mlir.so" --pool mbench \
	--user "$user" --jobs "$jobs" --out "$w/timed" > "$w/timed.ub"
rc=$?
grep '^UBENCH ' "$w/timed.ub" | sed 's/^UBENCH //' | while read -r l; do ub "$l"; done
[ "$rc" = 0 ] && res "ok mlir.runs" || bad runs "a file failed (mlir-corpus-fail lines)"
pool_stats mbench

hold mverify || { bad hold "cannot hold the pool mverify"; exit 1; }
/usr/bin/python3 "$s/mlir_corpus.py" run --corpus "$corpus" --files "$files" --modes uniqd \
	--plugin "$s/uniqd-mlir.so" --pool mverify --user "$user" --jobs "$jobs" --log \
	--out "$w/logged" > "$w/logged.ub" || bad logged-run "$(grep -m 1 mlir-corpus-fail "$w/logged.ub")"
/usr/bin/python3 "$s/mlir_corpus.py" verify --name mlir.corpus --ctl "$ctl" --pool mverify \
	--user "$user" "$w"/logged/uniqd/*.log > "$w/verify.txt" 2> "$w/verify.err"
cat "$w/verify.txt" >&3
ub "mlir-verify ok=$(grep -c '^ok ' "$w/verify.txt") failed=$(grep -c '^not ok ' "$w/verify.txt")" \
	"$(sed -n 's/^# mlir.corpus: \([0-9]*\) log lines, \([0-9]*\) handles/lines=\1 handles=\2/p' "$w/verify.err")"
# The symbol census: LLVM's tests declare symbols with other types in other
# files on purpose, so mismatches are a count, not a failure.
as_user "$ctl" --pool mbench symbols > "$out/mlir-symbols.txt" 2>&1
ub "mlir-symbols status=$? $(tail -n 1 "$out/mlir-symbols.txt" | tr -d ';,' |
	awk '{ printf "mismatched=%s symbols=%s modules=%s", ($1 == "no" ? 0 : $1), $(NF-4), $(NF-2) }')"
cd /
umount "$w" 2>/dev/null
exit 0
