#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The MLIR plugin natively (no kernel needed): runs Debian's mlir-opt-19 with
# --load-pass-plugin=build/mlir/uniqd-mlir.so on tests/mlir/ and checks that
# it loads with one copy of MLIR, that equal printed forms get equal handles
# and different ones different handles (across processes, under both keys),
# that mlir-opt's output is byte-identical with the passes and without (every
# table, no device, bad arguments: one warning, exit 0), the stats; the
# uniqd table on the fake device of the native tests (a pool that fills up, a
# missing pool); and the symbol check on the logs (build/native/symbols_replay
# runs uniqdctl symbols' code): a planted declaration/definition mismatch
# (exit 1, file:line: error:), a clean pair (0), llvm.func, local
# definitions, JSON. One result line per check:
#
#   ok host:mlir.<check>
#   not ok host:mlir.<check>: why
#
#   tools/testing/mlir-check.sh [--keep]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
keep=
[ "${1:-}" = --keep ] && keep=1
plugin=$top/build/mlir/uniqd-mlir.so
fake=$top/build/mlir/uniqd-mlir-fake.so
replay=$top/build/native/symbols_replay
opt=${MLIR_OPT:-mlir-opt-19}
src=$top/tests/mlir
work=$(mktemp -d /tmp/uniqd-mlir-check.XXXXXX)
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
failed=0
ok() { echo "ok host:mlir.$1"; }
bad() { echo "not ok host:mlir.$1: $2"; failed=1; }
warning_re='^uniqd mlir plugin: .*; running without uniqd$'

if ! command -v "$opt" >/dev/null || [ ! -f "$plugin" ] || [ ! -f "$fake" ] || [ ! -x "$replay" ]; then
	bad build "no $opt, $plugin, its fake-device twin or $replay (tools/deps.sh; make userspace)"
	exit 1
fi
ok build

# mlir-opt looks up one symbol; libuniqd, the C++ library's instances and
# the plugin's own code stay hidden. Nothing of MLIR or LLVM is linked, and
# no run path recorded: the host's one copy serves (two copies would be two
# TypeID spaces).
exports=$(nm -D --defined-only "$plugin" | awk '{print $3}')
dyn=$(readelf -d "$plugin" | grep -E '\((NEEDED|RPATH|RUNPATH)\)' | grep -iE 'mlir|llvm|path' | tr -s ' ' | tr '\n' ' ')
if [ "$exports" = mlirGetPassPluginInfo ] && [ -z "$dyn" ]; then
	ok exports
else
	bad exports "exports: $(head -n 3 <<<"$exports" | tr '\n' ' '); $dyn"
fi

cd "$src" || exit 1

# run PASSES FILE [MLIR-OPT ARGS...]: the pipeline of the plugin's passes,
# stdout to $work/out, stderr to $work/err.
run() {
	local passes=$1
	shift
	"$opt" --load-pass-plugin="$plugin" --pass-pipeline="builtin.module($passes)" "$@" \
		>"$work/out" 2>"$work/err"
}

# Loading, and the passes in the registry.
"$opt" --load-pass-plugin="$plugin" --help >"$work/help" 2>&1
if run "uniqd-intern{table=none},uniqd-symbols{table=none}" def.mlir && [ ! -s "$work/err" ] &&
   grep -q -- '--uniqd-intern ' "$work/help" && grep -q -- '--uniqd-symbols ' "$work/help"; then
	ok load
else
	bad load "status $?: $(head -n 2 "$work/err" | tr '\n' ' ')"
fi

