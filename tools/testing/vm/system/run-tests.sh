#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The full-system guest's test runner (tools/testing/system.sh installs it
# as /usr/local/lib/uniqd-system/run-tests and starts it from
# uniqd-system-test.service once the system is up). Runs every
# /usr/local/lib/uniqd-system/tests/*.sh as root, in name order, with the
# result port open as fd 3; reports like guest-init.sh (plan, vm.exit.*,
# vm.rmmod, vm.taint, UNIQD-DONE) on /dev/ttyS1, then powers the guest off.
lib=/usr/local/lib/uniqd-system
stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>>/dev/ttyS1
res() { echo "$*" >&3; }
echo "uniqd-system: kernel $(uname -r), $(nproc) cpus"

# A test that exits 75 asks for a reboot: the runner notes where it was in
# $lib/resume, says UNIQD-REBOOT (run-vm.sh boots the same disk again) and
# reboots; at the next boot it runs that test again with
# UNIQD_SYSTEM_REBOOTED=1, then the rest. Once only.
tests=("$lib"/tests/*.sh)
again=
if [ -f "$lib/resume" ]; then
	again=$(cat "$lib/resume")
	rm -f "$lib/resume"
	touch "$lib/rebooted"
	echo "uniqd-system: rebooted for $again"
else
	res "plan ${#tests[@]}"
fi
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	if [ -n "$again" ]; then
		[ "$name" = "$again" ] || continue
		again=
	fi
	echo "uniqd-system: running $name"
	UNIQD_SYSTEM_LIB=$lib UNIQD_SYSTEM_REBOOTED=$([ -f "$lib/rebooted" ] && echo 1) \
		timeout 1500 bash "$t" </dev/null >/dev/console 2>&1
	rc=$?
	if [ "$rc" -eq 75 ] && [ ! -f "$lib/rebooted" ]; then
		echo "$name" > "$lib/resume"
		res "UNIQD-REBOOT"
		exec 3>&-
		sync
		systemctl reboot
		exit 0
	fi
	if [ "$rc" -eq 0 ]; then
		res "ok vm.exit.$name"
	else
		res "not ok vm.exit.$name: exit status $rc"
	fi
done

# The module goes out as it came in (system.sh then purges the packages in a
# chroot of this root).
if modprobe -r uniqd && [ ! -d /sys/module/uniqd ]; then
	res "ok vm.rmmod"
else
	res "not ok vm.rmmod: uniqd did not unload"
fi

# uniqd was loaded at boot: O (out of tree) and E (unsigned) are the only
# taint flags it may have added, and nothing else may have tainted the kernel.
taint=$(cat /proc/sys/kernel/tainted)
if [ $(( taint & ~(4096 | 8192) )) -eq 0 ]; then
	res "ok vm.taint"
else
	res "not ok vm.taint: $taint"
fi
res "UNIQD-DONE"
exec 3>&-
sync
systemctl poweroff --no-block
