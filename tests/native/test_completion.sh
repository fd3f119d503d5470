#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# uniqdctl's bash completion (tools/uniqdctl/uniqdctl.bash-completion), in a
# bash without the bash-completion package: commands, options, --format's
# words, snapshot's subcommands and files. mk/uniqdctl.mk installs this as
# build/native/test_completion with the path filled in; result lines as
# tests/harness.h writes them.
comp='@COMP@'
failed=0

result() {
	echo "$1"
	[ -n "${UNIQD_RESULTS:-}" ] && echo "$1" >> "$UNIQD_RESULTS"
	case $1 in not*) failed=1 ;; esac
}

# complete WORDS...: what the completion offers for the last word, sorted.
complete_words() {
	bash --norc --noprofile -c '
		. "$1" || exit 1
		shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_uniqdctl
		[ ${#COMPREPLY[@]} = 0 ] || printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$comp" "$@"
}

# check NAME EXPECTED WORDS...
check() {
	local name=$1 want=$2 got
	shift 2
	got=$(complete_words "$@" 2>&1)
	if [ "$got" = "$want" ]; then
		result "ok completion.$name"
	else
		result "not ok completion.$name: for '$*' got '$got', not '$want'"
	fi
}

if bash --norc --noprofile -c '. "$1" && complete -p uniqdctl' _ "$comp" | grep -q -- '-F _uniqdctl uniqdctl$'; then
	result "ok completion.registered"
else
	result "not ok completion.registered: $comp does not register _uniqdctl"
fi
check commands 'save snapshot stats symbols ' uniqdctl s
check commands-after-options 'layouts lookup ' uniqdctl --pool build -j l
check options '--seconds --share-all --share-group --strict ' uniqdctl --s
check format 'gcc json sarif text ' uniqdctl --format ''
check format-prefix 'sarif ' uniqdctl layouts --format s
check snapshot 'info verify ' uniqdctl snapshot ''
check layouts-no-argument '' uniqdctl --pool p layouts ''
dir=$(mktemp -d)
touch "$dir/a.snap" "$dir/b.snap"
check snapshot-file "$dir/a.snap " uniqdctl snapshot verify "$dir/a"
check restore-file "$dir/a.snap $dir/b.snap " uniqdctl restore "$dir/"
check snapshot-done '' uniqdctl snapshot info "$dir/a.snap" ''
# --pool: the live pools 'uniqdctl pools' lists (a stand-in uniqdctl here).
cat >"$dir/uniqdctl" <<'FAKE'
#!/bin/sh
[ "$1" = pools ] || exit 3
echo "        ID      OWNER MODE                ENTRIES        BYTES       KERNEL  FIL  MAP NAME"
echo "         7       1000 private             2566       297386       434176    1    1 'build'"
echo "         9       1000 all                    0            0        16384    1    0 'bench.1'"
echo "        12          0 all                    0            0        16384    0    0 'old' (revoked)"
FAKE
chmod +x "$dir/uniqdctl"
PATH=$dir:$PATH check pool-names 'bench.1 build ' uniqdctl --pool ''
PATH=$dir:$PATH check pool-prefix 'build ' uniqdctl -p bu
rm -rf "$dir"
exit $failed
