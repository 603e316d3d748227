"""`ralph demo`, the README's main job, works from an installed package."""
from __future__ import annotations

import json
import subprocess

from tests.conftest import RALPH


def test_demo_replays_every_handler() -> None:
    proc = subprocess.run([RALPH, "demo", "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    steps = {s["label"]: s for s in map(json.loads, proc.stdout.splitlines())}
    assert all(s["exit"] == 0 for s in steps.values())
    assert steps["Edit a file never read"]["decision"] == "DENY"
    assert steps["Edit it again"]["decision"] == "allow"
    assert steps["Write a new file"]["decision"] == "allow"
    assert steps["Bash: git push"]["decision"] == "DENY"
    assert steps["Bash: push, disguised"]["decision"] == "DENY"
    assert steps["Bash: commit saying push"]["decision"] == "allow"
    assert steps["Failing unittest run"]["decision"] in ("CONTEXT", "BLOCK")
    assert steps["Prompt, no loop run"]["decision"] == "allow"
    assert steps["Prompt, loop run active"]["decision"] == "CONTEXT"
    assert steps["Stop, story open"]["decision"] == "BLOCK"
    assert steps["Stop again (stop_hook_active)"]["decision"] == "allow"
    events = {s["event"] for s in steps.values()}
    assert {"PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop"} <= events


def test_demo_table_is_readable() -> None:
    proc = subprocess.run([RALPH, "demo"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["#", "event", "tool"]
    assert any("DENY" in line and "git push" in line for line in lines)
