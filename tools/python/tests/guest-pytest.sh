#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The Python package's tests against the module: run as root by the
# host-userland guest (tools/testing/vm/hostfs-guest.sh, uniqd.ko loaded),
# with the host's python3 and pytest, the tree's build/python and its real
# libuniqd.so.1 (build/lib). Then once more as the unprivileged
# $UNIQD_GUEST_USER, python3 -m uniqd on a pool root holds shared.
#
#   guest-pytest.sh TOP        (TOP: the uniqd tree, with build/ made)
#
# Results on fd 3: "ok python.TEST" per test (conftest.py), and
# "ok python-guest.CASE" / "not ok python-guest.CASE: why" of this script.
set -u
top=$1
res() { echo "$*" >&3; }
results=$(mktemp)
export UNIQD_PY_REAL=1 UNIQD_RESULTS=$results PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH=$top/build/python LD_LIBRARY_PATH=$top/build/lib
if [ ! -c /dev/uniqd ]; then
	res "not ok python-guest.device: no /dev/uniqd"
	exit 1
fi
cd /tmp || exit 1
# Not the type check: the same on the host, and slow under TCG.
/usr/bin/python3 -m pytest -p no:cacheprovider -q -rfEs -k 'not test_types_mypy' "$top/tools/python/tests"
rc=$?
cat "$results" >&3
if [ "$rc" = 0 ] && grep -q '^ok ' "$results"; then
	res "ok python-guest.pytest"
else
	res "not ok python-guest.pytest: pytest exited $rc ($(grep -c '^ok ' "$results") passed)"
fi

# An unprivileged user reports a pool root holds shared with everyone,
# through a staged copy of the package and the library (the tree may be
# closed to that user).
user=${UNIQD_GUEST_USER:-}
if [ -n "$user" ]; then
	. "$top/tools/testing/vm/hostfs-lib.bash"
	stage=/run/uniqd-python
	hostfs_stage "$stage" "$top/build/python/uniqd" "$top/build/lib/libuniqd.so.1"
	/usr/bin/python3 - <<'PY' &
import time, uniqd
with uniqd.Pool("py-guest-shared", share="all") as p:
    p.intern_many("gcc.ident", [b"main", b"argc", b"argv"])
    p.intern("gcc.type", b"struct item { int id; }")
    open("/tmp/py-guest-ready", "w").close()
    time.sleep(60)
PY
	holder=$!
	for _ in $(seq 100); do [ -e /tmp/py-guest-ready ] && break; sleep 0.1; done
	out=$(as_user env PYTHONPATH="$stage" LD_LIBRARY_PATH="$stage" \
		/usr/bin/python3 -m uniqd classes --pool py-guest-shared --json 2>&1)
	echo "$out"
	if /usr/bin/python3 -c '
import json, sys
c = {r["name"]: (r["entries"], r["bytes"]) for r in json.loads(sys.argv[1])["classes"]}
sys.exit(c != {"gcc.ident": (3, 12), "gcc.type": (1, 23)})' "$out"; then
		res "ok python-guest.classes-as-user"
	else
		res "not ok python-guest.classes-as-user: $(tail -n 1 <<< "$out")"
	fi
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
fi
rm -f "$results"
[ "$rc" = 0 ]
