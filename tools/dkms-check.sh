#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check the DKMS packaging: `dkms add`, `dkms build` and `dkms install` of
# uniqd for Debian's newest 6.1 and 6.12 kernels (those with headers in
# /lib/modules/<release>/build), in a private DKMS tree, source tree and
# install tree under a temporary directory, so that the machine's DKMS state,
# /usr/src and /lib/modules are never touched (no depmod, no signing key is
# generated). Everything is removed again with `dkms remove`. One result line
# per kernel:
#
#   ok host:dkms.<release>
#   not ok host:dkms.<release>: why
#
#   tools/dkms-check.sh [--keep] [--series "6.1 6.12"] [RELEASE...]
#
# Exit status 0 when every build passed. Needs dkms and root (dkms insists).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
keep='' series="6.1 6.12"
while [ $# -gt 0 ]; do
	case $1 in
	--keep) keep=1 ;;
	--series) series=$2; shift ;;
	-*) echo "dkms-check: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done

# The kernels: as given, else the newest Debian release of each series with
# a build tree (as tools/testing/kernels.sh picks them).
releases=("$@")
if [ ${#releases[@]} -eq 0 ]; then
	for s in $series; do
		# shellcheck disable=SC2012
		rel=$(ls -d /lib/modules/"$s".*-amd64/build 2>/dev/null |
		      sed 's|/lib/modules/||; s|/build||' | grep -v -e rt -e cloud |
		      sort -V | tail -n 1)
		if [ -z "$rel" ]; then
			echo "not ok host:dkms.$s: no $s kernel headers in /lib/modules/*/build (run tools/deps.sh)"
			failed=1
			continue
		fi
		releases+=("$rel")
	done
fi
failed=${failed:-0}

if ! command -v dkms >/dev/null; then
	for rel in "${releases[@]}"; do
		echo "not ok host:dkms.$rel: dkms is not installed (apt-get install dkms)"
	done
	exit 1
fi

version=$(cat "$top/VERSION")
work=$(mktemp -d /tmp/uniqd-dkms-check.XXXXXX)
src=$work/src tree=$work/dkms inst=$work/modules
mkdir -p "$src" "$tree" "$inst"
# Private trees for every dkms call; never sign (no MOK key is generated).
dk() {
	sign_file=/nonexistent/sign-file dkms "$@" --dkmstree "$tree" \
		--sourcetree "$src" --installtree "$inst"
}
# shellcheck disable=SC2317  # called by the trap
cleanup() {
	dk remove -m uniqd -v "$version" --all >/dev/null 2>&1
	if [ -n "$keep" ]; then
		echo "# kept $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# What `make dkms-source` ships: dkms.conf, Kbuild, uniqd/, include/.
if ! make -s -C "$top" dkms-source B="$work/b" >"$work/source.log" 2>&1 ||
   ! cp -a "$work/b/dkms/uniqd-$version" "$src/"; then
	for rel in "${releases[@]}"; do
		echo "not ok host:dkms.$rel: make dkms-source failed: $(tail -n 2 "$work/source.log" | tr '\n' ' ')"
	done
	exit 1
fi
if ! dk add -m uniqd -v "$version" >"$work/add.log" 2>&1; then
	for rel in "${releases[@]}"; do
		echo "not ok host:dkms.$rel: dkms add failed: $(tail -n 2 "$work/add.log" | tr '\n' ' ')"
	done
	exit 1
fi

for rel in "${releases[@]}"; do
	log=$work/build-$rel.log
	if ! dk build -m uniqd -v "$version" -k "$rel" >"$log" 2>&1; then
		mlog=$tree/uniqd/$version/build/make.log
		why=$(grep -m 3 -E 'error|Error' "$mlog" 2>/dev/null | tr '\n' ' ')
		echo "not ok host:dkms.$rel: dkms build failed: ${why:-$(tail -n 3 "$log" | tr '\n' ' ')}"
		failed=1
		continue
	fi
	ko=$(find "$tree/uniqd/$version/$rel" -name 'uniqd.ko*' | head -n 1)
	magic=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
	if [ -z "$ko" ] || [ "$magic" != "$rel" ]; then
		echo "not ok host:dkms.$rel: built module '$ko' has vermagic '$magic'"
		failed=1
		continue
	fi
	mkdir -p "$inst/$rel"
	if ! dk install -m uniqd -v "$version" -k "$rel" --no-depmod >"$work/install-$rel.log" 2>&1; then
		echo "not ok host:dkms.$rel: dkms install failed: $(tail -n 3 "$work/install-$rel.log" | tr '\n' ' ')"
		failed=1
		continue
	fi
	installed=$(find "$inst/$rel" -name 'uniqd.ko*' | head -n 1)
	if [ -z "$installed" ]; then
		echo "not ok host:dkms.$rel: dkms install put no uniqd.ko under $inst/$rel"
		failed=1
		continue
	fi
	echo "ok host:dkms.$rel"
done
exit "$failed"
