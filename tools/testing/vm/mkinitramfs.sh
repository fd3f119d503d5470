#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the test VM's initramfs.
#
#   mkinitramfs.sh --out FILE --module uniqd.ko --mode check|run|bench
#                  [--release KVER] [--kunit uniqd_kunit.ko] [--progs DIR]
#                  [--timeout SECONDS] [--params "insmod params"] [--tools DIR]
#
# --release copies the guest modules listed in guest-modules.txt from
# /lib/modules/KVER (decompressing .ko.xz, which busybox insmod cannot read).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out= module= mode=check release= kunit= progs= timeout=600 params= tools=
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift ;;
	--module) module=$2; shift ;;
	--mode) mode=$2; shift ;;
	--release) release=$2; shift ;;
	--kunit) kunit=$2; shift ;;
	--progs) progs=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--params) params=$2; shift ;;
	--tools) tools=$2; shift ;;
	*) echo "mkinitramfs: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
[ -n "$out" ] && [ -f "$module" ] || { echo "mkinitramfs: need --out and --module" >&2; exit 2; }

root=$(mktemp -d)
# mktemp -d makes the directory 0700, which would become the guest's /:
# non-root test processes could not reach /dev/uniqd.
chmod 755 "$root"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,modules,tests,demo,bench,usr/bin}
cp /bin/busybox "$root/bin/busybox"
cp "$here/guest-init.sh" "$root/init"
chmod 755 "$root/init"
cp "$module" "$root/uniqd.ko"
[ -n "$kunit" ] && cp "$kunit" "$root/uniqd_kunit.ko"
echo "$mode" > "$root/etc/uniqd-mode"
echo "$timeout" > "$root/etc/uniqd-test-timeout"
echo "$params" > "$root/etc/uniqd-module-params"
# The programs that run after all others, in order (guest-init.sh).
grep -v '^#' "$here/last-tests.txt" > "$root/etc/uniqd-last-tests"
# Test sizes: "quick" for make check, "full" (UNIQD_SCALE=full) for long runs.
echo "${UNIQD_SCALE:-quick}" > "$root/etc/uniqd-scale"
# A seed for the randomised tests, to replay a run (empty: each picks one).
echo "${UNIQD_SEED:-}" > "$root/etc/uniqd-seed"
# A second user for the access-control tests.
printf 'root:x:0:0:root:/tmp:/bin/sh\nuser:x:1000:1000:user:/tmp:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\nuser:x:1000:\nbuild:x:2000:1000\n' > "$root/etc/group"

if [ -n "$release" ] && [ -d "/lib/modules/$release" ]; then
	: > "$root/etc/uniqd-guest-modules"
	grep -v '^#' "$here/guest-modules.txt" | while read -r m; do
		[ -n "$m" ] || continue
		src=/lib/modules/$release/kernel/$m
		name=$(basename "$m")
		if [ -f "$src.ko" ]; then
			cp "$src.ko" "$root/modules/$name.ko"
		elif [ -f "$src.ko.xz" ]; then
			xz -dc "$src.ko.xz" > "$root/modules/$name.ko"
		else
			continue	# built in, or absent: the tests say which
		fi
		echo "$name.ko" >> "$root/etc/uniqd-guest-modules"
	done
fi

dest=tests
[ "$mode" = run ] && dest=demo
[ "$mode" = bench ] && dest=bench
if [ -n "$progs" ]; then
	for p in "$progs"/*; do
		[ -f "$p" ] && [ -x "$p" ] && cp "$p" "$root/$dest/"
	done
fi

# Static tools (uniqdctl, b3sum) for the tests to exec.
if [ -n "$tools" ] && [ -d "$tools" ]; then
	for p in "$tools"/*; do
		[ -f "$p" ] && [ -x "$p" ] && cp "$p" "$root/usr/bin/"
	done
fi

(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$out"
