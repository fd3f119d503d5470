#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the deb-src twins of this machine's deb entries (the same URIs,
# suites, components and keyring), one-line, sorted and unique: from the
# deb822 files /etc/apt/sources.list.d/*.sources (Types: deb, not
# Enabled: no) and the one-line lists /etc/apt/sources.list and
# /etc/apt/sources.list.d/*.list. For the private apt lists of
# tools/testing/srcpkg.sh and tools/bench/mkcorpus-build.sh.
set -uo pipefail
{
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
		function flush() {
			if (types ~ /(^| )deb( |$)/ && uris != "")
				for (i = split(uris, u, " "); i > 0; i--)
					for (j = split(suites, s, " "); j > 0; j--)
						printf "deb-src %s%s %s %s\n", (key != "" ? "[signed-by=" key "] " : ""), u[i], s[j], comps
			types = uris = suites = comps = key = ""; enabled = 1
		}
		BEGIN { enabled = 1 }
		/^[ \t]*#/ { next }
		/^[ \t]*$/ { if (enabled) flush(); else { types = uris = suites = comps = key = ""; enabled = 1 }; next }
		{ k = tolower($1); sub(/:$/, "", k); v = $0; sub(/^[^:]*:[ \t]*/, "", v) }
		k == "types" { types = v } k == "uris" { uris = v } k == "suites" { suites = v }
		k == "components" { comps = v } k == "signed-by" { key = v }
		k == "enabled" && tolower(v) == "no" { enabled = 0 }
		END { if (enabled) flush() }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n 's/^[ \t]*deb[ \t]\+/deb-src /p' "$f"
	done
} | sort -u
