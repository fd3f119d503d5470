#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The full-system guest: a clean Debian 12 root (vm/debian-root.sh, cached)
# with uniqd's Debian packages installed by apt in a chroot, DKMS building
# uniqd.ko there for Debian's 6.1 and 6.12 kernels; then that root, as an
# ext4 disk image, booted on 6.12 with its own initramfs, systemd and udev,
# and every tests/system/*.sh run in it as root by a systemd service. Last,
# vm/system/purge.sh purges the packages in a chroot of the same root (in the
# guest, depmod alone would take minutes under TCG).
#
#   system.sh OUTDIR DEBDIR
#
# DEBDIR holds the five .deb files (tools/deb-check.sh DEBDIR). Writes
# OUTDIR/results.txt ("ok system:<case>" / "not ok system:<case>: why",
# judged by vm/run-vm.sh like every VM run) and OUTDIR/console.log.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/tools/testing/vm
out=$1 debs=$2
ver=$(cat "$top/VERSION")
mkdir -p "$out"
res=$out/host.txt
: > "$res"
say() { echo "$*" >> "$res"; }
work=$(mktemp -d /tmp/uniqd-system.XXXXXX)
mounted=()
# shellcheck disable=SC2317  # called by the trap
cleanup() {
	local m
	for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null; done
	rm -rf --one-file-system "$work"
}
trap cleanup EXIT
# The host's lines join the guest's in results.txt.
finish() {
	cat "$res" >> "$out/results.txt"
	exit 0
}

if ! base=$("$vm/debian-root.sh" 2>"$out/debian-root.log" | tail -n 1) || [ ! -d "$base" ]; then
	: > "$out/results.txt"
	say "not ok system:host.root: no Debian root (see $out/debian-root.log)"
	finish
fi
say "ok system:host.root"
read -r rel61 rel612 < "$(dirname "$base")/kernels"

# A copy of the clean root; the packages go into it with apt, as a user
# installs them.
root=$work/root
cp -a "$base" "$root"
for m in proc sys dev; do
	mount --bind "/$m" "$root/$m" && mounted=("$root/$m" "${mounted[@]}")
