#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317  # the checks are called through check()
#
# Full-system guest (tools/testing/system.sh): the packaged GCC plugin
# (uniqd-gcc-plugin, `gcc -fplugin=uniqd`) in a real parallel build of a
# real project, as the unprivileged user tester, with Debian's gcc-12:
#
#   - the layout demo (tools/demo/layout/, in $lib/layout): its planted ABI
#     mismatch is reported (uniqdctl layouts exits 1, naming struct item);
#   - a slice of busybox from Debian's source package (system.sh puts the
#     tree, configured with defconfig, in /home/tester/busybox): every
#     (content, handle) pair of the plugin's logs agrees with RESOLVE and
#     across compilers, and every class of the pool holds exactly the
#     distinct keys the logs saw (plugin_log_check.c, built here against the
#     packaged libuniqd); a clean tree reports no mismatch;
#   - with /dev/uniqd absent, a smaller slice still builds (each unit says
#     once that it compiles without uniqd) and its objects are byte for
#     byte those of a build without the plugin.
# Results on fd 3 as "ok gcc-plugin.<case>" / "not ok gcc-plugin.<case>: why".
lib=${UNIQD_SYSTEM_LIB:-/usr/local/lib/uniqd-system}
user=tester
home=/home/$user
bb=$home/busybox
jobs=$(nproc)
# The slice of busybox: kbuild directory targets, one `make -j$(nproc)`.
# archival/libarchive/, findutils/ and editors/: 45 units under defconfig,
# each including libbb.h and its headers (about 15,000 identifiers a unit,
# 14,600 of them shared), plus applets/applets.o, rebuilt for the new CFLAGS. Busybox's
# Makefile.flags also runs its cc-option probes (gcc on /dev/null, about 28)
# with the plugin: they publish too, and the checks include them. Times
# under TCG: Documentation/testing.rst.
# UNIQD_BUSYBOX_SLICE on the host (system.sh writes it to $lib/busybox-slice)
# replaces it.
slice=$(cat "$lib/busybox-slice" 2>/dev/null)
read -r -a SLICE <<< "${slice:-archival/libarchive/ findutils/ editors/}"
# The no-device comparison: six units of the slice (evenly spaced in its
# sorted list, so from several directories), compiled again with the command
# lines kbuild recorded for them (.<unit>.o.cmd), without another top-level
# make and its probes. Picked after the main build.
SLICE2=()
SUITE=gcc-plugin
# shellcheck source=tests/system/result.bash
. "${UNIQD_SYSTEM_LIB:-/usr/local/lib/uniqd-system}/result.bash"
# Progress goes to the console as it happens (check() captures the
# checks' own output and shows it when they end).
exec 4>&1
say() { echo "gcc-plugin: $*" >&4; }
# A pool lives while a file is attached: one holder per build. Its output
# goes nowhere: a background process holding check()'s pipe would keep the
# check waiting for ever.
holder=
hold() {
	# exec: $! must be uniqdctl itself, not a subshell that would die alone.
	(exec setpriv --reuid="$user" --regid="$user" --init-groups \
		uniqdctl --pool "$1" hold </dev/null >/dev/null 2>&1) &
	holder=$!
	for _ in $(seq 150); do
		as_user uniqdctl --pool "$1" --existing stats >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	as_user uniqdctl --pool "$1" --existing stats
	unhold
	return 1
}
unhold() {
	if [ -n "$holder" ]; then
		kill "$holder" 2>/dev/null
		wait "$holder" 2>/dev/null
	fi
	holder=
}
secs() { echo $(( $(date +%s) - $1 )); }
plugin_flags() {
	echo "-fplugin=uniqd -fplugin-arg-uniqd-pool=$1${2:+ $2}"
}

installed() {
	local so
	so=$(gcc -print-file-name=plugin)/uniqd.so
	[ -f "$so" ] || { echo "no $so"; return 1; }
	dpkg -S "$so" | grep -q '^uniqd-gcc-plugin:' || { dpkg -S "$so"; return 1; }
	[ -d "$bb" ] || { echo "no busybox tree in $bb"; return 1; }
}
check installed installed

