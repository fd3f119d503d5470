#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libuniqd's symbol map against what the shared library exports:
#  - every symbol the map lists is defined in libuniqd.so, as the default
#    version (@@) of the node that lists it;
#  - every uniqd_* symbol the library exports is in the map;
#  - every version node of the map is in debian/libuniqd1.symbols.
# mk/libuniqd.mk installs this script as build/native/test_symbols with the
# paths filled in; result lines as tests/harness.h writes them.
map='@MAP@'
so='@SO@'
debsyms='@DEBSYMS@'
failed=0

result() {
	echo "$1"
	[ -n "${UNIQD_RESULTS:-}" ] && echo "$1" >> "$UNIQD_RESULTS"
	case $1 in not*) failed=1 ;; esac
}

# "node symbol" for each symbol under global: in the map.
listed=$(awk '
	/^[A-Za-z0-9_.]+ *\{/ { node = $1; global = 0; next }
	/global:/ { global = 1; next }
	/local:/ || /^\}/ { global = 0; next }
	global && /^[ \t]*[A-Za-z_][A-Za-z0-9_]*;/ { gsub(/[ \t;]/, ""); print node, $0 }
' "$map")
# "node symbol" for each uniqd_* symbol the library defines.
exported=$(nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' |
	   sed -n 's/^\(uniqd_[A-Za-z0-9_]*\)@@\(.*\)$/\2 \1/p')

if [ -z "$listed" ] || [ -z "$exported" ]; then
	result "not ok symbols.read: nothing read from $map or $so"
	exit 1
fi

missing=$(comm -23 <(sort <<< "$listed") <(sort <<< "$exported") | tr '\n' ',')
if [ -z "$missing" ]; then
	result "ok symbols.every listed symbol is defined under its node"
else
	result "not ok symbols.every listed symbol is defined under its node: not defined (node symbol): ${missing%,}"
fi

extra=$(comm -13 <(sort <<< "$listed") <(sort <<< "$exported") | tr '\n' ',')
if [ -z "$extra" ]; then
	result "ok symbols.every exported uniqd_ symbol is listed"
else
	result "not ok symbols.every exported uniqd_ symbol is listed: not in the map (node symbol): ${extra%,}"
fi

nodes=$(awk '/^[A-Za-z0-9_.]+ *\{/ { print $1 }' "$map")
nodeless=
for n in $nodes; do
	grep -q "(symver)$n " "$debsyms" || nodeless="$nodeless $n"
done
if [ -z "$nodeless" ]; then
	result "ok symbols.every version node is in the Debian symbols file"
else
	result "not ok symbols.every version node is in the Debian symbols file: missing$nodeless"
fi
exit $failed
