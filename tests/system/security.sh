#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317  # the checks are called through check()
#
# Full-system guest: what an unprivileged user can make the kernel do with
# uniqd that the administrator did not ask for. Runs after packages.sh (name
# order), which needs the module as the boot left it.
# Results go to fd 3 as "ok security.<case>" / "not ok security.<case>: why".
SUITE=security
# shellcheck source=tests/system/result.bash
. "${UNIQD_SYSTEM_LIB:-/usr/local/lib/uniqd-system}/result.bash"

# A bind of an AF_ALG hash socket to NAME; prints the errno name on failure.
work=$(mktemp -d)
chmod 0755 "$work"
cat > "$work/alg.c" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if_alg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "hash" };
	int fd = socket(AF_ALG, SOCK_SEQPACKET, 0);

	if (argc != 2 || fd < 0)
		return perror("socket"), 2;
	strncpy((char *)sa.salg_name, argv[1], sizeof(sa.salg_name) - 1);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("%s\n", strerrorname_np(errno));
		return 1;
	}
	printf("bound\n");
	return 0;
}
C
cc -O2 -o "$work/alg" "$work/alg.c" || res "not ok security.build: cannot compile the AF_ALG probe"

# uniqd out, then an unprivileged user asks the crypto API for every name
# uniqd registers: none may load it (no crypto alias, Documentation/
# packaging.rst). The module is loaded again by the administrator's way.
no_autoload() {
	local name out
	modprobe -r uniqd || return 1
	[ ! -d /sys/module/uniqd ] || { echo "uniqd did not unload"; return 1; }
	for name in blake3 blake3-uniqd blake3-uniqd-generic blake3-uniqd-sse41 \
		    blake3-uniqd-avx2 blake3-uniqd-avx512; do
		out=$(runuser -u tester -- "$work/alg" "$name")
		if [ -d /sys/module/uniqd ]; then
			echo "binding AF_ALG to $name as tester loaded uniqd ($out)"
			return 1
		fi
		[ "$out" = ENOENT ] || { echo "$name: $out, not ENOENT"; return 1; }
	done
	# The probe itself works: a hash the kernel has binds.
	out=$(runuser -u tester -- "$work/alg" sha256)
	[ "$out" = bound ] || { echo "sha256: $out"; return 1; }
	# And modinfo shows no alias that could bring it back.
	if modinfo -F alias uniqd | grep .; then echo "uniqd still has aliases"; return 1; fi
	return 0
}
check autoload.af-alg no_autoload
modprobe uniqd
[ -c /dev/uniqd ] && [ -d /sys/module/uniqd ] || res "not ok security.reload: modprobe uniqd did not bring /dev/uniqd back"

# Loaded by the administrator, the same bind finds uniqd's blake3.
loaded_binds() {
	local out
	out=$(runuser -u tester -- "$work/alg" blake3)
	[ "$out" = bound ] || { echo "blake3 with uniqd loaded: $out"; return 1; }
}
check autoload.loaded-binds loaded_binds
rm -rf "$work"
