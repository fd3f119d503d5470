#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The "parallel build" corpus of ub_corpus (Documentation/benchmarks.rst,
# "A parallel build"): the identifiers and string literals of real
# translation units after the preprocessor, one corpus file per unit, so
# that every unit repeats the headers it includes, as the compiler processes
# of `make -j` see them.
#
# The units are those of a real C project from a Debian source package
# (busybox, its defconfig, by default): `apt-get source` from the archive
# and suite this machine already uses, through a deb-src list of our own
# (the system's lists stay as they are), then the project's own build run
# with CC set to a wrapper that writes `gcc -E` of each unit (the unit's
# own flags, -c turned into -E) instead of compiling it. Nothing is
# compiled: the wrapper leaves an empty object where the build expects
# one, so the final link fails, as it may (make -k).
#
# Everything lives under ${UNIQD_CACHE:-/var/cache/uniqd}/bench-build/; the
# corpus of every unit of the build (units in sorted path order) is kept
# there keyed by the package version and a hash of this generator (this
# script and tokenize.c), with the list of its units beside it; OUT gets
# N of them:
#
#   mkcorpus-build.sh OUT [--package NAME] [--units N] [--tokenize BIN]
#
# --units N keeps N units spread evenly over the sorted list (tokenize
# --pick; 0: all; the default, 160, keeps a guest run of every mode within
# a few minutes).
# SOURCE_DATE_EPOCH (from debian/changelog) fixes __DATE__ and __TIME__,
# and KCONFIG_NOTIMESTAMP keeps the time out of the generated config, so
# the same version gives the same corpus.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out= pkg=busybox units=160 tok=
while [ $# -gt 0 ]; do
	case $1 in
	--package) pkg=$2; shift ;;
	--units) units=$2; shift ;;
	--tokenize) tok=$2; shift ;;
	-*) echo "mkcorpus-build: unknown argument $1" >&2; exit 2 ;;
	*) out=$1 ;;
	esac
	shift
done
[ -n "$out" ] || { echo "usage: mkcorpus-build.sh OUT [--package NAME] [--units N] [--tokenize BIN]" >&2; exit 2; }
[ "$pkg" = busybox ] || { echo "mkcorpus-build: only busybox knows how to build here" >&2; exit 2; }
# The tokenizer runs from the units' directory: a relative path would miss.
[ -z "$tok" ] || tok=$(realpath -- "$tok")
say() { echo "mkcorpus-build: $*" >&2; }

cache=${UNIQD_CACHE:-/var/cache/uniqd}/bench-build
mkdir -p "$cache/apt/lists/partial" "$cache/apt/cache/archives/partial" "$cache/src"

# ---- a deb-src list for the archive and suites this machine uses ------------
# The same URIs, suites, components and keyring as the system's deb
# entries, as deb-src lines (tools/testing/deb-src-list.sh).
srclist=$cache/apt/sources.list
"$here/../testing/deb-src-list.sh" > "$srclist.new"
[ -s "$srclist.new" ] || { say "no deb line in /etc/apt/sources.list*"; exit 1; }
mv "$srclist.new" "$srclist"
apt_opts=(-o "Dir::Etc::SourceList=$srclist" -o Dir::Etc::SourceParts=/dev/null
	  -o "Dir::State::Lists=$cache/apt/lists" -o "Dir::Cache=$cache/apt/cache")

