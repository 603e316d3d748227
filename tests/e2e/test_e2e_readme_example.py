"""The documented example "approve the plan, then build"
(docs/webhooks-and-spawn.md), run as written (only
the agent command and the endpoint's port are swapped in): ralph-loop drives
the real Claude Code CLI through a plan stage, posts to a local stand-in for
a chat whose Approve (or Reject) button gets pressed, then builds, while a
user's event hook keeps the agent from `rm -rf` and tells it why."""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from . import harness
from .harness import bash, edit, make_repo, read, run_with_server, text, write

pytestmark = pytest.mark.e2e

EXAMPLE_PAGE = harness.REPO_ROOT / "docs" / "webhooks-and-spawn.md"
ENDPOINT = Path(__file__).with_name("approval_endpoint.py")
PLAN = "- [ ] US-001: Add greeting file\n  - greeting.txt says hello\n"


def documented_example() -> str:
    text_ = EXAMPLE_PAGE.read_text(encoding="utf-8")
    match = re.search(r"<!-- example: approval-gate -->\n```toml\n(.*?)```\n<!-- /example -->", text_, re.S)
    assert match, f"{EXAMPLE_PAGE} lost its approval-gate example"
    return match.group(1)


def setup(tmp_path, claude_bin: str) -> tuple[Path, Path]:
    repo = make_repo(tmp_path, files={"build/out.txt": "artifact\n"}, gitignore=".ralph/*\n!.ralph/plan.md\nralph.toml\n")
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(json.dumps(harness.hook_settings()), encoding="utf-8")
    agent = [claude_bin, "-p", *harness.CLIENT_FLAGS, "--settings", str(settings_file)]
    config = documented_example()
    documented = 'agent_command = "claude -p --dangerously-skip-permissions"\n'
    assert documented in config
    (repo / "ralph.toml").write_text(config.replace(documented, f"agent_command = {json.dumps(agent)}\n"), encoding="utf-8")
    return repo, tmp_path / "endpoint.json"


def command(repo: Path, record: Path, answer: str) -> list[str]:
    loop = os.path.join(harness.ralph_bin_dir(), "ralph-loop")
    return [sys.executable, str(ENDPOINT), str(record), str(repo / "ralph.toml"), answer, loop, "--max-iterations", "4"]


def plan_session(repo: Path) -> list[dict]:
    return [write(f"{repo}/.ralph/plan.md", PLAN, id="t_plan"), text("The plan is written.")]


def events(repo: Path) -> list[dict]:
    return [json.loads(line) for line in (repo / ".ralph" / "events.jsonl").read_text(encoding="utf-8").splitlines()]


def test_readme_example_plan_approved_then_built_with_rm_rf_blocked(tmp_path, claude_bin):
    repo, record = setup(tmp_path, claude_bin)
    plan = f"{repo}/.ralph/plan.md"
    build = [
        bash("rm -rf build", "Start from a clean build", id="t_rm"),
        write(f"{repo}/greeting.txt", "hello\n", id="t_greet"),
        read(plan, id="t_read"),
        edit(plan, "- [ ] US-001:", "- [x] US-001:", id="t_mark"),
        text("US-001 is done."),
    ]
    result = run_with_server(command(repo, record, "approve"), repo, sessions=[plan_session(repo), build], timeout=240)

    assert result.error is None and not result.timed_out, result.describe()
    assert result.exit_code == 0, result.describe()
    endpoint = json.loads(record.read_text(encoding="utf-8"))
    # the chat got one message with working buttons, and Approve was pressed
    (posted,) = endpoint["requests"]
    body = json.loads(posted["body"])
    assert posted["path"] == "/chat" and body["text"].startswith("The plan of ") and body["text"].endswith(" is ready: approve or reject")
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/ralph/callback/[A-Za-z0-9_-]{43}\?action=approve", body["approve"]), body
    assert [c["status"] for c in endpoint["clicks"]] == [200]
    # plan stage, then the gate, then the build: in that order
    kinds = [(e["event"], e.get("stage") or e.get("point")) for e in events(repo) if e["event"] in ("iteration", "hooks", "stage_complete")]
    assert kinds == [("iteration", "plan"), ("stage_complete", "plan"), ("hooks", "stage_complete"),
                     ("iteration", "build"), ("stage_complete", "build")], kinds
    gate = [e for e in events(repo) if e["event"] == "hooks"][0]
    assert gate["actions"][0]["status"] == "success" and "abort" not in gate
    # the build: rm -rf was refused with the hook's reason, the story was verified and committed
    assert (repo / "build" / "out.txt").read_text(encoding="utf-8") == "artifact\n"
    refused = result.tool_result("t_rm")
    assert refused == {"is_error": True, "request": refused["request"], "content": (
        'PreToolUse:Bash hook error: Blocked by your hook "no rm -rf" (ralph.toml:25), exit 1: '
        "rm -rf is not allowed here: delete the files you mean one by one")}
    assert harness.git(repo, "log", "-1", "--format=%s") == "feat(US-001): Add greeting file"
    finish = json.loads((repo / ".ralph" / "run.json").read_text(encoding="utf-8"))["finish"]
    assert finish["type"] == "complete", finish
    assert body["approve"].split("/")[-1].split("?")[0] not in (repo / ".ralph" / "logs" / "lifecycle.jsonl").read_text()


def test_readme_example_rejected_plan_ends_the_run_with_the_message(tmp_path, claude_bin):
    repo, record = setup(tmp_path, claude_bin)
    result = run_with_server(command(repo, record, "reject"), repo, sessions=[plan_session(repo)], timeout=180)

    assert result.error is None and not result.timed_out, result.describe()
    assert result.exit_code == 6, result.describe()
    finish = json.loads((repo / ".ralph" / "run.json").read_text(encoding="utf-8"))["finish"]
    assert finish["type"] == "hook_abort" and finish["message"] == "aborted by a hook: needs a farewell story too", finish
    assert not [e for e in events(repo) if e["event"] == "iteration" and e.get("stage") == "build"]
    assert len({r["session"] for r in result.main_requests}) == 1  # no build session ever started