done
mkdir -p "$root/tmp/uniqd-debs"
cp "$debs"/*.deb "$root/tmp/uniqd-debs/"
if chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 \
	sh -c 'apt-get install -y -q --no-install-recommends /tmp/uniqd-debs/*.deb' \
	>"$out/apt-install.log" 2>&1; then
	say "ok system:host.apt-install"
else
	say "not ok system:host.apt-install: see $out/apt-install.log"
fi
rm -rf "$root/tmp/uniqd-debs"
# What the tests need beyond the cached root, from Debian by apt into the
# copy (so adding a package does not rebuild the root): uidmap's newuidmap
# for tests/system/namespaces.sh, redis-server and redis-tools for
# tests/system/farm.sh. The .deb files stay in a cache of their own; the
# network is needed only while that is cold.
extra=(uidmap redis-server redis-tools)
debcache=${UNIQD_CACHE:-/var/cache/uniqd}/system-debs
mkdir -p "$debcache/partial"
mount --bind "$debcache" "$root/var/cache/apt/archives" &&
	mounted=("$root/var/cache/apt/archives" "${mounted[@]}")
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
in_copy() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }
if in_copy apt-get install -y -q --no-install-recommends "${extra[@]}" >"$out/apt-extra.log" 2>&1 ||
   { in_copy apt-get update -q && in_copy apt-get install -y -q --no-install-recommends "${extra[@]}"; } \
	>>"$out/apt-extra.log" 2>&1; then
	say "ok system:host.apt-extra"
	# farm.sh starts its own nodes; the packaged one stays off.
	in_copy systemctl disable --quiet redis-server >>"$out/apt-extra.log" 2>&1
else
	say "not ok system:host.apt-extra: ${extra[*]}: see $out/apt-extra.log"
fi
for r in "$rel61" "$rel612"; do
	st=$(chroot "$root" dkms status -m uniqd -v "$ver" -k "$r" 2>&1)
	if grep -q ': installed' <<< "$st" && ls "$root/lib/modules/$r/updates/dkms/"uniqd.ko* >/dev/null 2>&1; then
		say "ok system:host.dkms.$r"
	else
		say "not ok system:host.dkms.$r: '$st'"
	fi
done
unmount() {
	local m
	for m in "${mounted[@]}"; do umount -l "$m"; done
	mounted=()
}
unmount

# The guest's side: the runner, its service, the tests, what they need.
lib=$root/usr/local/lib/uniqd-system
mkdir -p "$lib/tests"
install -m 0755 "$vm/system/run-tests.sh" "$lib/run-tests"
# UNIQD_SYSTEM_TESTS="namespaces trace" installs only those (the inner loop).
if [ -n "${UNIQD_SYSTEM_TESTS:-}" ]; then
	for t in $UNIQD_SYSTEM_TESTS; do
		install -m 0644 "$top/tests/system/$t.sh" "$lib/tests/" ||
			say "not ok system:host.subset.$t: no tests/system/$t.sh"
	done
else
	install -m 0644 "$top"/tests/system/*.sh "$lib/tests/"
fi
install -m 0644 "$top/tests/system/result.bash" "$top/tests/system/farm-cluster.bash" "$lib/"
install -m 0644 "$top/tools/libuniqd/example/example.c" "$lib/"
# tests/system/gcc-plugin.sh: the layout demo, the log checker's source and
# busybox from Debian's source package, configured (vm/system/busybox-tree.sh,
# cached), in the home of the unprivileged user that builds it.
cp -r "$top/tools/demo/layout" "$lib/layout"
rm -f "$lib/layout/guest-demo.sh"
install -m 0644 "$top/tests/system/plugin_log_check.c" "$lib/"
# Another busybox slice (kbuild targets) than gcc-plugin.sh's, for a longer run.
echo "${UNIQD_BUSYBOX_SLICE:-}" > "$lib/busybox-slice"
if bbtree=$("$vm/system/busybox-tree.sh" 2>"$out/busybox-tree.log" | tail -n 1) && [ -d "$bbtree" ]; then
	tester=$(chroot "$root" id -u tester)
	cp -a "$bbtree" "$root/home/tester/busybox"
	chown -R "$tester:$tester" "$root/home/tester/busybox"
	say "ok system:host.busybox-tree"
else
	say "not ok system:host.busybox-tree: see $out/busybox-tree.log"
fi
echo "$ver" > "$lib/VERSION"
echo "$rel61 $rel612" > "$lib/kernels"
install -m 0644 "$vm/system/uniqd-system-test.service" "$root/etc/systemd/system/"
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf ../uniqd-system-test.service "$root/etc/systemd/system/multi-user.target.wants/"

img=$work/root.img
mb=$(du -sm "$root" | cut -f1)
cp "$root/boot/vmlinuz-$rel612" "$root/boot/initrd.img-$rel612" "$work/"
if ! truncate -s $(( mb * 5 / 4 + 512 ))M "$img" ||
   ! mkfs.ext4 -q -F -L uniqd-root -d "$root" "$img" >"$out/mkfs.log" 2>&1; then
	: > "$out/results.txt"
	say "not ok system:host.image: see $out/mkfs.log"
	finish
fi

"$vm/run-vm.sh" --name system --kernel "$work/vmlinuz-$rel612" \
	--initrd "$work/initrd.img-$rel612" --drive "$img" --out "$out" \
	--mem 1024 --timeout 2400 --append "root=/dev/vda rw" || true
rm -f "$img"

# The purge, in the root the image was made from.
for m in proc sys dev; do
	mount --bind "/$m" "$root/$m" && mounted=("$root/$m" "${mounted[@]}")
done
install -m 0755 "$vm/system/purge.sh" "$lib/purge"
chroot "$root" env LC_ALL=C.UTF-8 bash /usr/local/lib/uniqd-system/purge 3>&1 >/dev/null 2>&1 |
	sed -E 's/^(ok|not ok) /\1 system:/' >> "$res"
cp "$root/tmp/purge.log" "$out/purge.log" 2>/dev/null
grep -q 'purge\.clean' "$res" || say "not ok system:purge.clean: the purge reported nothing"
unmount
finish
