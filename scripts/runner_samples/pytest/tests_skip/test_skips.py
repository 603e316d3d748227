import sys

import pytest


def test_runs():
    assert 1 + 1 == 2


@pytest.mark.skip(reason="not implemented yet")
def test_skipped():
    assert False


@pytest.mark.skipif(sys.platform != "win32", reason="windows only")
def test_windows_only():
    assert False


@pytest.mark.xfail(reason="known bug #12")
def test_known_failure():
    assert 1 == 2


@pytest.mark.xfail(reason="flaky")
def test_xpass():
    assert True