# The checker, built as a user of the packages builds against them.
install -o "$user" -g "$user" -m 0644 "$lib/plugin_log_check.c" "$home/"
checker() {
	# shellcheck disable=SC2016  # expanded by the user's shell
	as_user sh -c 'cd && cc -O2 -Wall -Werror plugin_log_check.c $(pkg-config --cflags --libs libuniqd) -o plugin_log_check'
}
check checker.build checker

# ---- the planted mismatch --------------------------------------------------
cp -r "$lib/layout" "$home/layout"
chown -R "$user:" "$home/layout"
planted() {
	local t rc
	t=$(date +%s)
	as_user make -C "$home/layout" -j"$jobs" CC="gcc $(plugin_flags demo)" >"$home/layout.log" 2>&1 ||
		{ tail -n 5 "$home/layout.log"; return 1; }
	say "layout demo: 6 units built in $(secs "$t")s"
	as_user uniqdctl --pool demo layouts >"$home/layouts-demo.txt" 2>&1
	rc=$?
	cat "$home/layouts-demo.txt"
	[ "$rc" -eq 1 ] || { echo "uniqdctl layouts: exit $rc, not 1"; return 1; }
	grep -q '^include/item.h:[0-9]*: error: struct item: ABI mismatch' "$home/layouts-demo.txt" ||
		{ echo "struct item is not reported as an ABI mismatch"; return 1; }
}
# The holders run in this shell: check() runs its function in a subshell.
if hold demo; then
	check planted-mismatch planted
else
	res "not ok gcc-plugin.planted-mismatch: cannot hold the pool demo"
fi
unhold

# ---- busybox with the plugin -------------------------------------------------
# CONFIG_EXTRA_CFLAGS (busybox's Makefile.flags appends it to CFLAGS)
# carries the plugin to the units; the cc-option probes run with it too
# (about 28 compiler runs on /dev/null and bb_libtest.c), so the checks
# below count them apart from the units and include their keys.
rm -f "$home/bb.log" "$home/bb.stats"
bb_build() {
	local t units stats
	t=$(date +%s)
	as_user make -C "$bb" -j"$jobs" CONFIG_EXTRA_CFLAGS="$(plugin_flags busybox \
		"-fplugin-arg-uniqd-log=$home/bb.log -fplugin-arg-uniqd-stats=$home/bb.stats")" \
		"${SLICE[@]}" >"$home/bb-build.log" 2>&1 || { tail -n 5 "$home/bb-build.log"; return 1; }
	units=$(grep -c '^  CC ' "$home/bb-build.log")
	# The probes' units: /dev/null and Makefile.flags' bb_libtest.c.
	stats=$(grep -vc -e '^unit=/dev/null ' -e '^unit=bb_libtest\.c ' "$home/bb.stats")
	say "busybox ${SLICE[*]}: $units units built in $(secs "$t")s with -j$jobs ($(wc -l < "$home/bb.stats") compiler runs with the probes)"
	if grep -m1 '^uniqd plugin:' "$home/bb-build.log"; then return 1; fi
	[ "$units" -gt 0 ] && [ "$stats" -eq "$units" ] ||
		{ echo "$units units compiled, $stats stats lines"; return 1; }
	awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] += kv[2] } }
		END { printf "gcc-plugin: %d interns: cache %d, mapping %d, kernel %d (%d new)\n",
			s["interns"], s["cached"], s["mapped"], s["syscalls"], s["created"] }' "$home/bb.stats"
}
hold busybox || res "not ok gcc-plugin.busybox.hold: cannot hold the pool busybox"
check busybox.build bb_build

# Every logged (content, handle) against RESOLVE, the compilers against each
# other, and each class's size against the distinct keys logged.
logcheck() {
	as_user "$home/plugin_log_check" busybox "$home/bb.log" >"$home/logcheck.txt" 2>&1
	local rc=$?
	cat "$home/logcheck.txt"
	return $rc
}
check busybox.log-resolve logcheck
ident_exact() {
	grep -E '^class gcc\.ident: ([0-9]+) distinct in the logs, \1 entries in the pool$' "$home/logcheck.txt" ||
		{ grep '^class gcc.ident' "$home/logcheck.txt"; echo "gcc.ident: no exact match"; return 1; }
}
check busybox.ident-exact ident_exact