# Update the private lists once a day at most.
stamp=$cache/apt/updated
if [ -z "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then
	say "apt-get update (deb-src, private lists in $cache/apt)"
	for try in 1 2 3 4 5 6; do
		apt-get "${apt_opts[@]}" update -q > "$cache/apt/update.log" 2>&1 && break
		grep -q 'Could not get lock' "$cache/apt/update.log" || { cat "$cache/apt/update.log" >&2; exit 1; }
		say "apt is locked; waiting ($try)"
		sleep 20
	done
	touch "$stamp"
fi
ver=$(apt-cache "${apt_opts[@]}" showsrc "$pkg" 2>/dev/null |
      awk '/^Package: / { p = $2 } /^Version: / && p == "'"$pkg"'" { print $2 }' |
      sort -V | tail -n 1)
[ -n "$ver" ] || { say "no source package $pkg in $srclist"; exit 1; }

# ---- the key: package version + generator hash ------------------------------
gen=$(cat "$0" "$here/tokenize.c" | sha256sum | cut -c1-12)
key=$pkg-${ver//[:~]/_}-$gen
cached=$cache/corpus-$key.bin
if [ -z "$tok" ]; then
	tok=$cache/tokenize-$gen
	[ -x "$tok" ] || gcc -O2 -o "$tok" "$here/tokenize.c"
fi
if [ -s "$cached" ]; then
	say "cached: $cached"
	"$tok" --pick "$units" "$cached" "$out" >&2
	exit 0
fi

# ---- the source --------------------------------------------------------------
sdir=$cache/src/$pkg-${ver//[:~]/_}
if [ ! -f "$sdir/.unpacked" ]; then
	say "apt-get source $pkg=$ver"
	rm -rf "$sdir"
	mkdir -p "$sdir"
	(cd "$sdir" && apt-get "${apt_opts[@]}" source -q "$pkg=$ver" > fetch.log 2>&1) ||
		{ cat "$sdir/fetch.log" >&2; exit 1; }
	touch "$sdir/.unpacked"
fi
tree=$(find "$sdir" -mindepth 1 -maxdepth 1 -type d -name "$pkg-*" | head -n 1)
[ -d "$tree/debian" ] || { say "no unpacked tree in $sdir"; exit 1; }
epoch=$(dpkg-parsechangelog -l "$tree/debian/changelog" -S Timestamp)

# ---- the build, every unit through `gcc -E` ---------------------------------
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
say "building $pkg $ver (defconfig) with gcc -E for every unit in $work"
cp -a "$tree" "$work/tree"
mkdir -p "$work/units"
cat > "$work/cc" <<'EOF'
#!/bin/bash
# A unit compiled with -c FILE.c -o FILE.o: write its `gcc -E` (same flags)
# to $UNITS/FILE.i, and an empty object where the build wants one.
# Anything else (configuration probes, links) is the real compiler's.
args=() src= obj= compile=
while [ $# -gt 0 ]; do
	case $1 in
	-c) compile=1 ;;
	-o) obj=$2; shift ;;
	*.c) src=$1; args+=("$1") ;;
	*) args+=("$1") ;;
	esac
	shift
done
if [ -z "$compile" ] || [ -z "$src" ] || [ "${obj%.o}" = "$obj" ]; then
	exec gcc "${args[@]}" ${compile:+-c} ${obj:+-o "$obj"}
fi
i=$UNITS/${obj%.o}.i
mkdir -p "$(dirname "$i")"
gcc -E "${args[@]}" -o "$i" || exit
exec gcc -c -x c /dev/null -o "$obj"
EOF
chmod 755 "$work/cc"
(
	cd "$work/tree"
	export SOURCE_DATE_EPOCH=$epoch KCONFIG_NOTIMESTAMP=1 UNITS=$work/units LC_ALL=C
	make -s defconfig > "$work/defconfig.log" 2>&1
	make -k -j"$(nproc)" CC="$work/cc" > "$work/build.log" 2>&1 || true
)
(cd "$work/units" && find . -name '*.i' | sed 's|^\./||' | LC_ALL=C sort) > "$work/list"
total=$(wc -l < "$work/list")
[ "$total" -ge 100 ] || { tail -n 30 "$work/build.log" >&2; say "only $total units"; exit 1; }
(cd "$work/units" && "$tok" --cpp "$work/corpus.bin" --list "$work/list") >&2
{
	echo "package=$pkg version=$ver units=$total generator=$gen"
	cat "$work/list"
} > "$cache/corpus-$key.units"
mv "$work/corpus.bin" "$cached"
say "$cached"
"$tok" --pick "$units" "$cached" "$out" >&2
