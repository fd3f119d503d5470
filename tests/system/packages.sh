#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317  # the checks are called through check()
#
# Full-system guest (tools/testing/system.sh): the five Debian packages as a
# user has them after `apt install` and a reboot. uniqd.ko was built by DKMS
# for 6.1 and 6.12 when the packages were installed, systemd-modules-load
# loaded it at boot from the packaged modules-load.d file, and udev made
# /dev/uniqd with the packaged rule. A program is compiled with pkg-config
# and run as an unprivileged user.
# Results go to fd 3 as "ok system.<case>" / "not ok system.<case>: why".
lib=${UNIQD_SYSTEM_LIB:-/usr/local/lib/uniqd-system}
ver=$(cat "$lib/VERSION")
read -r rel61 rel612 < "$lib/kernels"
rel=$(uname -r)
SUITE=packages
# shellcheck source=tests/system/result.bash
. "${UNIQD_SYSTEM_LIB:-/usr/local/lib/uniqd-system}/result.bash"

# systemd-modules-load logs nothing for a module it loads, so: uniqd is in
# when the tests start (nothing of them has touched it), the service
# succeeded, and running it again after an rmmod loads uniqd again, which
# only the packaged modules-load.d file can have asked for.
booted_module() {
	[ -d /sys/module/uniqd ] || { echo "uniqd is not loaded after boot"; return 1; }
	[ "$(systemctl show -P Result systemd-modules-load)" = success ] ||
		{ systemctl status systemd-modules-load; return 1; }
	[ "$(cat /sys/module/uniqd/version)" = "$ver" ] || { echo "version $(cat /sys/module/uniqd/version)"; return 1; }
	f=$(modinfo -n uniqd)
	case $f in
	/lib/modules/"$rel"/updates/dkms/uniqd.ko*) ;;
	*) echo "uniqd.ko is $f, not DKMS's"; return 1 ;;
	esac
	grep -qx uniqd /usr/lib/modules-load.d/uniqd.conf || return 1
	modprobe -r uniqd || return 1
	systemctl restart systemd-modules-load || return 1
	[ -d /sys/module/uniqd ] || { echo "systemd-modules-load did not load uniqd"; return 1; }
}
check boot.modules-load booted_module

dkms_both() {
	local r
	for r in "$rel61" "$rel612"; do
		ls /lib/modules/"$r"/updates/dkms/uniqd.ko* >/dev/null || return 1
		modinfo -k "$r" -F version uniqd | grep -qx "$ver" || { echo "$r: no uniqd $ver"; return 1; }
	done
	dkms status uniqd
}
check dkms.both-kernels dkms_both

# The module makes the node 0666 itself: the rule must be the one that set it.
udev_rule() {
	[ "$(stat -c '%a %U %G' /dev/uniqd)" = "666 root root" ] || { stat /dev/uniqd; return 1; }
	udevadm test /sys/class/misc/uniqd 2>&1 | grep -E '60-uniqd\.rules:[0-9]+ MODE 0666' ||
		{ udevadm test /sys/class/misc/uniqd 2>&1 | tail -n 20; return 1; }
}
check udev.rule-mode udev_rule

files() {
	local f
	for f in /usr/share/man/man3/libuniqd.3.gz /usr/share/man/man3/uniqd_open.3.gz \
		 /usr/share/man/man4/uniqd.4.gz /usr/share/man/man8/uniqdctl.8.gz \
		 /usr/share/man/man1/uniqd-b3sum.1.gz /usr/include/libuniqd.h \
		 /usr/include/linux/uniqd.h; do
		[ -s "$f" ] || { echo "no $f"; return 1; }
	done
	[ "$(pkg-config --modversion libuniqd)" = "$ver" ] || { echo "pkg-config: $(pkg-config --modversion libuniqd 2>&1)"; return 1; }
}
check files.man-pc files

# What the README tells a user to type, as that user.
install -o tester -g tester -m 0644 "$lib/example.c" /home/tester/example.c
example() {
	# shellcheck disable=SC2016  # expanded by the user's shell
	runuser -u tester -- sh -c 'cd && cc example.c $(pkg-config --cflags --libs libuniqd) -o example && ./example' || return 1
	ldd /home/tester/example | grep -E 'libuniqd\.so\.1 => (/usr)?/lib/' ||
		{ ldd /home/tester/example; return 1; }
}
check example.unprivileged example

tools() {
	uniqdctl --version | grep -qx "uniqdctl $ver, libuniqd $ver" || { uniqdctl --version; return 1; }
	# BLAKE3("abc"), the official value.
	[ "$(printf abc | uniqd-b3sum --no-names)" = \
	  6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85 ]
}
check tools.versions tools

exit 0
