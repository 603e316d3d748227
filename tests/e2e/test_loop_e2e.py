"""ralph-loop driving the real Claude Code CLI (one `claude -p` per iteration,
prompt on stdin, our hooks wired as settings.example.json wires them) against
the scripted Messages API, for a two-story plan."""
from __future__ import annotations

import json
import os

import pytest

from . import harness
from .harness import edit, make_repo, read, run_with_server, text, write

pytestmark = pytest.mark.e2e

PLAN = "# Plan\n\n- [ ] US-001: Add greeting file\n  - greeting.txt says hello\n- [ ] US-002: Add farewell file\n  - farewell.txt says bye\n"


def story_session(repo, story_id: str, filename: str, body: str, mark_first: bool = False) -> list[dict]:
    """What a well-behaved model does for one story: write the file, read the
    plan (read-before-edit), tick the story, say it is done."""
    plan = f"{repo}/.ralph/plan.md"
    turns = [
        write(f"{repo}/{filename}", body, id=f"t_write_{story_id}"),
        read(plan, id=f"t_read_{story_id}"),
        edit(plan, f"- [ ] {story_id}:", f"- [x] {story_id}:", id=f"t_mark_{story_id}"),
        text(f"{story_id} is done."),
    ]
    return turns


def loop_config(repo, settings_file, binary: str) -> str:
    agent = [binary, "-p", *harness.CLIENT_FLAGS, "--settings", str(settings_file)]
    return (
        "[loop]\n"
        f"agent_command = {json.dumps(agent)}\n"
        "timeout_seconds = 120\n"
        'verify_command = "test -f greeting.txt"\n'
        "no_progress_limit = 2\n"
        # sandboxed where bubblewrap runs (test_sandbox_e2e.py covers it); elsewhere these still run
        "\n[sandbox]\nfail_if_unavailable = false\n"
    )


def loop_executable() -> str:
    return os.path.join(harness.ralph_bin_dir(), "ralph-loop")


