"""The agent's tools (`ralph mcp`) through the real Claude Code CLI: ralph-loop
registers the server with `--mcp-config`, the client starts it, and the
scripted model calls mcp__ralph__complete_story, mcp__ralph__report_blocked
and mcp__ralph__request_merge; what the model is told comes back in the
recorded requests, what the loop made of it in git, the plan and .ralph/."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from . import harness
from .harness import bash, edit, make_bare_remote, make_repo, read, run_with_server, text, tool_use, write

pytest.importorskip("mcp", reason="the mcp extra (pip install -e '.[mcp]'); scripts/test installs it")
pytestmark = pytest.mark.e2e

BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
VERIFY = "python -m pytest -q -p no:cacheprovider"


def loop_project(tmp_path: Path, plan: str, claude_bin: str, verify: str = VERIFY, extra: str = "",
                 files: dict[str, str] | None = None) -> Path:
    repo = make_repo(tmp_path, files=files, gitignore=".ralph/*\n!.ralph/plan.md\n!.ralph/progress.md\n__pycache__/\n")
    (repo / ".ralph").mkdir()
    (repo / ".ralph" / "plan.md").write_text(plan, encoding="utf-8")
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(json.dumps(harness.hook_settings()), encoding="utf-8")
    agent = [claude_bin, "-p", *harness.CLIENT_FLAGS, "--settings", str(settings_file)]
    (repo / "ralph.toml").write_text(
        "[loop]\n"
        f"agent_command = {json.dumps(agent)}\n"
        "timeout_seconds = 150\n"
        f"verify_command = {json.dumps(verify)}\n"
        "no_progress_limit = 3\n"
        "\n[sandbox]\nfail_if_unavailable = false\n" + extra, encoding="utf-8")
    harness.git(repo, "add", "-A")
    harness.git(repo, "commit", "-q", "-m", "plan and loop config")
    return repo


def ralph_loop() -> str:
    return os.path.join(harness.ralph_bin_dir(), "ralph-loop")


def events(repo: Path, kind: str) -> list[dict]:
    lines = (repo / ".ralph" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == kind]


def assert_no_hook_refused(result: harness.RunResult) -> None:
    refused = [e for e in result.hooks_log() if e.get("decision") in ("deny", "block", "error")]
    assert not refused, refused


def tool_names(result: harness.RunResult, index: int = 0) -> list[str]:
    return [t["name"] for t in result.main_requests[index]["body"].get("tools") or []]


def test_complete_story_reports_failing_tests_then_finishes_the_story(tmp_path, claude_bin):
    plan = "- [ ] US-001: Add numbers\n  - add(2, 3) is 5\n"
    repo = loop_project(tmp_path, plan, claude_bin, files={"calc.py": BROKEN, "test_calc.py": TESTS})
    summary = "add() returns a + b; test_calc covers 2 + 3 and 0 + 0."
    session = [
        tool_use("mcp__ralph__story_status", {}, id="t_status"),
        tool_use("mcp__ralph__complete_story", {"story_id": "US-001", "summary": summary, "tests_passed": True}, id="t_done_red"),
        read(f"{repo}/calc.py", id="t_read"),
        edit(f"{repo}/calc.py", "return a - b", "return a + b", id="t_fix"),
        tool_use("mcp__ralph__complete_story", {"story_id": "US-001", "summary": summary, "tests_passed": True}, id="t_done_green"),
        text("US-001 is done."),
    ]
    result = run_with_server([ralph_loop(), "--once"], repo, sessions=[session], timeout=240)

    assert result.exit_code == 0, result.describe()
    assert {"mcp__ralph__complete_story", "mcp__ralph__report_blocked", "mcp__ralph__request_merge",
            "mcp__ralph__story_status"} <= set(tool_names(result)), tool_names(result)  # in the very first request
    assert "## The ralph tools" in result.request_text(0)  # the prompt says when to use them
    status = result.tool_result("t_status")
    assert not status["is_error"] and "Current story: US-001: Add numbers" in status["content"], status
    assert "Attempt 1 of at most 5" in status["content"]
    red = result.tool_result("t_done_red")
    assert red["is_error"], red  # the model is told, and keeps working
    assert "US-001 is NOT done" in red["content"] and "test_calc.py::test_add" in red["content"], red["content"]
    assert "assert -1 == 5" in red["content"] and "US-001 stays open" in red["content"]
    green = result.tool_result("t_done_green")
    assert not green["is_error"] and "US-001 is done" in green["content"] and "Stop now" in green["content"], green
    # committed by the loop, which took complete_story's pass on the unchanged tree
    assert harness.git(repo, "log", "-1", "--format=%s") == "feat(US-001): Add numbers"
    assert harness.git(repo, "show", "HEAD:calc.py") == FIXED.strip()
    assert (repo / ".ralph" / "plan.md").read_text(encoding="utf-8").startswith("- [x] US-001:")
    assert summary in (repo / ".ralph" / "progress.md").read_text(encoding="utf-8")
    [iteration] = events(repo, "iteration")
    assert iteration["result"] == "done" and iteration["verify"]["result"] == "pass", iteration
    assert iteration["verify"]["by"] == "complete_story", iteration
    assert_no_hook_refused(result)


def test_report_blocked_sets_the_story_aside_and_the_run_goes_on(tmp_path, claude_bin):
    plan = ("- [ ] US-001: Cap add() on overflow\n  - add() follows the product's overflow rule\n"
            "- [ ] US-002: Add a greeting\n  - greeting.txt says hello\n")
    paged = tmp_path / "paged.log"  # what a story_blocked hook saw (outside the repo)
    hook = ("\n[[hooks.story_blocked]]\n"
            f"command = \"printf '%s|%s|%s\\\\n' {{{{story_id}}}} {{{{reason}}}} {{{{question}}}} >> {paged}\"\n")
    repo = loop_project(tmp_path, plan, claude_bin, verify="test -f greeting.txt", extra=hook)
    reason = "The plan does not say what add() must do on overflow; saturating and raising both break callers."
    question = "Should add() saturate at 2**31-1 or raise OverflowError?"
    sessions = [
        [
            write(f"{repo}/overflow.py", "LIMIT = 2**31 - 1  # undecided\n", id="t_draft"),
            tool_use("mcp__ralph__report_blocked", {"story_id": "US-001", "reason": reason, "question": question}, id="t_blocked"),
            text("US-001 needs a person's decision; stopping."),
        ],
        [
            write(f"{repo}/greeting.txt", "hello\n", id="t_greet"),
            tool_use("mcp__ralph__complete_story", {"story_id": "US-002", "summary": "greeting.txt says hello.",
                                                    "tests_passed": True}, id="t_done"),
            text("US-002 is done."),
        ],
    ]
    result = run_with_server([ralph_loop(), "--max-iterations", "4"], repo, sessions=sessions, timeout=300)

    assert result.exit_code == 4, result.describe()  # finish "blocked": a story waits for a person
    blocked = result.tool_result("t_blocked")
    assert not blocked["is_error"] and "marked blocked ([!])" in blocked["content"] and "Stop now" in blocked["content"]
    assert not any("Stop hook feedback" in result.new_text(i) for i in range(len(result.main_requests))), result.describe()
    plan_now = (repo / ".ralph" / "plan.md").read_text(encoding="utf-8")
    assert "- [!] US-001:" in plan_now and "- [x] US-002:" in plan_now
    progress = (repo / ".ralph" / "progress.md").read_text(encoding="utf-8")
    assert f"Reason: {reason}" in progress and f"Question for a person: {question}" in progress
    # one attempt, not five: the next iteration already worked on US-002
    assert [(e["story"], e["result"]) for e in events(repo, "iteration")] == [("US-001", "blocked_by_agent"), ("US-002", "done")]
    [event] = events(repo, "story_blocked")
    assert (event["story"], event["by"], event["reason"], event["question"]) == ("US-001", "agent", reason, question)
    assert paged.read_text(encoding="utf-8") == f"US-001|{reason}|{question}\n"  # the hook point fired
    # the draft did not leak into US-002's commit: it is saved under the rollback ref
    assert harness.git(repo, "log", "--format=%s") .splitlines()[0] == "feat(US-002): Add a greeting"
    assert "overflow.py" not in harness.git(repo, "show", "--stat", "--format=", "HEAD")
    ref = events(repo, "iteration")[0]["rollback"]["ref"]
    assert harness.git(repo, "show", f"{ref}:overflow.py").startswith("LIMIT")
    assert_no_hook_refused(result)


def test_request_merge_is_what_a_denied_push_points_to(tmp_path, claude_bin):
    plan = "- [ ] US-001: Add a greeting\n  - greeting.txt says hello\n"
    repo = loop_project(tmp_path, plan, claude_bin, verify="test -f greeting.txt")
    remote = make_bare_remote(repo)
    refs_before = harness.git(remote, "for-each-ref")
    session = [
        write(f"{repo}/greeting.txt", "hello\n", id="t_greet"),
        bash("git add greeting.txt && git commit -q -m greeting && git push origin main", "Publish", id="t_push"),
        tool_use("mcp__ralph__request_merge", {"story_id": "US-001", "summary": "greeting.txt is ready for main."}, id="t_merge"),
        tool_use("mcp__ralph__complete_story", {"story_id": "US-001", "summary": "greeting.txt says hello.",
                                                "tests_passed": True}, id="t_done"),
        text("Done; merge requested."),
    ]
    result = run_with_server([ralph_loop(), "--once"], repo, sessions=[session], timeout=240)

    assert result.exit_code == 0, result.describe()
    push = result.tool_result("t_push")
    assert push["is_error"] and "PreToolUse:Bash hook error" in push["content"], push
    assert "mcp__ralph__request_merge" in push["content"], push["content"]  # the denial names the tool
    merge = result.tool_result("t_merge")
    assert not merge["is_error"] and "Nothing was pushed or merged" in merge["content"], merge
    [request] = [json.loads(line) for line in (repo / ".ralph" / "merge_requests.jsonl").read_text(encoding="utf-8").splitlines()]
    assert (request["story"], request["iteration"], request["summary"]) == ("US-001", 1, "greeting.txt is ready for main.")
    assert request["run_id"] == json.loads((repo / ".ralph" / "run.json").read_text())["run_id"]
    assert [e["summary"] for e in events(repo, "merge_requested")] == ["greeting.txt is ready for main."]
    assert harness.git(remote, "for-each-ref") == refs_before  # nothing reached the remote
    assert harness.git(repo, "log", "-1", "--format=%s") == "feat(US-001): Add a greeting"


def test_install_mcp_gives_an_interactive_session_the_tools(tmp_path, claude_bin):
    """`ralph install --mcp --user` in a fresh HOME, then a client started with
    no --settings and no --mcp-config: the user's files alone give it the
    server, and the hooks know it (the denial names request_merge)."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    repo = make_repo(tmp_path)
    remote = make_bare_remote(repo)
    refs_before = harness.git(remote, "for-each-ref")
    env = harness.client_env(home, None, claude_bin)
    ralph = os.path.join(harness.ralph_bin_dir(), "ralph")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([ralph, *args], capture_output=True, text=True, cwd=repo, env=env, timeout=300)

    installed = run("install", "--user", "--mcp")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    server = json.loads((home / ".claude" / ".claude.json").read_text())["mcpServers"]["ralph"]
    assert server["args"][-3:] == ["-m", "ralph", "mcp"], server
    assert json.loads((home / ".claude" / "settings.json").read_text())["env"] == {"RALPH_AGENT_TOOLS": "1"}
    listed = subprocess.run([claude_bin, "mcp", "list"], capture_output=True, text=True, cwd=repo, env=env, timeout=120)
    assert "ralph:" in listed.stdout and "Connected" in listed.stdout, listed.stdout + listed.stderr
    doctor = run("doctor")
    assert doctor.returncode == 0, doctor.stdout
    assert "`ralph mcp` starts and lists complete_story, report_blocked, request_merge, story_status" in doctor.stdout
    assert f"registered in user ({home / '.claude' / '.claude.json'})" in doctor.stdout

    command = [claude_bin, "-p", "Publish the work.", *harness.CLIENT_FLAGS]
    turns = [bash("git push origin main", "Push", id="t_push"),
             tool_use("mcp__ralph__story_status", {}, id="t_status"),
             text("Nothing to push from here.")]
    result = run_with_server(command, repo, turns, env=env, timeout=120)
    assert result.exit_code == 0, result.describe()
    push = result.tool_result("t_push")
    assert push["is_error"] and "mcp__ralph__request_merge" in push["content"], push
    assert harness.git(remote, "for-each-ref") == refs_before
    status = result.tool_result("t_status")
    assert "There is no current story: no ralph-loop run is working on a story in" in status["content"], status

    removed = run("uninstall", "--user")
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert json.loads((home / ".claude" / ".claude.json").read_text())["mcpServers"] == {}
    assert not (home / ".claude" / "settings.json").exists()  # install created it, and nothing else changed it
