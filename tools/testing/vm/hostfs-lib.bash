# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the scripts the host-userland guest runs as root
# (vm/hostfs-guest.sh: tools/demo/layout/guest-demo.sh,
# tools/bench/guest-realbuild.sh).
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
