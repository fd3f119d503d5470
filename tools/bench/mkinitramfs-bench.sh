#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the bench VM's initramfs: the test VM's own (tools/testing/vm/
# mkinitramfs.sh, --mode bench: guest-init.sh, busybox, Debian's guest
# modules, uniqd.ko) whose /bench holds only tools/bench/guest-bench.sh,
# followed by a second cpio archive with what the benchmarks need (the
# kernel accepts concatenated archives):
#
#   /bench-bin/       the static benchmark programs
#   /bench-data/      uniqd_bench.ko, the corpus, the build corpus
#   /etc/uniqd-bench  settings for guest-bench.sh
#   redis-server and every shared library it needs, at their host paths
#
#   mkinitramfs-bench.sh --out FILE --module uniqd.ko --release KVER
#       --bench-module uniqd_bench.ko --bin DIR [--corpus FILE]
#       [--build-corpus FILE] [--redis] [--settings FILE]
#       [--timeout SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out= module= release= bmod= bin= corpus= bcorpus= redis= settings= timeout=3600
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift ;;
	--module) module=$2; shift ;;
	--release) release=$2; shift ;;
	--bench-module) bmod=$2; shift ;;
	--bin) bin=$2; shift ;;
	--corpus) corpus=$2; shift ;;
	--build-corpus) bcorpus=$2; shift ;;
	--redis) redis=1 ;;
	--settings) settings=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	*) echo "mkinitramfs-bench: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
[ -n "$out" ] && [ -f "$module" ] && [ -f "$bmod" ] ||
	{ echo "mkinitramfs-bench: need --out, --module, --bench-module" >&2; exit 2; }

mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/progs" "$tmp/root"
chmod 755 "$tmp/root"
cp "$here/guest-bench.sh" "$tmp/progs/run"
chmod 755 "$tmp/progs/run"

args=(--out "$tmp/base.gz" --module "$module" --mode bench --progs "$tmp/progs"
      --timeout "$timeout")
[ -n "$release" ] && args+=(--release "$release")
[ -d "$top/build/static-bin" ] && args+=(--tools "$top/build/static-bin")
"$top/tools/testing/vm/mkinitramfs.sh" "${args[@]}"

r=$tmp/root
mkdir -p "$r/bench-bin" "$r/bench-data" "$r/etc"
cp "$bmod" "$r/bench-data/uniqd_bench.ko"
if [ -n "$bin" ]; then
	for p in "$bin"/*; do
		[ -f "$p" ] && [ -x "$p" ] && cp "$p" "$r/bench-bin/"
	done
fi
[ -n "$corpus" ] && cp "$corpus" "$r/bench-data/corpus.bin"
[ -n "$bcorpus" ] && cp "$bcorpus" "$r/bench-data/build-corpus.bin"
[ -n "$settings" ] && cp "$settings" "$r/etc/uniqd-bench"

if [ -n "$redis" ]; then
	rs=$(command -v redis-server)
	mkdir -p "$r/usr/bin"
	cp "$rs" "$r/usr/bin/redis-server"
	# The dynamic loader and every library, at the paths the binary names.
	ldd "$rs" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | sort -u |
	while read -r lib; do
		mkdir -p "$r$(dirname "$lib")"
		cp -L "$lib" "$r$lib"
	done
fi

(cd "$r" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$tmp/extra.gz"
cat "$tmp/base.gz" "$tmp/extra.gz" > "$out"
