#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# VERSION is the only place the release is written: check that everything
# that states it says the same, and that no file repeats it by hand. One
# result line per check:
#
#   ok host:version.<check>
#   not ok host:version.<check>: why
#
#   tools/version-check.sh BUILDDIR
#
# BUILDDIR holds a `make userspace` (bin/uniqdctl, bin/b3sum, the generated
# include/libuniqd_version.h). The module's MODULE_VERSION and the .pc are
# checked by tools/install-check.sh, where they are installed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
b=${1:-$top/build}
failed=0
ok() { echo "ok host:version.$1"; }
bad() { echo "not ok host:version.$1: $2"; failed=1; }
ver=$(cat "$top/VERSION")

if [[ $ver =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then ok format; else bad format "VERSION is '$ver'"; fi

# debian/changelog: upstream part of the newest entry.
deb=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version 2>&1)
if [ "${deb%-*}" = "$ver" ]; then ok changelog; else bad changelog "debian/changelog says '$deb'"; fi

out=$("$b/bin/uniqdctl" --version 2>/dev/null | head -n 1)
if [ "$out" = "uniqdctl $ver, libuniqd $ver" ]; then ok uniqdctl; else bad uniqdctl "'$out'"; fi
out=$("$b/bin/b3sum" --version 2>&1)
if [ "$out" = "b3sum (uniqd) $ver" ]; then ok b3sum; else bad b3sum "'$out'"; fi
if grep -qx "#define LIBUNIQD_VERSION_STRING	\"$ver\"" "$b/include/libuniqd_version.h"; then
	ok header
else
	bad header "$b/include/libuniqd_version.h: $(grep STRING "$b/include/libuniqd_version.h" 2>&1)"
fi

work=$(mktemp -d /tmp/uniqd-version-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
if make -s -C "$top" dkms-source B="$work" >"$work/log" 2>&1 &&
   grep -qx "PACKAGE_VERSION=\"$ver\"" "$work/dkms/uniqd-$ver/dkms.conf" &&
   [ "$(cat "$work/dkms/uniqd-$ver/VERSION")" = "$ver" ]; then
	ok dkms
else
	bad dkms "make dkms-source: no $work/dkms/uniqd-$ver/dkms.conf with PACKAGE_VERSION=\"$ver\""
fi

# Nothing else in the sources spells the release out. libuniqd1.symbols
# names the first release that exported LIBUNIQD_1: it must not follow.
left=$(cd "$top" && git ls-files -z 2>/dev/null | xargs -0 grep -lF -- "$ver" 2>/dev/null |
       grep -vx -e VERSION -e debian/changelog -e debian/libuniqd1.symbols | tr '\n' ' ')
if [ -z "$left" ]; then ok written-once; else bad written-once "'$ver' also in $left"; fi
exit $failed