def test_loop_runs_two_stories_with_the_real_client(tmp_path, claude_bin):
    repo = make_repo(tmp_path, gitignore=".ralph/*\n!.ralph/plan.md\n")
    (repo / ".ralph").mkdir()
    (repo / ".ralph" / "plan.md").write_text(PLAN, encoding="utf-8")
    harness.git(repo, "add", "-A")
    harness.git(repo, "commit", "-q", "-m", "plan")
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(json.dumps(harness.hook_settings()), encoding="utf-8")
    (repo / "ralph.toml").write_text(loop_config(repo, settings_file, claude_bin), encoding="utf-8")
    harness.git(repo, "add", "ralph.toml")
    harness.git(repo, "commit", "-q", "-m", "loop config")

    sessions = [
        story_session(repo, "US-001", "greeting.txt", "hello\n"),
        story_session(repo, "US-002", "farewell.txt", "bye\n"),
    ]
    result = run_with_server([loop_executable(), "--max-iterations", "4"], repo, sessions=sessions, timeout=240)

    assert result.error is None and not result.timed_out, result.describe()
    assert result.exit_code == 0, result.describe()
    # both stories verified, committed by the loop and ticked in the plan
    log = harness.git(repo, "log", "--format=%s").splitlines()
    assert log[:2] == ["feat(US-002): Add farewell file", "feat(US-001): Add greeting file"], result.describe()
    assert harness.git(repo, "show", "HEAD~1:greeting.txt") == "hello"
    assert harness.git(repo, "show", "HEAD:farewell.txt") == "bye"
    assert (repo / ".ralph" / "plan.md").read_text(encoding="utf-8") == PLAN.replace("[ ]", "[x]")
    # the prompt went in on stdin: each session's first request carries its story
    firsts = [i for i, r in enumerate(result.main_requests) if r["turn"] == 0]
    assert len(firsts) == 2 and len({result.main_requests[i]["session"] for i in firsts}) == 2, result.describe()
    first, second = (result.request_text(i) for i in firsts)
    assert "Your story: US-001: Add greeting file" in first and "greeting.txt says hello" in first
    assert "Your story: US-002: Add farewell file" in second and "US-001" in second  # progress notes
    # the UserPromptSubmit hook read .ralph/run.json and injected the current story
    assert "Current story: US-001" in first and "Current story: US-002" in second, result.describe()
    # our hooks ran in every session and nothing was refused
    denied = [e for e in result.hooks_log() if e.get("decision") in ("deny", "block", "error")]
    assert not denied, denied
    events = [json.loads(line) for line in (repo / ".ralph" / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    iterations = [e for e in events if e["event"] == "iteration"]
    assert [(e["story"], e["result"], e["agent_exit"], e["verify"]["result"]) for e in iterations] == [
        ("US-001", "done", 0, "pass"), ("US-002", "done", 0, "pass")]
    finish = json.loads((repo / ".ralph" / "run.json").read_text(encoding="utf-8"))["finish"]
    assert finish["type"] == "complete" and finish["exit_code"] == 0


def test_stop_hook_sends_the_real_client_back_to_finish(tmp_path, claude_bin):
    """The model says it is done without ticking the story; our Stop hook blocks,
    the client sends the feedback, the model ticks it; the loop commits."""
    repo = make_repo(tmp_path)
    (repo / ".ralph").mkdir()
    (repo / ".ralph" / "plan.md").write_text("- [ ] US-001: Add greeting file\n", encoding="utf-8")
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(json.dumps(harness.hook_settings()), encoding="utf-8")
    (repo / "ralph.toml").write_text(loop_config(repo, settings_file, claude_bin), encoding="utf-8")
    harness.git(repo, "add", "-A")  # the loop starts only on a tree without uncommitted changes outside .ralph/
    harness.git(repo, "commit", "-q", "-m", "loop config")
    plan = f"{repo}/.ralph/plan.md"
    session = [
        write(f"{repo}/greeting.txt", "hello\n", id="t_write"),
        text("All done."),
        read(plan, id="t_read"),
        edit(plan, "- [ ] US-001:", "- [x] US-001:", id="t_mark"),
        text("Marked it done."),
    ]
    result = run_with_server([loop_executable(), "--once"], repo, sessions=[session], timeout=180)

    assert result.exit_code == 0, result.describe()
    feedback = [i for i in range(len(result.main_requests)) if "Stop hook feedback" in result.new_text(i)]
    assert feedback, result.describe()
    assert "US-001" in result.new_text(feedback[0])
    assert harness.git(repo, "log", "-1", "--format=%s") == "feat(US-001): Add greeting file"


def test_a_tick_then_a_failing_test_holds_the_stop_with_the_real_client(tmp_path, claude_bin):
    """The checkpoint already has a failing test. The model ticks its story
    first, then runs the tests: the failure is its own (the tick changed the
    project since the checkpoint), so the Stop hook blocks; the model fixes the
    test and the loop commits."""
    legacy = "def test_legacy():\n    assert 1 == 2\n"
    repo = make_repo(tmp_path, files={"test_legacy.py": legacy}, gitignore=".ralph/*\n!.ralph/plan.md\n__pycache__/\n")
    (repo / ".ralph").mkdir()
    (repo / ".ralph" / "plan.md").write_text("- [ ] US-001: Fix the legacy test\n", encoding="utf-8")
    harness.git(repo, "add", "-A")
    harness.git(repo, "commit", "-q", "-m", "plan")
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(json.dumps(harness.hook_settings()), encoding="utf-8")
    tests = "python -m pytest -q -p no:cacheprovider test_legacy.py"
    (repo / "ralph.toml").write_text(loop_config(repo, settings_file, claude_bin).replace(
        'verify_command = "test -f greeting.txt"', f"verify_command = {json.dumps(tests)}"), encoding="utf-8")
    harness.git(repo, "add", "ralph.toml")
    harness.git(repo, "commit", "-q", "-m", "loop config")  # the checkpoint: nothing outside .ralph/ differs from it
    plan = f"{repo}/.ralph/plan.md"
    session = [
        read(plan, id="t_read"),
        edit(plan, "- [ ] US-001:", "- [x] US-001:", id="t_mark"),
        harness.bash(tests, id="t_fail"),
        text("Done."),
        read(f"{repo}/test_legacy.py", id="t_read_test"),
        write(f"{repo}/test_legacy.py", "def test_legacy():\n    assert 1 == 1\n", id="t_fix"),
        harness.bash(tests, id="t_pass"),
        text("Fixed the test."),
    ]
    result = run_with_server([loop_executable(), "--once"], repo, sessions=[session], timeout=180)

    assert result.exit_code == 0, result.describe()
    assert "1 failed" in result.tool_result("t_fail")["content"], result.describe()
    stops = [e for e in result.hooks_log() if e.get("event") == "Stop"]
    assert [e["decision"] for e in stops] == ["block", "allow"], result.describe()
    feedback = [i for i in range(len(result.main_requests)) if "Stop hook feedback" in result.new_text(i)]
    assert feedback, result.describe()
    told = result.new_text(feedback[0])
    assert "the last test run failed" in told and "test_legacy" in told, told[-2000:]
    assert harness.git(repo, "log", "-1", "--format=%s") == "feat(US-001): Fix the legacy test"
