#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build, or reuse from cache, the uniqd debug test kernel.
#
#   tools/testing/vm/debug-kernel.sh [--print-dir]
#
# Debian's stock kernels have neither KUnit nor the bug detectors (KASAN,
# lockdep, kmemleak, failslab, ...) that our VM tests rely on, so we build
# one from Debian's linux-source-6.12 package with tools/testing/vm/debug.config
# merged on top of a minimal base config. Everything the kernel needs is
# built in (=y); the resulting build dir doubles as the tree that our
# out-of-tree module is compiled against:
#
#   make -C "$(debug-kernel.sh)" M=$PWD/uniqd modules
#
# The LAST line on stdout is the build dir (it contains
# arch/x86/boot/bzImage); progress goes to stderr, compiler noise to
# <build dir>/build.log.
#
# --print-dir prints the dir that would be used and exits 0 without
# installing or building anything, so other scripts can probe the cache
# (test -f "$dir/.uniqd-build-ok").
#
# Environment:
#   UNIQD_CACHE        cache root, default /var/cache/uniqd. Must be outside
#                      the repo: the source + build trees are ~3 GB.
#   UNIQD_KERNEL_BASE  base config target, default allnoconfig (smallest
#                      tree that still boots; keeps the KASAN build short).
#
# Layout under $UNIQD_CACHE:
#   linux-source-6.12.<debver>/   unpacked source, shared by all builds;
#                                 also where hooks find scripts/checkpatch.pl
#   kdebug-<key>/                 O= build dir; <key> hashes every input
#   .lock                         flock: one unpack/build at a time

set -euo pipefail

# Bump when the build steps below change what ends up in the build dir, so
# stale caches are not reused (the other inputs are hashed automatically).
RECIPE=1

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FRAGMENT=$HERE/debug.config
CACHE=${UNIQD_CACHE:-/var/cache/uniqd}
BASE=${UNIQD_KERNEL_BASE:-allnoconfig}
SRC_PKG=linux-source-6.12
TARBALL=/usr/src/linux-source-6.12.tar.xz
PKGS=(linux-source-6.12 build-essential bc flex bison libelf-dev libssl-dev
      dwarves python3 xz-utils kmod cpio)
OK_STAMP=.uniqd-build-ok
FAILED_STAMP=.uniqd-build-failed

