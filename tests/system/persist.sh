#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317  # the checks are called through check()
#
# Full-system guest (tools/testing/system.sh): the packaged
# uniqd-persist.service keeps the pools /etc/uniqd/persist.conf lists. A
# pool it holds gets entries; stopping the service (as a shutdown does)
# saves it and the pool is gone; starting it (as a boot does) restores it:
# every handle written down before resolves to the same content, new
# content gets handles never issued before, and the save timer's service
# saves what came since. A snapshot that cannot be restored is moved aside
# and the pool starts empty. Then the real thing: the units enabled,
# handles written down, the guest rebooted (this test exits 75 and the
# runner, vm/system/run-tests.sh, reboots and runs it again with
# UNIQD_SYSTEM_REBOOTED=1), and the same checks after the boot.
# Results on fd 3 as "ok persist.<case>" / "not ok persist.<case>: why".
SUITE=persist
# shellcheck source=tests/system/result.bash
. "${UNIQD_SYSTEM_LIB:-/usr/local/lib/uniqd-system}/result.bash"
work=$(mktemp -d)
snap=/var/lib/uniqd/kept.snap

keep=/var/lib/uniqd-system-reboot

[ -d /sys/module/uniqd ] || modprobe uniqd
cleanup() {
	systemctl disable --now uniqd-persist-save.timer uniqd-persist.service 2>/dev/null
	rm -rf "$work" /etc/uniqd /var/lib/uniqd "$keep"
}
trap cleanup EXIT

# Every handle of FILE ("handle status 'content'" lines) resolves to its
# content, and a new key gets a handle above all of them, in the same pool.
handles_hold() {
	local h k max
	while read -r h _ k; do
		uniqdctl -p kept -e resolve "$h" | grep -qF "$k" || { echo "$h no longer resolves to $k"; return 1; }
	done < "$1"
	max=$(awk '{ print $1 }' "$1" | sort | tail -n 1)
	h=$(uniqdctl -p kept -e intern "new-$2" | awk '{ print $1 }')
	echo "last before: $max, new: $h"
	if [[ ! "$h" > "$max" ]] || [ "${h:0:10}" != "${max:0:10}" ]; then
		echo "the new handle $h is not above $max in the same pool"
		return 1
	fi
}

after_reboot() {
	systemctl is-active uniqd-persist.service || return 1
	journalctl -b -u uniqd-persist --no-pager | grep 'restored from' || return 1
	handles_hold "$keep/handles" reboot
}
if [ -n "${UNIQD_SYSTEM_REBOOTED:-}" ]; then
	check reboot.restored after_reboot
	exit 0
fi

started() {
	mkdir -p /etc/uniqd
	printf '# test\nkept --share-all\n' > /etc/uniqd/persist.conf
	systemctl start uniqd-persist.service || { journalctl -u uniqd-persist -n 20; return 1; }
	systemctl is-active uniqd-persist.service
	uniqdctl -p kept -e stats | head -n 1
	seq -f 'key-%g' 200 | uniqdctl -p kept -e intern > "$work/before" || return 1
	[ "$(wc -l < "$work/before")" -eq 200 ]
}
check service.start started

stopped_saves() {
	systemctl stop uniqd-persist.service || return 1
	ls -l "$snap" || return 1
	if uniqdctl -p kept -e stats > "$work/gone" 2>&1; then
		echo "the pool outlived its holder"; return 1
	fi
	grep -q ENOENT "$work/gone" || { cat "$work/gone"; return 1; }
}
check service.stop-saves stopped_saves

restored() {
	systemctl start uniqd-persist.service || { journalctl -u uniqd-persist -n 20; return 1; }
	journalctl -u uniqd-persist -n 5 --no-pager | grep 'restored from'
	handles_hold "$work/before" restore
}
check service.restores restored

timer_saves() {
	local before after
	systemctl cat uniqd-persist-save.timer | grep -q 'OnUnitActiveSec=15min' || return 1
	before=$(stat -c %Y "$snap")
	sleep 1.1
	systemctl start uniqd-persist-save.service || return 1
	after=$(stat -c %Y "$snap")
	[ "$after" -gt "$before" ] || { echo "the save service did not write $snap"; return 1; }
	# The newest entry is in it: stop and start, and it resolves.
	h=$(uniqdctl -p kept -e lookup new-restore | awk '{ print $1 }')
	systemctl restart uniqd-persist.service || return 1
	uniqdctl -p kept -e resolve "$h" | grep -q new-restore
}
check timer.saves timer_saves

bad_snapshot() {
	systemctl stop uniqd-persist.service || return 1
	truncate -s 100 "$snap"
	systemctl start uniqd-persist.service || return 1
	journalctl -u uniqd-persist -n 10 --no-pager | grep 'moved aside' || return 1
	ls /var/lib/uniqd/kept.snap.bad-* || return 1
	[ "$(uniqdctl -p kept -e stats | awk '$1 == "entries" { print $2 }')" = 0 ] ||
		{ echo "the pool did not start empty"; return 1; }
}
check bad-snapshot bad_snapshot

# Enabled as an administrator would, with handles written down; then the
# runner reboots the guest and runs this again (after_reboot above).
before_reboot() {
	systemctl stop uniqd-persist.service
	rm -rf /var/lib/uniqd
	systemctl enable uniqd-persist.service uniqd-persist-save.timer || return 1
	systemctl start uniqd-persist.service || return 1
	mkdir -p "$keep"
	seq -f 'boot-%g' 300 | uniqdctl -p kept -e intern > "$keep/handles" || return 1
	[ "$(wc -l < "$keep/handles")" -eq 300 ] && touch "$keep/ready"
}
check reboot.prepare before_reboot
if [ -f "$keep/ready" ]; then
	rm -rf "$work"
	trap - EXIT
	exit 75
fi
