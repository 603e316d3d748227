"""Every real payload through the installed entry point, and our output forms
checked against what the real client honoured (shared model-view captures,
mirrored in tests/fixtures/model_view_forms.json)."""
from __future__ import annotations

import glob
import json
import os

import pytest

from tests.conftest import FIXTURES, HOOK_INPUTS, git, hold_loop_lock, load_payload, run_hook, hook_state_dir

PAYLOADS = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(HOOK_INPUTS, "*.json")))
SUBCOMMAND = {
    "PreToolUse": "pre-tool",
    "PostToolUse": "post-tool",
    "PostToolUseFailure": "post-tool-failure",
    "UserPromptSubmit": "prompt",
    "Stop": "stop",
    "PreSkillShellCommand": "skill-shell",
}


def forms() -> dict:
    with open(os.path.join(FIXTURES, "model_view_forms.json")) as f:
        return json.load(f)


def shape(value: object) -> object:
    """Keys and value types, recursively: the form, not the words."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in sorted(value.items())}
    return type(value).__name__


@pytest.mark.parametrize("name", PAYLOADS)
def test_every_real_payload_answers_one_json_object(name: str, repo: str) -> None:
    payload = load_payload(name, repo)
    event = payload["hook_event_name"]
    result = run_hook(SUBCOMMAND.get(event, "hook"), payload, repo)
    assert isinstance(result.output, dict)
    assert result.stdout.count(b"\n") == 1  # one line, one object
    if event not in SUBCOMMAND:
        assert result.output == {}


@pytest.mark.parametrize("alias", ["pre-tool", "PreToolUse", "hook"])
def test_aliases_reach_the_same_handler(alias: str, repo: str) -> None:
    result = run_hook(alias, load_payload("PreToolUse_Edit", repo), repo)
    assert result.denied


def test_payload_event_wins_over_subcommand_and_is_logged(repo: str) -> None:
    result = run_hook("stop", load_payload("PreToolUse_Edit", repo), repo)
    assert result.denied
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl")) as f:
        entry = json.loads(f.readlines()[-1])
    assert entry["event"] == "PreToolUse"
    assert any("payload wins" in note for note in entry["notes"])


def test_deny_has_the_form_the_client_honours(repo: str) -> None:
    result = run_hook("pre-tool", load_payload("PreToolUse_Edit", repo), repo)
    honoured = forms()["pre_deny_json"]
    assert shape(result.output) == shape(honoured)
    assert result.output["hookSpecificOutput"]["hookEventName"] == "PreToolUse"


def write_run(repo: str, story_source: str = ".ralph/plan.md", plan: str = "- [ ] US-001: Add totals\n  - sums lines\n") -> None:
    os.makedirs(os.path.join(repo, ".ralph"), exist_ok=True)
    with open(os.path.join(repo, story_source), "w") as f:
        f.write(plan)
    run = {
        "version": 1,
        "run_id": "r1",
        "status": "running",
        "iteration": 2,
        "story": {"id": "US-001", "title": "Add totals", "criteria": ["sums lines"], "source": story_source},
        "checkpoint": git(repo, "rev-parse", "HEAD").strip(),
        "started": "2026-11-21T00:00:00Z",
        "pid": 1,
        "stage": "build",
        "finish": None,
    }
    with open(os.path.join(repo, ".ralph", "run.json"), "w") as f:
        json.dump(run, f)
    hold_loop_lock(os.path.join(repo, ".ralph"))  # its loop is alive


def test_prompt_context_has_the_form_the_client_honours(repo: str) -> None:
    write_run(repo)
    result = run_hook("prompt", load_payload("UserPromptSubmit", repo), repo)
    assert shape(result.output) == shape(forms()["ups_context_json"])
    assert "US-001: Add totals" in result.context and "sums lines" in result.context


def test_stop_block_has_the_form_the_client_honours(repo: str) -> None:
    write_run(repo)
    result = run_hook("stop", load_payload("Stop", repo), repo)
    assert shape(result.output) == shape(forms()["stop_block_once"])
    assert "US-001" in result.reason and "not marked done" in result.reason


def test_logs_one_line_per_call_never_stdout(repo: str) -> None:
    for name in ("PreToolUse_Read", "PostToolUse_Read", "Stop"):
        run_hook("hook", load_payload(name, repo), repo)
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl")) as f:
        entries = [json.loads(line) for line in f]
    assert [e["event"] for e in entries] == ["PreToolUse", "PostToolUse", "Stop"]
    for entry in entries:
        assert {"t", "event", "tool", "decision", "reason", "ms"} <= set(entry)


def test_unknown_event_gets_empty_object(repo: str) -> None:
    payload = load_payload("Stop", repo)
    payload["hook_event_name"] = "SomethingNew"
    assert run_hook("hook", payload, repo).output == {}


def test_every_edit_tool_is_checked_and_recorded() -> None:
    from ralph.claude.dispatch import HANDLERS
    from ralph.rules.read_before_edit import EDIT_TOOLS

    assert {tool for tool, name in HANDLERS["PreToolUse"].items() if name.endswith(".pre_edit")} == set(EDIT_TOOLS)
    assert {tool for tool, name in HANDLERS["PostToolUse"].items() if name.endswith(".post_file")} == set(EDIT_TOOLS) | {"Read"}