# ---- keys: equal printed forms, equal handles ----------------------------------------
# Each file in its own process (table=private, whose handles are the
# process's own); the logs replayed into one pool, as a uniqd pool would
# hold them. key=printed interns MLIR's printed form; key=handles names
# sub-elements by their handles, and --dump puts their printed forms back.
inputs="types.mlir types_alias.mlir def.mlir use_good.mlir llvm_def.mlir split.mlir"
keyfail=
for k in printed handles; do
	for f in $inputs; do
		run "uniqd-intern{table=private key=$k log=$work/$f.$k.log stats=$work/$k.stats},uniqd-symbols{table=private key=$k log=$work/$f.$k.log}" \
			--split-input-file "$f" || keyfail+=" $f/$k($(head -n 1 "$work/err"))"
	done
	"$replay" --dump "$work"/*."$k".log | grep -v '	mlir\.symbol	' | cut -f2- | sort >"$work/$k.pool"
done
# One entry a printed form, under both keys, and the same printed forms.
n=$(wc -l <"$work/printed.pool")
if [ -z "$keyfail" ] && [ "$n" -gt 150 ] && [ "$(sort -u "$work/printed.pool" | wc -l)" = "$n" ] &&
   [ "$(sort -u "$work/handles.pool" | wc -l)" = "$n" ] &&
   cmp -s "$work/printed.pool" "$work/handles.pool"; then
	ok keys.equal-printed-equal-handles
else
	bad keys.equal-printed-equal-handles "$n entries;$keyfail $(diff "$work/printed.pool" "$work/handles.pool" | head -n 2 | tr '\n' ' ')"
fi
# Spelled otherwise (aliases, the generic form, hex floats): one entry each;
# alike but different: one each too.
missing=
while IFS= read -r want; do
	c=$(grep -cxF -- "$want" "$work/handles.pool")
	[ "$c" = 1 ] || missing+=" [$want: $c]"
done <<'EOF'
builtin.tensor	tensor<4x8xf32>
builtin.tensor	tensor<8x4xf32>
builtin.function	(tensor<4x8xf32>, i32) -> (tensor<4x8xf32>, i32)
builtin.integer	i32
builtin.integer	si32
builtin.integer	ui32
builtin.integer	42 : i32
builtin.float	1.000000e+00 : f32
builtin.affine_map	affine_map<(d0, d1) -> (d1, d0 + 1)>
builtin.dictionary	{x = "s", y = 1.500000e+00 : f64}
builtin.array	[1 : i32, 2 : i32, "two"]
builtin.memref	memref<4xf32>
builtin.memref	memref<4xf32, 1>
llvm.struct	!llvm.struct<(i32, f64)>
llvm.ptr	!llvm.ptr
llvm.ptr	!llvm.ptr<1>
builtin.string	"line\0Abreak"
mlir.module	types.mlir:1
mlir.module	split.mlir:6
EOF
if [ -z "$missing" ]; then
	ok keys.spellings
else
	bad keys.spellings "$missing"
fi
# key=handles holds handles where printed holds text: fewer bytes.
pb=$(awk -F'key_bytes=' '{ split($2, a, " "); s += a[1] } END { print s + 0 }' "$work/printed.stats")
hb=$(awk -F'key_bytes=' '{ split($2, a, " "); s += a[1] } END { print s + 0 }' "$work/handles.stats")
if [ "$(wc -l <"$work/printed.stats")" = 8 ] && [ "$hb" -gt 0 ] && [ "$hb" -lt "$pb" ] &&
   grep -qE '^module=split\.mlir:6 interns=[0-9]+ cached=0 mapped=0 syscalls=0 created=[0-9]+ key_bytes=[0-9]+ skipped=0 bytes=[0-9]+$' \
	"$work/printed.stats"; then
	ok stats
else
	bad stats "$(wc -l <"$work/printed.stats") lines, key bytes $pb/$hb: $(head -n 1 "$work/printed.stats")"
fi

# ---- the same output ------------------------------------------------------------
same=
for f in types.mlir def.mlir llvm_def.mlir split.mlir; do
	for flags in "" "--split-input-file" "--mlir-print-debuginfo" "--emit-bytecode" \
		"--mlir-print-op-generic"; do
		# shellcheck disable=SC2086
		"$opt" $flags "$f" -o "$work/ref" 2>/dev/null || { same+=" (no reference: $f $flags)"; continue; }
		for t in none private uniqd; do
			[ $t = uniqd ] && [ -e /dev/uniqd ] && continue
			# shellcheck disable=SC2086
			run "uniqd-intern{table=$t log=$work/same.log},uniqd-symbols{table=$t}" $flags "$f" \
				-o "$work/p"
			cmp -s "$work/ref" "$work/p" || same+=" $f/table=$t/$flags"
		done
	done
done
if [ -z "$same" ]; then ok same-output; else bad same-output "differ:$same"; fi

# ---- never breaks its user ----------------------------------------------------------
"$opt" --split-input-file split.mlir >"$work/ref"
if [ -e /dev/uniqd ]; then
	echo "skip host:mlir.no-device: this machine has a /dev/uniqd"
else
	# Three modules, two passes: one line.
	run "uniqd-intern{pool=any},uniqd-symbols{pool=any}" --split-input-file split.mlir
	rc=$?
	if [ $rc = 0 ] && [ "$(wc -l <"$work/err")" = 1 ] &&
	   grep -qx "uniqd mlir plugin: open /dev/uniqd: No such file or directory (ENOENT): .*; running without uniqd" \
		"$work/err" && cmp -s "$work/ref" "$work/out"; then
		ok no-device
	else
		bad no-device "status $rc: $(head -n 2 "$work/err" | tr '\n' ' ')"
	fi
fi

for case in unknown:bogus=1 table:table=fast key:key=both empty:pool= \
	long-pool:pool=$(printf "%0256d" 0) unquoted:pool=a=b; do
	name=${case%%:*} arg=${case#*:}
	run "uniqd-intern{$arg},uniqd-symbols{table=none}" --split-input-file split.mlir
	rc=$?
	if [ $rc = 0 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -qE "$warning_re" "$work/err" &&
	   cmp -s "$work/ref" "$work/out"; then
		ok "bad-argument.$name"
	else
		bad "bad-argument.$name" "status $rc: $(head -n 2 "$work/err" | tr '\n' ' ')"
	fi
done
run "uniqd-intern{table=fast}" def.mlir
msg1=$(cat "$work/err")
run "uniqd-intern{bogus=1}" def.mlir
if [ "$msg1" = "uniqd mlir plugin: table=fast: the table is uniqd, private or none; running without uniqd" ] &&
   grep -qx "uniqd mlir plugin: uniqd-intern{bogus=1}: no such option bogus; running without uniqd" \
	"$work/err"; then
	ok bad-argument.message
else
	bad bad-argument.message "$msg1 / $(cat "$work/err")"
fi
UNIQD_MLIR_TABLE=slow run "uniqd-intern" def.mlir
if grep -qx 'uniqd mlir plugin: UNIQD_MLIR_TABLE=slow: the table is uniqd, private or none; running without uniqd' \
	"$work/err"; then
	ok bad-environment
else
	bad bad-environment "$(cat "$work/err")"
fi
# A log that cannot be written: one line, the same output.
"$opt" def.mlir >"$work/ref"
run "uniqd-intern{table=private log=/nonexistent/dir/x.log}" def.mlir
if [ $? = 0 ] && [ "$(wc -l <"$work/err")" = 1 ] &&
   grep -qx "uniqd mlir plugin: cannot open /nonexistent/dir/x.log: No such file or directory; running without uniqd" \
	"$work/err" && cmp -s "$work/ref" "$work/out"; then
	ok bad-log
else
	bad bad-log "$(head -n 2 "$work/err" | tr '\n' ' ')"
fi

# ---- the symbol check -------------------------------------------------------------------
for f in def use_good use_bad llvm_def llvm_use_bad; do
	run "uniqd-symbols{table=private log=$work/sym.$f.log}" $f.mlir ||
		bad "symbols.$f" "$(head -n 1 "$work/err")"
done
"$replay" "$work/sym.def.log" "$work/sym.use_bad.log" >"$work/r.out" 2>&1
rc=$?
if [ $rc = 1 ] && [ "$(grep -c ': error: ' "$work/r.out")" = 1 ] &&
   grep -qx "use_bad.mlir:3: error: 'ext' is declared here with type (i64) -> i64, but def.mlir:3 defines it with type (i32) -> i32" \
	"$work/r.out" &&
   grep -qx '1 symbol with mismatched types; 3 symbols, 2 modules checked' "$work/r.out"; then
	ok symbols.planted
else
	bad symbols.planted "status $rc: $(head -n 2 "$work/r.out" | tr '\n' ' ')"
fi
"$replay" "$work/sym.def.log" "$work/sym.use_good.log" >"$work/r.out" 2>&1
rc=$?
# @local_helper is private in both, with two types: no one else's business.
if [ $rc = 0 ] && grep -qx 'no symbol has more than one type; 3 symbols, 2 modules checked' "$work/r.out"; then
	ok symbols.clean
else
	bad symbols.clean "status $rc: $(head -n 2 "$work/r.out" | tr '\n' ' ')"
fi
"$replay" "$work/sym.llvm_def.log" "$work/sym.llvm_use_bad.log" >"$work/r.out" 2>&1
rc=$?
if [ $rc = 1 ] &&
   grep -qx "llvm_use_bad.mlir:2: error: 'count' is declared here with type !llvm.func<i32 (ptr, i32)>, but llvm_def.mlir:2 defines it with type !llvm.func<i32 (ptr, i64)>" \
	"$work/r.out" && ! grep -q private_count "$work/r.out"; then
	ok symbols.llvm
else
	bad symbols.llvm "status $rc: $(head -n 2 "$work/r.out" | tr '\n' ' ')"
fi
"$replay" --json "$work/sym.def.log" "$work/sym.use_good.log" "$work/sym.use_bad.log" >"$work/r.json" 2>&1
if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
r = [(x["loc"], x["definition"], x["differs"]) for x in d["reports"]]
assert sorted(r) == [("def.mlir:3", True, False), ("use_bad.mlir:3", False, True),
                     ("use_good.mlir:2", False, False)], r
assert d["mismatches"] == 1 and d["modules"] == 3, d' "$work/r.json" 2>"$work/json.err"; then
	ok symbols.json
else
	bad symbols.json "$(tail -n 1 "$work/json.err")"
fi
# The same check on key=handles logs: the types' text comes back whole.
for f in def use_bad; do
	run "uniqd-symbols{table=private key=handles log=$work/symh.$f.log}" $f.mlir
done
"$replay" "$work/symh.def.log" "$work/symh.use_bad.log" >"$work/r.out" 2>&1
if [ $? = 1 ] && grep -q "^use_bad.mlir:3: error: 'ext' is declared here with type (i64) -> i64, but def.mlir:3" \
	"$work/r.out"; then
	ok symbols.key-handles
else
	bad symbols.key-handles "$(head -n 2 "$work/r.out" | tr '\n' ' ')"
fi

# ---- table=uniqd, on the fake device ------------------------------------------------
# build/mlir/uniqd-mlir-fake.so is the plugin with tests/native/fake/ in
# place of /dev/uniqd (one pool per mlir-opt process, created when the
# plugin loads: tests/native/fake/gcc_plugin_fake.c): the uniqd path natively.
fake_run() {
	UNIQD_FAKE_POOL=fp "$opt" --load-pass-plugin="$fake" --pass-pipeline="builtin.module($1)" \
		"${@:2}" >"$work/out" 2>"$work/err"
}
"$opt" --split-input-file types.mlir >"$work/ref"
rm -f "$work/u.log" "$work/u.stats" "$work/v.log"
fake_run "uniqd-intern{pool=fp log=$work/u.log stats=$work/u.stats}" --split-input-file types.mlir
rc=$?
run "uniqd-intern{table=private log=$work/v.log}" --split-input-file types.mlir
n=$(wc -l <"$work/u.log")
if [ $rc = 0 ] && [ ! -s "$work/err" ] && cmp -s "$work/ref" "$work/out" &&
   cmp -s <(cut -f2,3 "$work/u.log" | sort) <(cut -f2,3 "$work/v.log" | sort) &&
   grep -qx "module=types.mlir:1 interns=$n cached=0 mapped=0 syscalls=$n created=$n key_bytes=[0-9]* skipped=0 bytes=0" \
	"$work/u.stats"; then
	ok uniqd.fake-device
else
	bad uniqd.fake-device "status $rc, $(head -n 1 "$work/err"), stats $(cat "$work/u.stats" 2>&1)"
fi
# Both passes, both keys, many modules in one process: a handle is one
# content and a content one handle.
rm -f "$work/w.log"
{ cat types.mlir; echo '// -----'; cat types_alias.mlir; } >"$work/both.mlir"
fake_run "uniqd-intern{pool=fp key=handles log=$work/w.log},uniqd-symbols{pool=fp key=handles log=$work/w.log}" \
	--split-input-file "$work/both.mlir"
if [ $? = 0 ] && [ "$(cut -f1 "$work/w.log" | sort -u | wc -l)" = "$(sort -u "$work/w.log" | wc -l)" ] &&
   [ "$(cut -f2,3 "$work/w.log" | sort -u | wc -l)" = "$(sort -u "$work/w.log" | wc -l)" ]; then
	ok uniqd.fake-device-handles
else
	bad uniqd.fake-device-handles "$(head -n 1 "$work/err")"
fi
# A full pool (EDQUOT) and a missing pool: one line, the same output.
rm -f "$work/q.stats"
UNIQD_FAKE_MAX_ENTRIES=20 fake_run "uniqd-intern{pool=fp stats=$work/q.stats}" --split-input-file types.mlir
rc=$?
if [ $rc = 0 ] && [ "$(wc -l <"$work/err")" = 1 ] &&
   grep -qE '^uniqd mlir plugin: .*\(EDQUOT\).*; running without uniqd$' "$work/err" &&
   cmp -s "$work/ref" "$work/out" && [ ! -e "$work/q.stats" ]; then
	ok uniqd.pool-full
else
	bad uniqd.pool-full "status $rc: $(head -n 2 "$work/err" | tr '\n' ' ')"
fi
fake_run "uniqd-intern{pool=other}" --split-input-file types.mlir
rc=$?
if [ $rc = 0 ] && [ "$(wc -l <"$work/err")" = 1 ] &&
   grep -qE "^uniqd mlir plugin: attach to pool 'other': .*\(ENOENT\).*; running without uniqd$" \
	"$work/err" && cmp -s "$work/ref" "$work/out"; then
	ok uniqd.no-pool
else
	bad uniqd.no-pool "status $rc: $(head -n 2 "$work/err" | tr '\n' ' ')"
fi

[ -n "$keep" ] && echo "# kept $work" >&2
exit $failed
