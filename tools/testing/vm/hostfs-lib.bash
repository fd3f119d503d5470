# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the scripts the host-userland guest runs as root
# (vm/hostfs-guest.sh: tools/demo/layout/guest-demo.sh,
# tools/bench/guest-realbuild.sh, guest-mlir.sh, mlir-corpus-guest.sh,
# tools/python/tests/guest-pytest.sh).
#
#   as_user CMD...
#
# Runs CMD as the unprivileged $UNIQD_GUEST_USER, USER set and HOME
# $HOSTFS_HOME (/tmp unless the script sets it). setpriv execs CMD itself:
# no PAM session (runuser's would add its own messages when a pool holder
# is killed), no extra process.
as_user() {
	local user=${UNIQD_GUEST_USER:?}

	setpriv --reuid="$user" --regid="$user" --init-groups \
		env HOME="${HOSTFS_HOME:-/tmp}" USER="$user" "$@"
}
#
#   hostfs_stage DIR FILE...
#
# Copies each FILE (a file or a directory) into DIR, made afresh, where the
# unprivileged $UNIQD_GUEST_USER can read, run and enter everything, and
# whose path has no spaces. The host's files keep their owners and modes
# in the guest, so that user cannot read a checkout the host keeps under a
# directory only its owner may enter (/root, `mktemp -d`), nor pass a path
# with spaces through CC="gcc -fplugin=PATH": what it runs from the tree
# (the GCC plugin, uniqdctl) is handed to it this way, as root, before
# dropping privileges. DIR should be on the guest's own tmpfs (/run): the
# copy never reaches the host.
hostfs_stage() {
	local dir=$1
	shift
	rm -rf "$dir" && install -d -m 0755 "$dir" || return 1
	cp -rL -- "$@" "$dir/" || return 1
	chmod -R u=rwX,go=rX "$dir"
}

#   hostfs_hold CTL POOL
#
# As $UNIQD_GUEST_USER, creates POOL and keeps it alive (`CTL --pool POOL
# --new hold`, CTL a staged uniqdctl) in the background; returns 0 once
# the pool answers `stats`, 1 after 20 s. The holder's pid is appended to
# HOSTFS_HOLDERS (the init also kills what a script leaves running): it is
# setpriv run straight from here, not as_user, so that $! is uniqdctl and
# not a subshell that would die alone.
HOSTFS_HOLDERS=()
hostfs_hold() {
	local ctl=$1 pool=$2 user=${UNIQD_GUEST_USER:?}
	setpriv --reuid="$user" --regid="$user" --init-groups env HOME=/tmp \
		"$ctl" --pool "$pool" --new hold &
	HOSTFS_HOLDERS+=($!)
	for _ in $(seq 100); do
		as_user "$ctl" --pool "$pool" --existing stats >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}
