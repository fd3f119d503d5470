#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317  # the checks are called through check()
#
# Run by tools/testing/system.sh in a chroot of the full-system guest's root
# after the guest has run (the same packages, DKMS modules and files): `apt-get
# purge` of the five packages takes the module out of every kernel and
# leaves none of their files behind. In the guest, 6.12's depmod alone takes
# two minutes under TCG; here seconds. (tests/system/packages.sh checks in
# the guest that the module unloads.) Results on fd 3.
lib=${UNIQD_SYSTEM_LIB:-/usr/local/lib/uniqd-system}
ver=$(cat "$lib/VERSION")
read -r rel61 rel612 < "$lib/kernels"
pkgs=(uniqd-dkms libuniqd1 libuniqd-dev uniqd-tools uniqd-gcc-plugin)
res() { echo "$*" >&3; }
check() {
	local name=$1 why
	shift
	if why=$("$@" 2>&1); then
		res "ok $name"
	else
		res "not ok $name: $(echo "$why" | tail -n 3 | tr '\n' ' ')"
	fi
}

dpkg -L "${pkgs[@]}" 2>/dev/null | sort -u > /tmp/uniqd-files
purge() {
	local rc start=$SECONDS
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${pkgs[@]}" >/tmp/purge.log 2>&1
	rc=$?
	echo "apt-get purge: status $rc in $((SECONDS - start)) s" >> /tmp/purge.log
	[ "$rc" = 0 ] || { tail -n 5 /tmp/purge.log; return 1; }
	local left='' f p
	while read -r f; do
		[ -d "$f" ] && continue
		[ -e "$f" ] || [ -L "$f" ] && left+=" $f"
	done < /tmp/uniqd-files
	ls /lib/modules/*/updates/dkms/uniqd.ko* 2>/dev/null && left+=" (a uniqd.ko)"
	[ -e /var/lib/dkms/uniqd ] && left+=" /var/lib/dkms/uniqd"
	[ -e "/usr/src/uniqd-$ver" ] && left+=" /usr/src/uniqd-$ver"
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -qv 'not-installed' &&
			left+=" ($p: $(dpkg-query -W -f='${Status}' "$p"))"
	done
	[ -z "$left" ] || { echo "left:$left"; return 1; }
	# depmod ran: no kernel resolves "uniqd" any more.
	! modinfo -k "$rel61" uniqd >/dev/null 2>&1 && ! modinfo -k "$rel612" uniqd >/dev/null 2>&1
}
check purge.clean purge
exit 0
