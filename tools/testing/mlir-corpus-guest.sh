#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The MLIR plugin on a slice of LLVM 19's own MLIR tests, against the
# module: run as root by the host-userland guest (vm/hostfs-guest.sh: the
# host's mlir-opt-19 beside a loaded uniqd.ko; check.sh starts it), every
# mlir-opt-19 process as the unprivileged $UNIQD_GUEST_USER, two at a time,
# all of them interning into one pool that user holds. Checks:
#
#   run               every file of the slice runs with the plugin's two
#                     passes (table=uniqd) and without them, exit 0
#   output-identical  and prints the same bytes either way
#   stats             every intern answered once (cached + mapped +
#                     syscalls = interns), none skipped, and some answered
#                     without a system call
#   handles-one-to-one, resolve   (mlir_corpus.py verify) over every log:
#                     equal (class, content) has one handle and a handle
#                     one (class, content), and RESOLVE in the pool gives
#                     back each logged class and content; under
#                     key=printed (the content is MLIR's printed form) and
#                     under key=handles, in a second pool
#   keys-agree        both keys make as many entries of each class: equal
#                     handles exactly where the printed forms are equal
#   symbols-planted   tests/mlir's planted declaration/definition
#                     mismatch: `uniqdctl symbols` exits 1 with a
#                     file:line: error: line naming it
#   symbols-clean     a clean pair: exit 0
#
#   mlir-corpus-guest.sh TOP CORPUS LIST
#
# TOP: the uniqd tree (build/ made); CORPUS: mlir_corpus.py prepare's
# directory; LIST: the slice (mlir_corpus.py slice), one path a line.
# Results on fd 3 ("ok mlir-corpus.CASE" / "not ok mlir-corpus.CASE: why");
# the runs' files stay in $UNIQD_GUEST_OUT/mlir-corpus for the host.
set -u
top=$1 corpus=$2 list=$3
user=${UNIQD_GUEST_USER:?}
out=${UNIQD_GUEST_OUT:-/tmp}/mlir-corpus
res() { echo "$*" >&3; }
ok() { res "ok mlir-corpus.$1"; }
bad() { res "not ok mlir-corpus.$1: $2"; }

# The user may not enter TOP (a checkout under /root): it runs copies.
. "$top/tools/testing/vm/hostfs-lib.bash"
s=/run/uniqd-mlir
hostfs_stage "$s" "$top/build/mlir/uniqd-mlir.so" "$top/build/bin/uniqdctl" \
	"$top/tools/testing/mlir_corpus.py" "$top/tests/mlir" "$list" ||
	{ bad stage "cannot copy the plugin, uniqdctl and tests/mlir"; exit 1; }
ctl=$s/uniqdctl
py() { /usr/bin/python3 "$s/mlir_corpus.py" "$@"; }
rm -rf "$out" && install -d -o "$user" "$out" || exit 1
echo "mlir-corpus: $(wc -l < "$list") files of $corpus, mlir-opt-19 $(mlir-opt-19 --version | sed -n 's/.*version //p' | head -n 1)"

trap 'kill "${HOSTFS_HOLDERS[@]}" 2>/dev/null; wait' EXIT
hold() { hostfs_hold "$ctl" "$1"; }
hold mc && hold mch || { bad hold "cannot hold the pools mc and mch"; exit 1; }

# key=printed into mc, and without the plugin; then key=handles into mch.
py run --corpus "$corpus" --files "$s/$(basename "$list")" --modes plain,uniqd \
	--plugin "$s/uniqd-mlir.so" --pool mc --user "$user" --log --out "$out/printed" \
	> "$out/printed.ub"
rc=$?
py run --corpus "$corpus" --files "$s/$(basename "$list")" --modes uniqd --key handles \
	--plugin "$s/uniqd-mlir.so" --pool mch --user "$user" --log --out "$out/handles" \
	> "$out/handles.ub"
rc2=$?
cat "$out/printed.ub" "$out/handles.ub"
if [ "$rc" = 0 ] && [ "$rc2" = 0 ] && grep -q 'mode=uniqd files=[1-9]' "$out/printed.ub"; then
	ok run
else
	bad run "exit $rc/$rc2: $(grep -m 1 mlir-corpus-fail "$out/printed.ub" "$out/handles.ub")"
fi

n=$(wc -l < "$list") diff=0
for i in $(seq 0 $((n - 1))); do
	cmp -s "$out/printed/plain/$i.out" "$out/printed/uniqd/$i.out" || diff=$((diff + 1))
done
if [ "$n" -gt 0 ] && [ "$diff" = 0 ]; then
	ok output-identical
else
	bad output-identical "$diff of $n files print differently with the passes"
fi

st=$(grep 'mode=uniqd ' "$out/printed.ub")
v() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<< "$st"; }
if [ -n "$st" ] && [ "$(v interns)" -gt 0 ] && [ "$(v skipped)" = 0 ] &&
   [ $(($(v cached) + $(v mapped) + $(v syscalls))) = "$(v interns)" ] &&
   [ $(($(v cached) + $(v mapped))) -gt 0 ]; then
	ok stats
else
	bad stats "${st:-no stats line}"
fi

py verify --name mlir-corpus.printed --ctl "$ctl" --pool mc --user "$user" \
	"$out"/printed/uniqd/*.log >&3
py verify --name mlir-corpus.handles --ctl "$ctl" --pool mch --user "$user" \
	"$out"/handles/uniqd/*.log >&3

# Entries per class in each pool: the same, when equal handles are exactly
# equal printed forms under both keys.
classes() { as_user "$ctl" --pool "$1" classes | awk 'NR > 1 { print $3, $2 }' | sort; }
a=$(classes mc) b=$(classes mch)
if [ -n "$a" ] && [ "$a" = "$b" ]; then
	ok keys-agree
else
	bad keys-agree "$(diff <(echo "$a") <(echo "$b") | grep '^[<>]' | head -n 2 | tr '\n' ' ')"
fi

# The symbol check on tests/mlir's planted pair, and on a clean pair.
cd "$s/mlir" || exit 1
sym() {
	local pool=$1
	shift
	hold "$pool" || return 1
	for f in "$@"; do
		as_user mlir-opt-19 --load-pass-plugin="$s/uniqd-mlir.so" \
			--pass-pipeline="builtin.module(uniqd-symbols{pool=$pool})" "$f" -o /dev/null || return 1
	done
	as_user "$ctl" --pool "$pool" symbols > "$out/$pool.txt" 2>&1
}
sym msbad def.mlir use_bad.mlir
rc=$?
if [ "$rc" = 1 ] && [ "$(grep -c ': error: ' "$out/msbad.txt")" = 1 ] &&
   grep -qx "use_bad.mlir:3: error: 'ext' is declared here with type (i64) -> i64, but def.mlir:3 defines it with type (i32) -> i32" \
	"$out/msbad.txt"; then
	ok symbols-planted
else
	bad symbols-planted "exit $rc: $(head -n 2 "$out/msbad.txt" | tr '\n' ' ')"
fi
sym msgood def.mlir use_good.mlir
rc=$?
if [ "$rc" = 0 ] && grep -qx 'no symbol has more than one type; 3 symbols, 2 modules checked' "$out/msgood.txt"; then
	ok symbols-clean
else
	bad symbols-clean "exit $rc: $(head -n 2 "$out/msgood.txt" | tr '\n' ' ')"
fi
exit 0
