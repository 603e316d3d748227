"""Without the CLI the e2e tests skip loudly -- never pass silently -- and on CI
a binary the installer promised but that is missing is a failure."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from . import harness

PROBE_TEST = "from tests.e2e.harness import require_claude\n\n\ndef test_needs_claude():\n    require_claude()\n"


def run_probe(tmp_path, ci: str, status: dict | None) -> subprocess.CompletedProcess:
    cache = tmp_path / "claude-cache"
    cache.mkdir()
    if status is not None:
        (cache / "install-status.json").write_text(json.dumps(status), encoding="utf-8")
    (tmp_path / "test_probe.py").write_text(PROBE_TEST, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RALPH_", "PYTEST_", "CI"))}
    env.update(
        {
            "RALPH_CLAUDE_DIR": str(cache),
            "RALPH_CLAUDE_BIN": str(tmp_path / "no-such-claude"),
            "CI": ci,
            "PYTHONPATH": str(harness.REPO_ROOT),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "test_probe.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "ci, status",
    [
        ("", None),
        ("true", None),
        ("true", {"ok": False, "binary": None, "reason": "npm is not on PATH"}),
        ("", {"ok": True, "binary": "/gone/claude"}),
    ],
)
def test_missing_cli_is_a_loud_skip(tmp_path, ci, status):
    done = run_probe(tmp_path, ci, status)
    assert done.returncode == 0 and "1 skipped" in done.stdout, done.stdout + done.stderr
    assert "E2E SKIPPED: Claude Code CLI unavailable" in done.stdout  # in the -rs summary
    assert "E2E SKIPPED" in done.stderr or "E2E SKIPPED" in done.stdout
    if status and status.get("reason"):
        assert status["reason"] in done.stdout


def test_missing_cli_fails_on_ci_when_the_installer_reported_success(tmp_path):
    done = run_probe(tmp_path, "true", {"ok": True, "binary": "/gone/claude", "version": "2.1.330"})
    assert done.returncode == 1 and "1 failed" in done.stdout, done.stdout + done.stderr
    assert "reported success" in done.stdout


@pytest.mark.parametrize("ci, outcome", [("true", "1 failed"), ("", "1 skipped")])
def test_a_pinned_release_the_installer_reported_is_needed_on_ci(tmp_path, ci, outcome):
    """The last 2.0, which scripts/test installs: gone since, and npm cannot
    bring it back, a CI run fails where a developer's skips."""
    version = harness.SECOND_VERSION
    home = tmp_path / "home"
    cache = home / ".cache" / "ralph-hooks" / f"claude-code-{version}"
    cache.mkdir(parents=True)
    status = {"ok": True, "binary": str(cache / "gone" / "claude"), "version": version, "reason": ""}
    (cache / "install-status.json").write_text(json.dumps(status), encoding="utf-8")
    (tmp_path / "test_probe.py").write_text(PROBE_TEST.replace("require_claude()", f"require_claude({version!r})"), encoding="utf-8")
    no_npm = tmp_path / "bin"
    no_npm.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RALPH_", "PYTEST_", "CI"))}
    env.update({"HOME": str(home), "PATH": str(no_npm), "CI": ci, "PYTHONPATH": str(harness.REPO_ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "test_probe.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert outcome in done.stdout, done.stdout + done.stderr
    assert ("reported success" in done.stdout) == (ci == "true"), done.stdout
