#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the host-userland guest (tools/testing/vm/hostfs-guest.sh):
# loads the 9p and overlay modules and uniqd.ko, mounts the host's root
# (exported read-only by QEMU over virtio-9p) with a tmpfs overlay on top,
# and runs one script as root chrooted into it: the host's own gcc, shell
# and tools beside a loaded uniqd.ko. Reports like guest-init.sh on the
# second serial port (plan, vm.insmod, vm.exit.<name>, vm.rmmod, vm.taint,
# UNIQD-DONE); the script writes its own "ok"/"not ok" lines to fd 3.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>>/dev/ttyS1
res() { echo "$*" >&3; }
# NAME SCRIPT ARGS CWD USER_UID USER_NAME OUT TIMEOUT (hostfs-guest.sh writes
# them, quoted: paths may hold spaces).
. /etc/uniqd-hostfs.conf
echo "uniqd-hostfs: kernel $(uname -r), $(nproc) cpus, running $SCRIPT"
res "plan 1"

for m in $(cat /etc/uniqd-guest-modules); do
	insmod "/modules/$m" || res "not ok vm.insmod-$(basename "$m" .ko): status $?"
done
taint_before=$(cat /proc/sys/kernel/tainted)
if insmod /uniqd.ko; then
	res "ok vm.insmod"
else
	res "not ok vm.insmod: status $?"
fi

# The host's root, read-only; writes land in a tmpfs (half the guest's RAM).
# cache=loose: the host's files do not change under a run, and compilers
# stat and open the same headers thousands of times.
r=/newroot
mkdir -p /host /ovl "$r"
ok=1
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 host /host || ok=
mount -t tmpfs -o mode=0755 ovl /ovl && mkdir -p /ovl/upper /ovl/work || ok=
mount -t overlay -o lowerdir=/host,upperdir=/ovl/upper,workdir=/ovl/work overlay "$r" || ok=
if [ -n "$ok" ]; then
	mount -t proc proc "$r/proc"
	mount -t sysfs sys "$r/sys"
	mount -t devtmpfs dev "$r/dev"
	mkdir -p "$r/dev/pts" "$r/dev/shm"
	# What udev or systemd would add: bash's <(...) needs /dev/fd.
	ln -sf /proc/self/fd "$r/dev/fd"
	ln -sf /proc/self/fd/0 "$r/dev/stdin"
	ln -sf /proc/self/fd/1 "$r/dev/stdout"
	ln -sf /proc/self/fd/2 "$r/dev/stderr"
	mount -t devpts devpts "$r/dev/pts"
	mount -t tmpfs shm "$r/dev/shm"
	mount -t tmpfs run "$r/run"
	# A writable directory the host reads after the run (the same path as
	# on the host): logs, reports.
	if [ -n "$OUT" ]; then
		mkdir -p "$r$OUT"
		mount -t 9p -o trans=virtio,version=9p2000.L,rw out "$r$OUT" ||
			res "not ok vm.hostfs-out: cannot mount the output directory"
	fi
	# The unprivileged user, in the overlay's copy of the host's files.
	echo "$USER_NAME:x:$USER_UID:$USER_UID:uniqd guest user:/home/$USER_NAME:/bin/bash" >> "$r/etc/passwd"
	echo "$USER_NAME:x:$USER_UID:" >> "$r/etc/group"
	mkdir -p "$r/home/$USER_NAME"
	chown "$USER_UID:$USER_UID" "$r/home/$USER_NAME"
	res "ok vm.hostfs-mount"
else
	res "not ok vm.hostfs-mount: 9p or overlay mount failed"
fi

name=$NAME
if [ -n "$ok" ]; then
	echo "uniqd-hostfs: running $name"
	# ARGS: the host's words, each single-quoted (hostfs-guest.sh).
	eval "set -- $ARGS"
	timeout "$TIMEOUT" chroot "$r" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM=dumb UNIQD_GUEST_USER="$USER_NAME" \
		UNIQD_GUEST_OUT="$OUT" UNIQD_GUEST_NAME="$name" \
		/bin/bash -c 'cd "$1" && shift && exec /bin/bash "$@"' - "$CWD" "$SCRIPT" "$@" \
		</dev/null >/dev/console 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		res "ok vm.exit.$name"
	else
		res "not ok vm.exit.$name: exit status $rc"
	fi
else
	res "not ok vm.exit.$name: not run"
fi

# Whatever the script left running (a pool holder, a stuck compiler) must
# not keep uniqd busy: the shell is PID 1, which kill -1 spares.
kill -TERM -1 2>/dev/null
sleep 1
kill -KILL -1 2>/dev/null
sleep 1
if rmmod uniqd; then
	res "ok vm.rmmod"
else
	res "not ok vm.rmmod: status $?"
fi
taint=$(cat /proc/sys/kernel/tainted)
bad=$(( taint & ~(4096 | 8192) & ~taint_before ))
if [ "$taint_before" -ne 0 ] || [ "$bad" -ne 0 ]; then
	res "not ok vm.taint: before $taint_before after $taint"
else
	res "ok vm.taint"
fi
[ -n "$OUT" ] && umount "$r$OUT" 2>/dev/null
res "UNIQD-DONE"
sync
poweroff -f
