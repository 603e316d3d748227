"""Fixtures for the real-client end-to-end tests (see tests/e2e/README.md).

The client release is a parameter: $RALPH_CLAUDE_VERSION (default: the
installer's VERSION, the newest 2.1), e.g. `RALPH_CLAUDE_VERSION=2.0.77 pytest
tests/e2e/test_e2e_clients.py`; `claude_bin` is that release's binary."""
from __future__ import annotations

import pytest

from ..conftest import E2E_RUNS_PROPERTY
from . import harness


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """The Claude Code binary; skips (loudly) when it is not installed, fails on CI when it should be."""
    return harness.require_claude()


@pytest.fixture(scope="session")
def claude_version() -> str:
    """The release the suite drives (what `claude_bin --version` says is checked by the installer)."""
    return harness.client_version()


@pytest.fixture
def repo(tmp_path, claude_bin):
    """A fresh git repo (README.md, .gitignore with .ralph/) with one commit on main."""
    return harness.make_repo(tmp_path)


def pytest_collection_modifyitems(config, items) -> None:
    """Leave out the tests of the old releases (the old_clients marker) unless
    `-m` names the marker: they need two more client installs and run long."""
    if "old_clients" in (config.option.markexpr or ""):
        return
    old = [item for item in items if item.get_closest_marker("old_clients")]
    if old:
        config.hook.pytest_deselected(items=old)
        items[:] = [item for item in items if not item.get_closest_marker("old_clients")]


# Each test's teardown report carries the client runs made since the last one
# (duration, network, the suite's client release): the closing summary
# (tests/conftest.py, which an xdist controller loads, unlike this file)
# counts them the same whether the tests ran here or in scripts/test's workers.
_runs_reported = 0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    global _runs_reported
    outcome = yield
    if call.when == "teardown" and len(harness.RESULTS) > _runs_reported:
        runs = [(r.duration, r.sandbox, harness.client_version()) for r in harness.RESULTS[_runs_reported:]]
        _runs_reported = len(harness.RESULTS)
        outcome.get_result().user_properties.append((E2E_RUNS_PROPERTY, runs))
