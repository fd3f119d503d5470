#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The busybox tree the full-system guest builds with the GCC plugin
# (tests/system/gcc-plugin.sh): Debian's busybox source package
# (tools/testing/srcpkg.sh), configured with `make defconfig` and its
# generated headers and host tools made (`make prepare scripts`), so that
# the guest under TCG spends its time compiling units, not running kconfig.
#
#   tools/testing/vm/system/busybox-tree.sh
#
# The LAST line on stdout is the tree; progress on stderr. Cached as
# $UNIQD_CACHE/system-busybox-<key>/busybox-<version>, <key> hashing this
# script, the source package's version and the host's gcc version (the
# host tools in the tree are the host's), made in a temporary directory and
# renamed into place with a stamp, under flock.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${UNIQD_CACHE:-/var/cache/uniqd}
STAMP=.uniqd-busybox-ok
log() { echo "busybox-tree: $*" >&2; }

src=$("$here/../../srcpkg.sh" busybox | tail -n 1)
[ -d "$src" ] || { log "no busybox source tree"; exit 1; }
ver=$(basename "$(dirname "$src")")
key=$( { sha256sum < "$0"; echo "$ver"; gcc --version | head -n 1; } | sha256sum | cut -c1-12)
dir=$CACHE/system-busybox-$key
tree=$dir/$(basename "$src")
if [ -f "$dir/$STAMP" ]; then
	echo "$tree"
	exit 0
fi
mkdir -p "$CACHE"
exec 9>"$CACHE/.system-busybox.lock"
flock 9
if [ -f "$dir/$STAMP" ]; then
	echo "$tree"
	exit 0
fi
tmp=$(mktemp -d "$CACHE/.system-busybox-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log "preparing $ver in $tmp (make defconfig; make prepare scripts)"
cp -a "$src" "$tmp/"
t=$tmp/$(basename "$src")
# Debian's packaging is not part of the build (and holds its own configs).
rm -rf "$t/debian" "$t/.pc"
if ! { make -C "$t" defconfig && make -C "$t" -j"$(nproc)" prepare scripts; } >"$tmp/prepare.log" 2>&1; then
	cp "$tmp/prepare.log" "$CACHE/system-busybox-$key.log"
	log "ERROR: preparing busybox failed: see $CACHE/system-busybox-$key.log"
	exit 1
fi
mv "$tmp/prepare.log" "$t/.uniqd-prepare.log"
rm -rf "$dir"
mkdir -p "$tmp/out"
mv "$t" "$tmp/out/"
mv "$tmp/out" "$dir"
touch "$dir/$STAMP"
echo "$tree"