START=$SECONDS
log() { printf 'debug-kernel [%4ds]: %s\n' $((SECONDS - START)) "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

usage() {
	sed -n '4,/^# (test -f/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit "${1:-2}"
}

print_only=0
case "${1-}" in
"") ;;
--print-dir) print_only=1 ;;
-h|--help) usage 0 ;;
*) usage 2 ;;
esac
[ $# -le 1 ] || usage 2

[ -r "$FRAGMENT" ] || die "missing config fragment $FRAGMENT"
# A symbol listed twice makes the result depend on merge order.
dups=$(grep -oE '^(# )?CONFIG_[A-Za-z0-9_]+' "$FRAGMENT" | sed 's/^# //' |
	sort | uniq -d | tr '\n' ' ')
[ -z "$dups" ] || die "symbols listed more than once in $FRAGMENT: $dups"

pkg_installed() {
	[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]
}

ensure_packages() {
	local missing=() p
	for p in "${PKGS[@]}"; do
		pkg_installed "$p" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing: ${missing[*]}"
	local sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	# apt output must not reach stdout: callers parse our last stdout line.
	"${sudo[@]}" apt-get update >&2 ||
		die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" \
		apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
		die "apt-get install failed"
}

# The source package version. Before installation (--print-dir on a fresh
# machine) fall back to the candidate apt would install, so the printed dir
# matches what a real run will build.
source_version() {
	local v
	v=$(dpkg-query -W -f='${Version}' "$SRC_PKG" 2>/dev/null) || v=
	if [ -z "$v" ] || ! pkg_installed "$SRC_PKG"; then
		v=$(apt-cache policy "$SRC_PKG" 2>/dev/null |
			sed -n 's/^ *Candidate: *//p')
		[ "$v" = "(none)" ] && v=
	fi
	echo "${v:-unknown}"
}

gcc_version() {
	# Full first line: includes Debian's revision, which can change codegen.
	# No pipe into head: a SIGPIPE under pipefail would change the key.
	local v
	v=$(gcc --version 2>/dev/null) || v=none
	echo "${v%%$'\n'*}"
}

# Everything that changes the produced kernel goes into the key, so a
# changed fragment, toolchain or source package gets a fresh build dir
# instead of an incremental rebuild of a stale one.
compute_key() {
	{
		echo "recipe=$RECIPE"
		echo "base=$BASE"
		echo "source=$SRC_VERSION"
		echo "gcc=$(gcc_version)"
		cat "$FRAGMENT"
	} | sha256sum | cut -c1-12
}

[ "$print_only" -eq 1 ] || ensure_packages

SRC_VERSION=$(source_version)
KEY=$(compute_key)
# Debian versions contain '~' and '+'; keep paths make-friendly.
SRC_DIR=$CACHE/$SRC_PKG.$(echo "$SRC_VERSION" | tr -c 'A-Za-z0-9._\n-' '_')
BUILD_DIR=$CACHE/kdebug-$KEY

if [ "$print_only" -eq 1 ]; then
	echo "$BUILD_DIR"
	exit 0
fi

build_done() {
	[ -f "$BUILD_DIR/$OK_STAMP" ] && [ -f "$BUILD_DIR/arch/x86/boot/bzImage" ]
}

# Fast path without the lock: the stamp is written last, after success.
if build_done; then
	log "cached build: $BUILD_DIR"
	echo "$BUILD_DIR"
	exit 0
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
if ! flock -n 9; then
	log "another build holds $CACHE/.lock; waiting"
	flock 9
fi
# Whoever held the lock may just have built the very same thing.
if build_done; then
	log "cached build (finished by a concurrent run): $BUILD_DIR"
	echo "$BUILD_DIR"
	exit 0
fi

unpack_source() {
	if [ -f "$SRC_DIR/.uniqd-unpacked" ]; then
		return 0
	fi
	[ -r "$TARBALL" ] || die "$TARBALL not found (is $SRC_PKG installed?)"
	log "unpacking $TARBALL -> $SRC_DIR"
	rm -rf "$SRC_DIR"
	local tmp
	tmp=$(mktemp -d "$CACHE/.unpack.XXXXXX")
	# Unpack beside the target and rename, so a half-extracted tree is never
	# visible under the final name (hooks glob it for checkpatch.pl).
	tar -C "$tmp" --no-same-owner -xf "$TARBALL" ||
		{ rm -rf "$tmp"; die "unpacking $TARBALL failed"; }
	[ -f "$tmp/$SRC_PKG/Makefile" ] ||
		{ rm -rf "$tmp"; die "unexpected layout in $TARBALL"; }
	mv "$tmp/$SRC_PKG" "$SRC_DIR"
	rmdir "$tmp"
	touch "$SRC_DIR/.uniqd-unpacked"
}

# Kconfig silently drops symbols whose dependencies are unmet, so check that
# every line of the fragment survived into the final .config verbatim.
verify_config() {
	local cfg=$BUILD_DIR/.config line sym bad=0
	while IFS= read -r line; do
		line=${line%"${line##*[![:space:]]}"}
		case $line in
		CONFIG_*=*)
			grep -qxF -- "$line" "$cfg" && continue
			sym=${line%%=*}
			log "  wanted $line, got: $(grep -E "^(# )?$sym[= ]" "$cfg" ||
				echo 'nothing (dependency unmet or symbol unknown)')"
			bad=1
			;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			grep -q "^$sym=" "$cfg" || continue
			log "  wanted $sym off, got: $(grep "^$sym=" "$cfg")"
			bad=1
			;;
		esac
	done <"$FRAGMENT"
	[ "$bad" -eq 0 ] && return 0
	# Deterministic: resuming this dir later would fail the same way.
	touch "$BUILD_DIR/$FAILED_STAMP"
	die "final .config lacks required options (see above)"
}

