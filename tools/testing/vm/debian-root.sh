#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build, or reuse from cache, a clean Debian 12 root filesystem for the
# full-system guest (tools/testing/system.sh): debootstrap, systemd and
# udev, a compiler, pkg-config, dkms, perf (linux-perf: the tracepoint
# recipe of Documentation/admin.rst, tests/system/trace.sh), and Debian's
# 6.1 and 6.12 kernels (the releases tools/testing/kernels.sh picks) with
# their headers and initramfs images. Nothing of uniqd is in it: the tests install the
# packages into a copy.
#
#   tools/testing/vm/debian-root.sh [--print-dir]
#
# --print-dir prints the root directory that would be used and exits, without
# building anything. The LAST line on stdout is the root directory; progress goes to stderr,
# apt's output to <cache>/debian-root-<key>.log.
#
# Cache: $UNIQD_CACHE (default /var/cache/uniqd)/debian-root-<key>, where
# <key> hashes this script, the mirror, the kernel releases and debootstrap's
# version. A root is used only with its success stamp; builds are serialised
# with flock on <cache>/.debian-root.lock and done in a temporary directory
# renamed into place at the end, so a failed or killed build leaves nothing
# that looks usable.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${UNIQD_CACHE:-/var/cache/uniqd}
MIRROR=${UNIQD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${UNIQD_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
SUITE=bookworm
STAMP=.uniqd-root-ok
# Bump when what ends up in the root changes without this file changing.
RECIPE=1

start=$SECONDS
log() { printf 'debian-root [%4ds]: %s\n' $((SECONDS - start)) "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

kernels=$("$here/../kernels.sh") || die "no test kernels (run tools/deps.sh)"
rel61=$(awk '$1 == "6.1" { print $2 }' <<< "$kernels")
rel612=$(awk '$1 == "6.12" { print $2 }' <<< "$kernels")
if [ -z "$rel61" ] || [ -z "$rel612" ]; then die "kernels.sh listed no 6.1 or 6.12"; fi

# The image packages the host has for those releases (6.12's is -unsigned).
image_pkg() {
	dpkg-query -S "/boot/vmlinuz-$1" 2>/dev/null | cut -d: -f1 | head -n 1
}
img61=$(image_pkg "$rel61") img612=$(image_pkg "$rel612")
if [ -z "$img61" ] || [ -z "$img612" ]; then die "no image package owns /boot/vmlinuz-$rel61 or -$rel612"; fi
PKGS=(systemd systemd-sysv udev kmod dkms gcc make libc6-dev pkgconf e2fsprogs
      procps initramfs-tools linux-perf "$img61" "linux-headers-$rel61" "$img612" "linux-headers-$rel612")

key=$( { echo "$RECIPE $SUITE $MIRROR $SECURITY ${PKGS[*]}"
	 sha256sum < "$0"
	 dpkg-query -W -f='${Version}' debootstrap; } | sha256sum | cut -c1-12)
dir=$CACHE/debian-root-$key
if [ "${1:-}" = --print-dir ]; then
	echo "$dir/root"
	exit 0
fi
mkdir -p "$CACHE"

ready() { [ -f "$dir/$STAMP" ]; }
if ready; then
	echo "$dir/root"
	exit 0
fi
exec 9>"$CACHE/.debian-root.lock"
if ! flock -n 9; then
	log "another build holds $CACHE/.debian-root.lock; waiting"
	flock 9
fi
if ready; then
	echo "$dir/root"
	exit 0
fi
command -v debootstrap >/dev/null || die "debootstrap is not installed (run tools/deps.sh)"

tmp=$(mktemp -d "$CACHE/.debian-root-build.XXXXXX")
root=$tmp/root
applog=$CACHE/debian-root-$key.log
: > "$applog"
mounted=()
# shellcheck disable=SC2317  # called by the trap
cleanup() {
	local m
	for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
	# --one-file-system: never into a bind mount left behind.
	[ -n "${tmp:-}" ] && rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT

log "debootstrap $SUITE from $MIRROR (cold: several minutes)"
debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" >>"$applog" 2>&1 ||
	die "debootstrap failed: see $applog"

cat > "$root/etc/apt/sources.list" <<EOT
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY $SUITE-security main
EOT
# No daemon may start inside the chroot.
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
for m in proc sys dev; do
	mount --bind "/$m" "$root/$m"
	mounted=("$root/$m" "${mounted[@]}")
done
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }

log "installing ${PKGS[*]}"
in_root apt-get update -q >>"$applog" 2>&1 || die "apt-get update failed: see $applog"
in_root apt-get install -y -q --no-install-recommends "${PKGS[@]}" >>"$applog" 2>&1 ||
	die "apt-get install failed: see $applog"
in_root apt-get clean
for r in "$rel61" "$rel612"; do
	if [ ! -f "$root/boot/initrd.img-$r" ] || [ ! -d "$root/lib/modules/$r/build" ]; then
		die "no initrd or headers for $r in the root"
	fi
done

# The guest: its root is /dev/vda, it has no network, root logs in on the
# console without a password, and "tester" is the unprivileged user.
echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" > "$root/etc/fstab"
echo uniqd-guest > "$root/etc/hostname"
in_root passwd -d root >/dev/null
in_root useradd -m -u 1000 -s /bin/bash tester
rm -f "$root/usr/sbin/policy-rc.d"

for m in "${mounted[@]}"; do umount -l "$m"; done
mounted=()
mkdir -p "$dir"
mv "$root" "$dir/root"
echo "$rel61 $rel612" > "$dir/kernels"
touch "$dir/$STAMP"
log "done: $dir/root"
echo "$dir/root"