# A clean tree: busybox's headers define each tag one way in every unit.
clean_tree() {
	as_user uniqdctl --pool busybox layouts >"$home/layouts-bb.txt" 2>&1
	local rc=$?
	cat "$home/layouts-bb.txt"
	[ "$rc" -eq 0 ] || { echo "uniqdctl layouts: exit $rc"; return 1; }
}
check busybox.clean-tree clean_tree
unhold

# ---- no /dev/uniqd -----------------------------------------------------------
# Each SLICE2 unit is compiled with the command kbuild ran for it in the main
# build, less the plugin's log and stats arguments: first with the plugin
# and /dev/uniqd moved away, then without the plugin; the objects must be
# the same bytes. Two units at a time, as make -j2 would.
restore_dev() { if [ -e /dev/uniqd.away ]; then mv /dev/uniqd.away /dev/uniqd; fi; }
trap restore_dev EXIT
# The recorded command of unit $1 (path of its .o), without any -fplugin.
unit_cmd() {
	sed -n "1s/^cmd_[^ ]* := //p" "$bb/$(dirname "$1")/.$(basename "$1").cmd" |
		sed -E 's/ -fplugin[^ ]*//g'
}
# compile_all DEST EXTRA: every SLICE2 unit with EXTRA added; objects to DEST.
compile_all() {
	local dest=$1 extra=$2 o
	rm -rf "${dest:?}" && mkdir -p "$dest" && chown "$user:" "$dest"
	for o in "${SLICE2[@]}"; do
		c=$(unit_cmd "$o")
		[ -n "$c" ] || { echo "no recorded command for $o"; return 1; }
		printf '%s\0' "cd $bb && $c $extra && mkdir -p $dest/$(dirname "$o") && cp $o $dest/$o"
	done > "$home/cmds"
	as_user xargs -0 -P"$jobs" -n1 sh -c < "$home/cmds"
}
# In this shell: check() runs its function in a subshell.
mapfile -t all < <(sed -n 's/^  CC      \(.*\.o\)$/\1/p' "$home/bb-build.log" 2>/dev/null |
		   grep -v '^applets/' | sort)
if [ "${#all[@]}" -ge 6 ]; then
	for i in 0 1 2 3 4 5; do
		SLICE2+=("${all[$(( i * (${#all[@]} - 1) / 5 ))]}")
	done
fi
say "no /dev/uniqd: units ${SLICE2[*]}"
no_device() {
	local t rc n
	[ "${#SLICE2[@]}" -eq 6 ] || { echo "the main build compiled ${#all[@]} units, not 6 or more"; return 1; }
	mv /dev/uniqd /dev/uniqd.away || return 1
	t=$(date +%s)
	compile_all "$home/nodev" "$(plugin_flags busybox)" >"$home/nodev.log" 2>&1
	rc=$?
	restore_dev
	cat "$home/nodev.log"
	[ "$rc" -eq 0 ] || return 1
	say "no /dev/uniqd: ${#SLICE2[@]} units compiled in $(secs "$t")s"
	n=$(grep -c '^uniqd plugin: .*; compiling without uniqd$' "$home/nodev.log")
	[ "$n" -eq "${#SLICE2[@]}" ] ||
		{ echo "$n 'compiling without uniqd' lines for ${#SLICE2[@]} units"; return 1; }
}
check no-device.build no_device
same_objects() {
	local o bad=
	[ -d "$home/nodev" ] || { echo "no objects from the build without /dev/uniqd"; return 1; }
	compile_all "$home/noplugin" "" >"$home/noplugin.log" 2>&1 ||
		{ tail -n 5 "$home/noplugin.log"; return 1; }
	for o in "${SLICE2[@]}"; do
		cmp "$home/noplugin/$o" "$home/nodev/$o" || bad+=" $o"
	done
	[ -z "$bad" ] || { echo "objects differ:$bad"; return 1; }
	echo "${#SLICE2[@]} objects identical"
}
check no-device.same-objects same_objects

# Every holder is gone: nothing of this test keeps uniqd busy for the tests
# after it (packages.sh unloads it).
released() {
	! ls -l /proc/[0-9]*/fd 2>/dev/null | grep /dev/uniqd
}
check cleanup released
exit 0
