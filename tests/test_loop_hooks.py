"""UserPromptSubmit and Stop while a loop run is (and is not) active."""
from __future__ import annotations

import json
import os

from tests.conftest import load_payload, run_hook, hook_state_dir
from tests.test_hook_protocol import write_run


def test_no_run_no_context_no_block(repo: str) -> None:
    assert run_hook("prompt", load_payload("UserPromptSubmit", repo), repo).output == {}
    assert run_hook("stop", load_payload("Stop", repo), repo).output == {}


def change_run(repo: str, **changes: object) -> None:
    path = os.path.join(repo, ".ralph", "run.json")
    with open(path) as f:
        run = json.load(f)
    run.update(changes)
    with open(path, "w") as f:
        json.dump(run, f)


def test_finished_run_is_inactive(repo: str) -> None:
    write_run(repo)
    change_run(repo, status="finished")
    assert run_hook("stop", load_payload("Stop", repo), repo).output == {}


def test_stop_allowed_once_story_is_done(repo: str) -> None:
    write_run(repo, plan="- [x] US-001: Add totals\n")
    assert run_hook("stop", load_payload("Stop", repo), repo).output == {}


def test_stop_with_prd_json(repo: str) -> None:
    prd = {"userStories": [{"id": "US-001", "title": "Add totals", "priority": 1, "passes": False}]}
    write_run(repo, story_source=".ralph/prd.json", plan=json.dumps(prd))
    assert run_hook("stop", load_payload("Stop", repo), repo).output["decision"] == "block"
    prd["userStories"][0]["passes"] = True
    with open(os.path.join(repo, ".ralph", "prd.json"), "w") as f:
        json.dump(prd, f)
    assert run_hook("stop", load_payload("Stop", repo), repo).output == {}


def test_second_stop_is_allowed_and_recorded_incomplete(repo: str) -> None:
    write_run(repo)
    first = run_hook("stop", load_payload("Stop", repo), repo)
    assert first.output["decision"] == "block" and "US-001" in first.reason
    second = run_hook("stop", load_payload("Stop_after_block_stop_hook_active_true", repo), repo)
    assert second.output == {}
    with open(os.path.join(repo, ".ralph", "failures.jsonl")) as f:
        record = json.loads(f.readlines()[-1])
    assert record["kind"] == "stop_incomplete" and record["story"] == "US-001" and record["run_id"] == "r1"


def test_prompt_injects_story_and_last_failures(repo: str) -> None:
    write_run(repo)
    run_hook("stop", load_payload("Stop_after_block_stop_hook_active_true", repo), repo)  # records a failure
    result = run_hook("prompt", load_payload("UserPromptSubmit", repo), repo)
    assert "Current story: US-001: Add totals" in result.context
    assert "stop_incomplete" in result.context and "iteration 2" in result.context


def test_prompt_is_logged_with_secrets_redacted(repo: str) -> None:
    payload = load_payload("UserPromptSubmit", repo)
    payload["prompt"] = "deploy with ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuv and token ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    run_hook("prompt", payload, repo)
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl")) as f:
        logged = json.loads(f.readlines()[-1])["prompt"]
    assert "sk-ant-api03" not in logged and "ghp_abc" not in logged
    assert "deploy with" in logged and "[REDACTED" in logged


def test_run_without_checkpoint_is_inactive(repo: str) -> None:
    write_run(repo)
    change_run(repo, checkpoint="")
    assert run_hook("prompt", load_payload("UserPromptSubmit", repo), repo).output == {}


def test_stop_blocks_when_story_marked_done_but_last_test_run_failed(repo: str) -> None:
    import subprocess
    import sys

    write_run(repo, plan="- [x] US-001: Add totals\n")
    with open(os.path.join(repo, "test_totals.py"), "w") as f:
        f.write("def test_total():\n    assert 1 + 1 == 3\n")
    command = f"{sys.executable} -m pytest -q test_totals.py"
    proc = subprocess.run(command, shell=True, cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 1
    failure = load_payload("PostToolUseFailure_Bash_exit3", repo)
    failure["tool_input"]["command"] = command
    failure["error"] = f"Exit code 1\n{proc.stdout}{proc.stderr}"
    run_hook("post-tool-failure", failure, repo)
    result = run_hook("stop", load_payload("Stop", repo), repo)
    assert result.output["decision"] == "block"
    assert "last test run failed" in result.reason and "test_total" in result.reason
