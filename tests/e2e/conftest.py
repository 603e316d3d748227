"""Fixtures for the real-client end-to-end tests (see tests/e2e/README.md).

The client release is a parameter: $RALPH_CLAUDE_VERSION (default: the
installer's VERSION, the newest 2.1), e.g. `RALPH_CLAUDE_VERSION=2.0.77 pytest
tests/e2e/test_e2e_clients.py`; `claude_bin` is that release's binary."""
from __future__ import annotations

import pytest

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


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    runs = harness.RESULTS
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if "E2E SKIPPED" in str(getattr(report, "longrepr", ""))
    ]
    if not runs and not skipped:
        return
    terminalreporter.section("ralph-hooks e2e (real Claude Code CLI)")
    if skipped:
        reason = str(skipped[0].longrepr[-1]) if isinstance(skipped[0].longrepr, tuple) else str(skipped[0].longrepr)
        terminalreporter.write_line(f"{len(skipped)} e2e test(s) SKIPPED: {reason}", yellow=True, bold=True)
    if runs:
        total = sum(r.duration for r in runs)
        terminalreporter.write_line(f"{len(runs)} client run(s), {total:.1f}s in the client; Claude Code {harness.client_version()} "
                                    f"(and releases pinned by tests); network: {runs[0].sandbox}")
        if any("no network namespace" in r.sandbox for r in runs):
            terminalreporter.write_line("WARNING: ran WITHOUT a network namespace", yellow=True, bold=True)
