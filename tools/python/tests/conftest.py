# SPDX-License-Identifier: LGPL-2.1-or-later
"""pytest setup of the uniqd package's native tests (run-pytest.sh).

The package runs on libuniqd built with the fake device of the native tests
(tests/native/fake/), whose knobs (fk_map, fk_pool_calls()) are reached
through ctypes. Every test's outcome is appended to $UNIQD_RESULTS in
native.sh's line format.
"""
import ctypes
import itertools
import os

import pytest

import uniqd

_names = itertools.count(1)


@pytest.fixture(scope="session")
def fake():
    path = os.environ.get("UNIQD_FAKE_LIB")
    if not path:
        pytest.fail("UNIQD_FAKE_LIB is not set: run the tests through build/native/test_python")
    return ctypes.CDLL(path)


def set_map(fake, on):
    ctypes.c_int.in_dll(fake, "fk_map").value = 1 if on else 0


@pytest.fixture(params=[True, False], ids=["mapped", "unmapped"])
def pool(request, fake):
    """A new pool on the fake device, mapped or not, closed afterwards."""
    set_map(fake, request.param)
    p = uniqd.Pool(f"py-{os.getpid()}-{next(_names)}", exclusive=True)
    set_map(fake, False)
    assert p.mapped == request.param
    yield p
    p.close()


@pytest.fixture
def mapped_pool(fake):
    """A mapped pool; other attachments made during the test are mapped too."""
    set_map(fake, True)
    p = uniqd.Pool(f"py-{os.getpid()}-{next(_names)}", exclusive=True)
    yield p
    set_map(fake, False)
    p.close()


def pytest_runtest_logreport(report):
    out = os.environ.get("UNIQD_RESULTS")
    if not out:
        return
    name = "python." + report.nodeid.split("::", 1)[-1].replace(" ", "_")
    line = None
    if report.when == "call" or report.outcome != "passed":
        if report.passed:
            line = f"ok {name}"
        elif report.skipped:
            reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else "skipped"
            line = f"skip {name}: {reason}"
        else:
            why = str(report.longrepr).strip().splitlines()[-1:] or ["failed"]
            line = f"not ok {name}: {report.when}: {why[0][:200]}"
    if line:
        with open(out, "a", encoding="utf-8") as f:
            f.write(line + "\n")
