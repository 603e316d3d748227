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


def test_demo_last_line_says_where_the_hook_logs_are_and_is_true(tmp_path) -> None:
    """With --keep it names the hook logs, which are there (the interactive
    steps' under .git/, the loop run's under .ralph/); without, it says they
    went with the temp project, which is gone."""
    import os
    import shutil

    env = dict(os.environ, TMPDIR=str(tmp_path))
    kept = subprocess.run([RALPH, "demo", "--keep"], capture_output=True, text=True, timeout=300, env=env)
    assert kept.returncode == 0, kept.stderr
    lines = kept.stdout.splitlines()
    root = lines[-2].removeprefix("project kept at ")
    assert os.path.isdir(root) and lines[-1] == (f"Hook logs: {root}/.git/ralph/logs/hooks.jsonl, {root}/.ralph/logs/hooks.jsonl")
    for path in lines[-1].removeprefix("Hook logs: ").split(", "):
        assert os.path.getsize(path) > 0
    shutil.rmtree(root)
    gone = subprocess.run([RALPH, "demo"], capture_output=True, text=True, timeout=300, env=env)
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout.splitlines()[-1] == "Hook logs: deleted with the temp project (`ralph demo --keep` keeps it)"
    assert os.listdir(tmp_path) == []
