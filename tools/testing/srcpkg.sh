#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A Debian source package, unpacked and cached: `apt-get source NAME` from
# the archive and suite the machine already uses, through a private apt
# configuration, so that the system's sources and lists stay as they are.
#
#   tools/testing/srcpkg.sh NAME
#
# The LAST line on stdout is the unpacked tree (with Debian's patches
# applied, as dpkg-source -x leaves it); progress goes to stderr. Treat the
# tree as read-only: copy it to build in it.
#
# Cache: $UNIQD_CACHE (default /var/cache/uniqd)/srcpkg/:
#   apt/sources.list   deb-src lines for every URI and suite of the machine's
#                      /etc/apt/sources.list.d/*.sources (deb822) and
#                      /etc/apt/sources.list that have a "deb" entry
#   apt/lists/, apt/cache/   apt's lists and caches for that file alone
#   NAME_VERSION/      one unpacked version (VERSION as `apt-get source`
#                      picks it), used only with its .uniqd-srcpkg-ok stamp;
#                      made in a temporary directory and renamed into place,
#                      under flock on srcpkg/.lock.
# The private lists are fetched when absent or older than a week, or when a
# download fails on them; a warm call reads them and touches no network.
set -euo pipefail
CACHE=${UNIQD_CACHE:-/var/cache/uniqd}
name=${1:?usage: srcpkg.sh NAME}
dir=$CACHE/srcpkg
apt=$dir/apt
STAMP=.uniqd-srcpkg-ok
log() { echo "srcpkg: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
exec 9>"$dir/.lock"
flock 9

# deb-src twins of the machine's deb entries (same URIs, suites, components
# and keyring), as one-line entries.
"$(dirname "$0")/deb-src-list.sh" > "$apt/sources.list.new"
[ -s "$apt/sources.list.new" ] || die "no deb entries in /etc/apt/sources.list{,.d/*.sources}"
if ! cmp -s "$apt/sources.list.new" "$apt/sources.list"; then
	mv "$apt/sources.list.new" "$apt/sources.list"
	rm -f "$apt/lists/.updated"
else
	rm -f "$apt/sources.list.new"
fi

opts=(-q -o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
      -o APT::Sandbox::User=root)
update() {
	log "apt-get update (private lists in $apt)"
	apt-get "${opts[@]}" update >"$apt/update.log" 2>&1 ||
		die "apt-get update failed: see $apt/update.log"
	touch "$apt/lists/.updated"
}
if [ -z "$(find "$apt/lists/.updated" -mtime -7 2>/dev/null)" ]; then
	update
fi

# The version `apt-get source` would fetch: its .dsc file's name (which has
# no epoch).
version() {
	apt-get "${opts[@]}" source --print-uris "$name" 2>/dev/null |
		sed -n "s/^'[^']*' ${name}_\\(.*\\)\\.dsc .*/\\1/p" | head -n 1
}
ver=$(version)
if [ -z "$ver" ]; then
	update
	ver=$(version)
fi
[ -n "$ver" ] || die "no source package $name in $(cut -d' ' -f2- "$apt/sources.list" | tr '\n' ';')"
dest=$dir/${name}_$ver
tree() { find "$dest" -mindepth 1 -maxdepth 1 -type d -name "$name-*" | head -n 1; }
if [ -f "$dest/$STAMP" ] && [ -n "$(tree)" ]; then
	tree
	exit 0
fi

tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fetch() {
	(cd "$tmp" && apt-get "${opts[@]}" source "$name") >"$tmp/source.log" 2>&1
}
log "apt-get source $name ($ver)"
if ! fetch; then
	update
	fetch || { cp "$tmp/source.log" "$dir/${name}.log"; die "apt-get source $name failed: see $dir/${name}.log"; }
fi
# What was fetched names the cache entry (the lists may have moved on).
got=$(cd "$tmp" && ls "${name}"_*.dsc 2>/dev/null | head -n 1)
[ -n "$got" ] || die "apt-get source left no ${name}_*.dsc (see $tmp/source.log)"
got=${got#"${name}_"}
ver=${got%.dsc}
dest=$dir/${name}_$ver
src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name "$name-*" | head -n 1)
[ -n "$src" ] || die "apt-get source left no $name-* directory (see $tmp/source.log)"
# The tree alone is kept (the .orig tarballs and .dsc are of no further use).
mkdir "$tmp/out"
mv "$src" "$tmp/out/"
mv "$tmp/source.log" "$tmp/out/"
rm -rf "$dest"
mv "$tmp/out" "$dest"
touch "$dest/$STAMP"
tree
