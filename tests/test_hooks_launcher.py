"""hooks/ralph-hook: the fail-closed launcher for clients without onFailure."""
from __future__ import annotations

import json
import os
import subprocess

from tests.conftest import RALPH, load_payload

LAUNCHER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hooks", "ralph-hook")


def launch(args: list[str], payload: dict, env: dict, cwd: str) -> dict:
    proc = subprocess.run([LAUNCHER, *args], input=json.dumps(payload).encode(), capture_output=True, env=env, cwd=cwd, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_missing_ralph_denies_pretooluse_and_allows_the_rest(repo: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "RALPH": "ralph-not-installed-anywhere"}
    denied = launch(["pre-tool"], load_payload("PreToolUse_Read", repo), env, repo)
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "not installed" in denied["hookSpecificOutput"]["permissionDecisionReason"]
    assert launch(["stop"], load_payload("Stop", repo), env, repo) == {}


def test_installed_ralph_is_used(repo: str) -> None:
    env = dict(os.environ, RALPH=RALPH)
    env.pop("CLAUDE_PROJECT_DIR", None)
    out = launch(["pre-tool"], load_payload("PreToolUse_Edit", repo), env, repo)
    assert "Read" in out["hookSpecificOutput"]["permissionDecisionReason"]  # ralph's own read-before-edit answer
