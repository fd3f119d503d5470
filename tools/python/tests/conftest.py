# SPDX-License-Identifier: LGPL-2.1-or-later
"""pytest setup of the uniqd package's tests.

Natively (run-pytest.sh) the package runs on libuniqd built with the fake
device of the native tests (tests/native/fake/), whose knobs (fk_map) are
reached through ctypes: $UNIQD_FAKE_LIB names it. In a guest with the module
loaded (guest-pytest.sh) $UNIQD_PY_REAL=1 runs the same tests on the real
libuniqd.so.1 and /dev/uniqd; what only the fake can do is skipped there.
Every test's outcome is appended to $UNIQD_RESULTS in native.sh's line
format.
"""
import ctypes
import itertools
import os

import pytest

import uniqd

_names = itertools.count(1)
REAL = os.environ.get("UNIQD_PY_REAL") == "1"


@pytest.fixture(scope="session")
def fake():
    """The fake device's library, or None on the real device."""
    if REAL:
        return None
    path = os.environ.get("UNIQD_FAKE_LIB")
    if not path:
        pytest.fail("neither UNIQD_FAKE_LIB nor UNIQD_PY_REAL=1: run build/native/test_python")
    return ctypes.CDLL(path)


def set_map(fake, on):
    """Pools the fake creates from now on are mapped (or not)."""
    if fake is not None:
        ctypes.c_int.in_dll(fake, "fk_map").value = 1 if on else 0


def new_pool(fake, mapped):
    set_map(fake, mapped)
    # The real module maps every pool unless asked not to; the fake only
    # when fk_map is set.
    return uniqd.Pool(f"py-{os.getpid()}-{next(_names)}", exclusive=True,
                      map=mapped or fake is not None)


@pytest.fixture(params=[True, False], ids=["mapped", "unmapped"])
def pool(request, fake):
    """A new pool, mapped or not, closed afterwards."""
    p = new_pool(fake, request.param)
    set_map(fake, False)
    assert p.mapped == request.param
    yield p
    p.close()


@pytest.fixture
def mapped_pool(fake):
    """A mapped pool; other attachments made during the test are mapped too."""
    p = new_pool(fake, True)
    assert p.mapped
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