# make with output to build.log; a background ticker shows liveness on
# stderr since a cold build takes many minutes.
run_make() {
	local what=$1
	shift
	log "$what"
	echo "=== make $* ===" >>"$BUILD_DIR/build.log"
	(
		# $$ is the main script even in this subshell: stop with it.
		while sleep 60 && kill -0 $$ 2>/dev/null; do
			log "  ... $what: $(grep -c '^  CC ' "$BUILD_DIR/build.log" ||
				true) objects compiled so far"
		done
	) &
	local ticker=$! rc=0
	make "$@" >>"$BUILD_DIR/build.log" 2>&1 || rc=$?
	kill "$ticker" 2>/dev/null || true
	wait "$ticker" 2>/dev/null || true
	return "$rc"
}

build_kernel() {
	local jobs
	jobs=$(nproc)
	mkdir -p "$BUILD_DIR"
	: >"$BUILD_DIR/build.log"
	log "build dir $BUILD_DIR (log: $BUILD_DIR/build.log)"

	run_make "config: $BASE" -C "$SRC_DIR" O="$BUILD_DIR" "$BASE" ||
		return 1
	# merge_config.sh puts its temp files in the cwd; keep them out of
	# the shared source tree.
	(cd "$BUILD_DIR" &&
		"$SRC_DIR/scripts/kconfig/merge_config.sh" -m -O "$BUILD_DIR" \
			"$BUILD_DIR/.config" "$FRAGMENT") >>"$BUILD_DIR/build.log" 2>&1 ||
		return 1
	run_make "config: olddefconfig" -C "$BUILD_DIR" olddefconfig || return 1
	verify_config

	# 'all' = vmlinux + bzImage + modules; the modules pass is what writes
	# Module.symvers, without which external modules get modpost errors
	# for every kernel symbol they use. modules_prepare is implied, named
	# for clarity since external module builds depend on it.
	run_make "compiling with -j$jobs (cold: ~6-11 min on 2 cores)" \
		-C "$BUILD_DIR" -j"$jobs" all modules_prepare || return 1

	local f
	for f in arch/x86/boot/bzImage vmlinux Module.symvers scripts/mod/modpost; do
		[ -e "$BUILD_DIR/$f" ] || { log "missing $f after build"; return 1; }
	done
	{
		echo "recipe=$RECIPE base=$BASE source=$SRC_VERSION"
		echo "gcc=$(gcc_version)"
		echo "release=$(cat "$BUILD_DIR/include/config/kernel.release")"
		date -u +%FT%TZ
	} >"$BUILD_DIR/$OK_STAMP"
}

fail_with_log() {
	touch "$BUILD_DIR/$FAILED_STAMP"
	log "build failed; tail of $BUILD_DIR/build.log:"
	tail -n 60 "$BUILD_DIR/build.log" >&2 || true
	exit 1
}

unpack_source
log "checkpatch: $SRC_DIR/scripts/checkpatch.pl"

if [ -d "$BUILD_DIR" ] && [ ! -f "$BUILD_DIR/$FAILED_STAMP" ]; then
	# An interrupted run (CI timeout, Ctrl-C): make can usually resume,
	# which saves most of a cold build. A SIGKILL may have left a truncated
	# object behind, so if resuming fails, start over once from scratch.
	log "resuming interrupted build"
	if ! build_kernel; then
		log "resume failed; rebuilding from scratch"
		rm -rf "$BUILD_DIR"
		build_kernel || fail_with_log
	fi
else
	# A dir that failed before would fail the same way if resumed.
	rm -rf "$BUILD_DIR"
	build_kernel || fail_with_log
fi

log "done: $(cut -d= -f2 <<<"$(grep ^release= "$BUILD_DIR/$OK_STAMP")")"
echo "$BUILD_DIR"
