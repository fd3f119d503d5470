#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what uniqd's build, tests and VM runs need from Debian's packages.
# Does nothing when everything is present, so every make target may call it.
#
#   tools/deps.sh
#
# linux-source-6.12 is for the debug kernel and for checkpatch.pl;
# liblmdb-dev for the benchmarks' LMDB peer (tools/bench/ubench_lmdb.c).
set -euo pipefail

want=(qemu-system-x86 busybox-static cpio gcc make libc6-dev kmod xz-utils rsync
      python3 sparse bc flex bison libelf-dev libssl-dev dwarves
      linux-image-amd64 linux-headers-amd64 gnuplot-nox pkg-config dkms
      linux-source-6.12 build-essential liblmdb-dev)

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

# Debian's 6.12 kernel (bookworm backports naming): an unsigned image and its
# headers. Any installed 6.12 with a build tree will do; otherwise take the
# newest one the archive offers.
have612=
for b in /lib/modules/6.12.*-amd64/build; do
	[ -d "$b" ] && [ -e "/boot/vmlinuz-$(basename "$(dirname "$b")")" ] && have612=1
done

updated=
apt_update() {
	[ -n "$updated" ] && return
	echo "deps: apt-get update" >&2
	apt-get update -q >/dev/null
	updated=1
}

if [ -z "$have612" ]; then
	apt_update
	v=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9.]+\+deb12-amd64-unsigned$' |
	    awk '{print $1}' | sed 's/^linux-image-//; s/-unsigned$//' | sort -V | tail -n 1)
	if [ -z "$v" ]; then
		echo "deps: no linux-image-6.12.*-amd64-unsigned in the archive" >&2
		exit 1
	fi
	missing+=("linux-image-$v-unsigned" "linux-headers-$v")
fi

if [ ${#missing[@]} -gt 0 ]; then
	apt_update
	echo "deps: installing ${missing[*]}" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" >/dev/null
fi
