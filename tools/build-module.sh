#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build uniqd.ko (and, when the kernel has KUnit, uniqd_kunit.ko) for one
# kernel build tree, in a private copy of the sources so that builds for
# several kernels never share object files.
#
#   build-module.sh KDIR OUTDIR [make arguments...]
set -euo pipefail
kdir=$1 out=$2
shift 2
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/src"
rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
	"$top/VERSION" "$top/Kbuild" "$top/uniqd" "$top/include" "$out/src/" 2>/dev/null ||
	rsync -a "$top/VERSION" "$top/Kbuild" "$top/uniqd" "$top/include" "$out/src/"
# The KUnit suites use the official BLAKE3 digests the userspace tests use.
cp "$top/tests/blake3_vectors.h" "$out/src/uniqd/kunit/blake3_vectors.h"
# kbuild cannot build in a directory whose path has a space ("building
# multiple external modules is not supported"), as a checkout in "~/my
# projects" has: it builds through a symlink to it from a private directory,
# named after OUTDIR so that the next build is incremental.
m=$out/src
case $m in *[[:space:]]*)
	case $m in /*) ;; *) m=$PWD/$m ;; esac
	links=/tmp/uniqd-kbuild-$(id -u)
	mkdir -p -m 0700 "$links"
	if [ ! -O "$links" ] || [ -L "$links" ]; then
		echo "build-module: $links is not a directory of mine" >&2
		exit 1
	fi
	# Links to trees removed since (a clone deleted) go.
	find "$links" -mindepth 1 -maxdepth 1 -xtype l -delete
	link=$links/$(printf '%s' "$m" | sha1sum | cut -c1-16)
	ln -sfn "$m" "$link"
	m=$link ;;
esac
make -s -C "$kdir" M="$m" W=1 "$@" modules >"$out/build.log" 2>&1 || {
	cat "$out/build.log" >&2
	exit 1
}
# W=1 must stay warning-free on every kernel we support.
if grep -E 'warning:|error:' "$out/build.log" >&2; then
	echo "build-module: warnings building for $kdir" >&2
	exit 1
fi
