# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034
#
# Sourced by every tests/system/*.sh (tools/testing/system.sh installs it
# as $UNIQD_SYSTEM_LIB/result.bash; not a test itself: no .sh). Set SUITE,
# and user for as_user, before using them.
#
#   check NAME CMD...  run CMD, show its output on the console prefixed with
#                      "SUITE: NAME: ", and report "ok SUITE.NAME" or
#                      "not ok SUITE.NAME: <its last three lines>" on fd 3
#   res LINE           report LINE on fd 3 as it is
#   as_user CMD...     CMD as the unprivileged $user, HOME and USER set;
#                      setpriv execs it (no PAM session, no extra process)
res() { echo "$*" >&3; }
check() {
	local name=$1 why rc
	shift
	why=$("$@" 2>&1)
	rc=$?
	[ -n "$why" ] && echo "$why" | sed "s/^/$SUITE: $name: /"
	if [ "$rc" -eq 0 ]; then
		res "ok $SUITE.$name"
	else
		res "not ok $SUITE.$name: $(echo "$why" | tail -n 3 | tr '\n' ' ')"
	fi
}
as_user() {
	setpriv --reuid="$user" --regid="$user" --init-groups \
		env HOME="/home/$user" USER="$user" "$@"
}
