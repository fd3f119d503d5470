#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the uniqd test VM (busybox). Loads uniqd.ko, runs every program in
# /tests (or /demo for "make run", /bench for "make bench"), unloads the
# module and checks that the kernel is still clean. Each result is one line
# on the second serial port (/dev/ttyS1); everything else goes to the console.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
export PATH=/bin:/sbin:/usr/bin
export UNIQD_RESULTS=/dev/ttyS1
export HOME=/tmp
export UNIQD_SCALE=$(cat /etc/uniqd-scale 2>/dev/null || echo quick)
seed=$(cat /etc/uniqd-seed 2>/dev/null)
[ -n "$seed" ] && export UNIQD_SEED=$seed
stty -F /dev/ttyS1 raw -echo 2>/dev/null

# Hold the result port open for the whole run: reopening it for every line
# once lost a line as the port went through close and open again.
exec 3>>"$UNIQD_RESULTS"
res() { echo "$*" >&3; }
mode=$(cat /etc/uniqd-mode)
test_timeout=$(cat /etc/uniqd-test-timeout)
echo "uniqd-vm: kernel $(uname -r), mode $mode, $(nproc) cpus"

# Taint before the module goes in; O (out of tree) and E (unsigned) are the
# only flags loading uniqd may add (and N, once KUnit tests ran).
taint_before=$(cat /proc/sys/kernel/tainted)

for m in $(cat /etc/uniqd-guest-modules 2>/dev/null); do
	insmod "/modules/$m" || res "not ok vm.insmod-$(basename "$m" .ko): status $?"
done

if insmod /uniqd.ko $(cat /etc/uniqd-module-params 2>/dev/null); then
	res "ok vm.insmod"
else
	res "not ok vm.insmod: status $?"
fi

# KUnit suites run at insmod of the test module; the host parses the KTAP.
# Running KUnit tests taints the kernel with N (TAINT_TEST, 262144).
taint_ok=$((4096 | 8192))
if [ -f /uniqd_kunit.ko ]; then
	insmod /uniqd_kunit.ko || res "not ok vm.insmod-kunit: status $?"
	rmmod uniqd_kunit || res "not ok vm.rmmod-kunit: status $?"
	taint_ok=$((taint_ok | 262144))
fi

dir=/tests
[ "$mode" = run ] && dir=/demo
[ "$mode" = bench ] && dir=/bench
# The order: every program by its name, then those of
# /etc/uniqd-last-tests (tools/testing/vm/last-tests.txt) in its order.
last=$(tr '\n' ' ' 2>/dev/null < /etc/uniqd-last-tests)
progs=
for t in "$dir"/*; do
	case " $last " in *" $(basename "$t") "*) continue ;; esac
	progs="$progs $t"
done
for name in $last; do
	progs="$progs $dir/$name"
done
# The host checks that every program announced here reported its exit.
n=0
for t in $progs; do
	[ -x "$t" ] && n=$((n + 1))
done
res "plan $n"
for t in $progs; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	echo "uniqd-vm: running $name"
	timeout "$test_timeout" "$t" </dev/null >/dev/console 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		res "ok vm.exit.$name"
	else
		res "not ok vm.exit.$name: exit status $rc"
	fi
done

# Leaks are looked for twice: with uniqd still loaded, so that the
# backtraces of its objects have names, and after rmmod (below).
leaks=
kmemleak_scan() {
	echo scan > /sys/kernel/debug/kmemleak
	sleep 6
	echo scan > /sys/kernel/debug/kmemleak
	found=$(cat /sys/kernel/debug/kmemleak)
	[ -n "$found" ] || return 0
	echo "$found"
	leaks="$leaks$found
"
	# Reported once: the next scan shows only new ones.
	echo clear > /sys/kernel/debug/kmemleak
}
[ -e /sys/kernel/debug/kmemleak ] && kmemleak_scan

if rmmod uniqd; then
	res "ok vm.rmmod"
else
	res "not ok vm.rmmod: status $?"
fi

taint=$(cat /proc/sys/kernel/tainted)
bad=$(( taint & ~taint_ok & ~taint_before ))
if [ "$taint_before" -ne 0 ] || [ "$bad" -ne 0 ]; then
	res "not ok vm.taint: before $taint_before after $taint"
else
	res "ok vm.taint"
fi

# kmemleak reports only objects older than 5 s: scan, wait, scan again.
if [ -e /sys/kernel/debug/kmemleak ]; then
	kmemleak_scan
	if [ -n "$leaks" ]; then
		res "not ok vm.kmemleak: $(echo "$leaks" | grep -c 'unreferenced object') objects"
	else
		res "ok vm.kmemleak"
	fi
fi

res "UNIQD-DONE"
sync
poweroff -f
