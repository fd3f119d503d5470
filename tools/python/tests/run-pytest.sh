#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The Python package's native test (mk/python.mk makes it
# build/native/test_python): pytest on tools/python/tests/ with the staged
# package and libuniqd.so.1 built on the fake device. Each test's outcome is
# appended to $UNIQD_RESULTS as "ok python.NAME" / "not ok python.NAME: why"
# / "skip python.NAME: why" (conftest.py), which native.sh reports. Exit
# status: pytest's; 5 (no test collected) is a failure like any other.
export PYTHONPATH=@PYPATH@${PYTHONPATH:+:$PYTHONPATH}
export LD_LIBRARY_PATH=@FAKELIB@${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export UNIQD_FAKE_LIB=@FAKELIB@/libuniqd.so.1
export PYTHONDONTWRITEBYTECODE=1
@PYTHON3@ -m pytest -p no:cacheprovider -q -rfEs @TESTS@ "$@"
rc=$?
if [ "$rc" = 5 ]; then
	echo "run-pytest.sh: pytest collected no test in @TESTS@" >&2
	[ -n "${UNIQD_RESULTS:-}" ] && echo "not ok python.collected: no test collected" >> "$UNIQD_RESULTS"
fi
exit $rc
