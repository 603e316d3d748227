"""Test outcomes through the real Claude Code CLI (2.1.330): outputs the client cuts.

A test run that prints more than 5 MB: on exit 0 the client hands the hook the
first ~30,000 characters of stdout plus `persistedOutputPath` (the whole output
on disk); on a non-zero exit PostToolUseFailure gets only the first ~10 KB of
`error`, with no path. A recorder hook beside ours keeps the raw payloads, so
the test checks the real shape as well as what our handler told the model.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from . import harness
from .harness import bash, make_repo, run_scenario, text

pytestmark = pytest.mark.e2e

RECORDER = Path(__file__).resolve().parent / "recorder_hook.py"
NOISY_PROJECT = {
    "test_noisy.py": (
        "def test_prints_a_lot():\n"
        "    for i in range(70000):\n"
        "        print(f'line {i:06d} of a chatty test: some log text to make the output large ........')\n\n\n"
        "def test_fails_at_the_end():\n"
        "    assert 2 + 2 == 5\n"
    ),
}
MASKED = "python -m pytest -s -q -p no:cacheprovider test_noisy.py; true"
FAILING = "python -m pytest -s -q -p no:cacheprovider test_noisy.py"


def settings_with_recorder(log: Path) -> dict:
    settings = harness.hook_settings()
    for event in ("PostToolUse", "PostToolUseFailure"):
        settings["hooks"].setdefault(event, []).append(
            {"matcher": "Bash", "hooks": [{"type": "command", "command": f"{sys.executable} {RECORDER} {log}"}]})
    return settings


def test_a_failing_run_with_more_than_5_mb_of_output_gets_its_context_note(tmp_path, claude_bin):
    repo = make_repo(tmp_path, files=NOISY_PROJECT)
    log = tmp_path / "payloads.jsonl"
    turns = [bash(MASKED, "Run the tests", id="t_masked"), bash(FAILING, "Run them again", id="t_failing"), text("The tests fail.")]
    result = run_scenario(repo, turns, prompt="Run the tests.", settings=settings_with_recorder(log), timeout=180)
    assert result.exit_code == 0 and not result.exhausted, result.describe()
    payloads = [json.loads(line)["payload"] for line in log.read_text().splitlines()]
    masked = next(p for p in payloads if p["hook_event_name"] == "PostToolUse")
    failing = next(p for p in payloads if p["hook_event_name"] == "PostToolUseFailure")

    # the real shape: the start of stdout plus the whole output on disk (> 5 MB)
    response = masked["tool_response"]
    persisted = Path(response["persistedOutputPath"])
    assert len(response["stdout"]) <= 40_000 and "1 failed" not in response["stdout"], len(response["stdout"])
    assert persisted.stat().st_size > 5_000_000 and "1 failed, 1 passed" in persisted.read_text()[-400:]
    # our side: the hook read the file and named the failing test
    outputs = [json.loads(r["stdout"]) for r in result.hook_responses("PostToolUse") if r.get("stdout", "").strip().startswith("{") and "ralph" in r.get("stdout", "")]
    context = next(o["hookSpecificOutput"]["additionalContext"] for o in outputs if "additionalContext" in o.get("hookSpecificOutput", {}))
    assert "pytest run failed" in context and "test_fails_at_the_end" in context, context
    # the model's side: the next request carries it
    assert f"PostToolUse:Bash hook additional context: {context}" in result.new_text(1), result.new_text(1)[-3000:]

    # the failing exit: only the first ~10 KB, no path; the note says the output was cut
    assert failing["error"].startswith("Exit code 1\n") and len(failing["error"]) < 20_000
    assert "persistedOutputPath" not in json.dumps(failing)
    failure_outputs = [json.loads(r["stdout"]) for r in result.hook_responses("PostToolUseFailure") if "ralph" in r.get("stdout", "")]
    cut_note = next(o["hookSpecificOutput"]["additionalContext"] for o in failure_outputs if "additionalContext" in o.get("hookSpecificOutput", {}))
    assert "first ~" in cut_note and "cut" in cut_note, cut_note
