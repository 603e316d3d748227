"""Our handlers, wired exactly as settings.example.json wires them, inside the
real Claude Code CLI. Each scenario checks both sides: what our handler decided
(the hook_response in stream-json, .ralph/logs/hooks.jsonl) and what the model
was then told (the requests the scripted API received)."""
from __future__ import annotations

import json

import pytest

from . import harness
from .harness import bash, edit, make_bare_remote, make_repo, read, run_scenario, text, write, write_active_run

pytestmark = pytest.mark.e2e

FAILING_TEST_PROJECT = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
}
# the venv's python is first on PATH inside the run, so this is the venv's pytest
FAILING_TEST_COMMAND = "python -m pytest -q -p no:cacheprovider test_calc.py"


def log_entries(result: harness.RunResult, event: str, tool: str | None = None) -> list[dict]:
    return [e for e in result.hooks_log() if e.get("event") == event and (tool is None or e.get("tool") == tool)]


def assert_judged_without_errors(result: harness.RunResult) -> None:
    """Our handlers ran their rules: no call fell back to the fail-safe answer."""
    broken = [e for e in result.hooks_log() if e.get("decision") == "error" or any("internal error" in n for n in e.get("notes", []))]
    assert not broken, f"handler errors in hooks.jsonl: {json.dumps(broken)[:2000]}\n{result.describe()}"
    fail_safe = [e for e in result.hooks_log() if str(e.get("reason", "")).startswith("ralph-hooks could not check")]
    assert not fail_safe, f"fail-safe denials instead of judgements: {fail_safe}\n{result.describe()}"


def only_output(result: harness.ScenarioResult, event: str, hook_name: str | None = None) -> dict:
    responses = [r for r in result.hook_responses(event) if hook_name is None or r.get("hook_name") == hook_name]
    assert len(responses) == 1, f"expected one {hook_name or event} hook call, got {len(responses)}\n{result.describe()}"
    return json.loads(responses[0]["stdout"])


def test_git_push_is_denied_and_never_runs(tmp_path, claude_bin):
    repo = make_repo(tmp_path)
    remote = make_bare_remote(repo)
    (repo / "feature.txt").write_text("new work\n", encoding="utf-8")
    harness.git(repo, "add", "feature.txt")
    harness.git(repo, "commit", "-q", "-m", "local work a push would publish")
    remote_refs_before = harness.git(remote, "for-each-ref")

    result = run_scenario(repo, [bash("git push origin main", "Push", id="t_push"), text("The push was refused.")], prompt="Publish the work.")

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert_judged_without_errors(result)
    # our side: the guard denied it, with a reason
    output = only_output(result, "PreToolUse", "PreToolUse:Bash")
    decision = output.get("hookSpecificOutput", {})
    assert decision.get("permissionDecision") == "deny", result.describe()
    reason = decision["permissionDecisionReason"]
    assert "push" in reason.lower(), reason
    assert [e["decision"] for e in log_entries(result, "PreToolUse", "Bash")] == ["deny"], result.describe()
    # the tool did not run: no post-tool hook, the remote did not move
    assert not result.hook_responses("PostToolUse") and not result.hook_responses("PostToolUseFailure"), result.describe()
    assert harness.git(remote, "for-each-ref") == remote_refs_before
    assert harness.git(repo, "rev-parse", "main") != harness.git(remote, "rev-parse", "main")
    # the model's side: an error tool_result carrying our reason, word for word
    assert result.tool_result("t_push") == {"content": f"PreToolUse:Bash hook error: {reason}", "is_error": True, "request": 1}
    assert result.final["permission_denials"][0]["tool_use_id"] == "t_push"


def test_edit_of_unread_file_is_denied_until_it_is_read(tmp_path, claude_bin):
    repo = make_repo(tmp_path, files={"greet.py": "def greet():\n    return 'helo'\n"})
    target = f"{repo}/greet.py"
    turns = [
        edit(target, "'helo'", "'hello'", id="t_edit_blind"),
        read(target, id="t_read"),
        edit(target, "'helo'", "'hello'", id="t_edit_after_read"),
        text("Fixed the greeting."),
    ]
    result = run_scenario(repo, turns, prompt="Fix the typo in greet.py.")

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert_judged_without_errors(result)
    # our side: deny, then (after the Read was recorded) allow
    edits = [json.loads(r["stdout"]) for r in result.hook_responses("PreToolUse") if r["hook_name"] == "PreToolUse:Edit"]
    assert len(edits) == 2, result.describe()
    assert edits[0]["hookSpecificOutput"]["permissionDecision"] == "deny"
    reason = edits[0]["hookSpecificOutput"]["permissionDecisionReason"]
    assert "greet.py" in reason and "Read" in reason, reason
    assert edits[1] == {}, "the edit after a Read must pass untouched (no 'allow' that would skip the user's own rules)"
    assert [e["decision"] for e in log_entries(result, "PreToolUse", "Edit")] == ["deny", "allow"], result.describe()
    assert any(e.get("recorded", "").endswith("greet.py") for e in log_entries(result, "PostToolUse", "Read")), result.describe()
    # the model's side: an error carrying our reason, then a normal success
    assert result.tool_result("t_edit_blind") == {"content": f"PreToolUse:Edit hook error: {reason}", "is_error": True, "request": 1}
    after = result.tool_result("t_edit_after_read")
    assert not after["is_error"] and "has been updated successfully" in after["content"], after
    # and the file really changed once
    assert result.read("greet.py") == "def greet():\n    return 'hello'\n"


def test_write_of_a_new_file_is_allowed(tmp_path, claude_bin):
    repo = make_repo(tmp_path)
    result = run_scenario(repo, [write(f"{repo}/notes.txt", "some notes\n", id="t_write"), text("Wrote the notes.")], prompt="Write notes.")

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert_judged_without_errors(result)
    assert only_output(result, "PreToolUse", "PreToolUse:Write") == {}, result.describe()
    assert [e["decision"] for e in log_entries(result, "PreToolUse", "Write")] == ["allow"], result.describe()
    assert any(e.get("recorded", "").endswith("notes.txt") for e in log_entries(result, "PostToolUse", "Write")), result.describe()
    written = result.tool_result("t_write")
    assert not written["is_error"] and written["content"].startswith(f"File created successfully at: {repo}/notes.txt"), written
    assert result.read("notes.txt") == "some notes\n"


def test_failing_test_run_reaches_post_tool_use_failure_and_the_model_gets_our_context(tmp_path, claude_bin):
    repo = make_repo(tmp_path, files=FAILING_TEST_PROJECT)
    result = run_scenario(repo, [bash(FAILING_TEST_COMMAND, "Run the tests", id="t_tests"), text("The tests fail.")], prompt="Run the tests.")

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert_judged_without_errors(result)
    # the command really ran and failed: the client reports it on PostToolUseFailure
    tool = result.tool_result("t_tests")
    assert tool["is_error"] and tool["content"].startswith("Exit code 1\n") and "test_add" in tool["content"], tool
    assert not result.hook_responses("PostToolUse"), "a non-zero Bash exit must not arrive on PostToolUse"
    # our side: the failure was judged as a failing pytest run, with the failing test named
    output = only_output(result, "PostToolUseFailure", "PostToolUseFailure:Bash")
    context = output.get("hookSpecificOutput", {}).get("additionalContext", "")
    assert context and "test_add" in context, f"no failure context naming test_add: {output}\n{result.describe()}"
    assert "test_zero" not in context, "only the failing test may be named"
    assert [e["decision"] for e in log_entries(result, "PostToolUseFailure", "Bash")] == ["context"], result.describe()
    # the model's side: the very next request carries our context, as the client words it
    assert f"PostToolUseFailure:Bash hook additional context: {context}" in result.new_text(1), result.new_text(1)[-3000:]


def test_prompt_context_names_the_story_while_a_loop_run_is_active(tmp_path, claude_bin):
    repo = make_repo(tmp_path)
    run = write_active_run(repo, "US-007", "Add a greeting", ["greet() returns 'hello'", "tests pass"])
    # the story stays open, so Stop blocks once: two turns
    result = run_scenario(repo, [text("Starting on the story."), text("Stopping for now.")], prompt="Continue the loop.")

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert_judged_without_errors(result)
    output = only_output(result, "UserPromptSubmit")
    context = output["hookSpecificOutput"]["additionalContext"]
    for expected in ("US-007", "Add a greeting", "greet() returns 'hello'", "tests pass", run["run_id"]):
        assert expected in context, f"{expected!r} missing from {context!r}"
    assert [e["decision"] for e in log_entries(result, "UserPromptSubmit")] == ["context"], result.describe()
    # the model's side: the first request already carries it, in the conversation
    first = harness.flatten_text(result.main_requests[0]["body"]["messages"])
    assert f"UserPromptSubmit hook additional context: {context}" in first, first[-3000:]
    assert "Continue the loop." in first


def test_stop_is_blocked_once_while_the_story_is_open_then_allowed(tmp_path, claude_bin):
    repo = make_repo(tmp_path)
    write_active_run(repo, "US-042", "Make the build green", [])
    turns = [text("I think I'm done."), text("I could not finish US-042: the build needs a decision.")]
    result = run_scenario(repo, turns, prompt="Work on the story.")

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert_judged_without_errors(result)
    assert len(result.main_requests) == 2, result.describe()
    # our side: block with a reason naming the story, then let the second stop through
    outputs = result.hook_outputs("Stop")
    assert len(outputs) == 2, result.describe()
    assert outputs[0].get("decision") == "block", outputs
    reason = outputs[0]["reason"]
    assert "US-042" in reason and "Make the build green" in reason, reason
    assert outputs[1] == {}, outputs
    assert [e["decision"] for e in log_entries(result, "Stop")] == ["block", "allow"], result.describe()
    failures = [json.loads(line) for line in (result.read(".ralph/failures.jsonl") or "").splitlines()]
    assert [(f["story"], f["kind"]) for f in failures] == [("US-042", "stop_incomplete")], failures
    # the model's side: one more request, carrying our reason as Stop hook feedback
    assert f"Stop hook feedback:\n{reason}" in result.new_text(1), result.new_text(1)[-3000:]
    assert "Stop hook feedback" not in result.request_text(0)
    assert result.final["result"] == turns[1]["text"]


def test_every_hook_call_exits_0_with_exactly_one_json_object(tmp_path, claude_bin):
    """Across every run of our handlers in this session (plus one here that
    takes every output path: context, allow, deny, failure context, stop block),
    each hook call exited 0 and printed exactly one JSON object."""
    repo = make_repo(tmp_path, files=FAILING_TEST_PROJECT)
    make_bare_remote(repo)
    # plan stage: the failing test run is judged but never rolled back
    write_active_run(repo, "US-100", "Exercise every hook", [], stage="plan")
    turns = [
        read(f"{repo}/README.md", id="t_read"),
        edit(f"{repo}/calc.py", "a - b", "a + b", id="t_edit_unread"),
        edit(f"{repo}/README.md", "hello", "hello world", id="t_edit"),
        write(f"{repo}/notes.txt", "notes\n", id="t_write"),
        bash("git status --short", id="t_status"),
        bash(FAILING_TEST_COMMAND, id="t_tests"),
        bash("git push origin main", id="t_push"),
        text("Stopping."),
        text("Stopping again."),
    ]
    result = run_scenario(repo, turns, prompt="Exercise every hook.")
    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert_judged_without_errors(result)
    fired = {r["hook_event"] for r in result.hook_responses()}
    assert fired == {"UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop"}, fired

    ours = [r for r in harness.RESULTS if isinstance(r, harness.ScenarioResult) and r.uses_project_hooks]
    assert result in ours
    for each in ours:
        harness.assert_hooks_answered_cleanly(each)
    total = sum(len(r.hook_responses()) for r in ours)
    print(f"\n{total} hook calls of ours across {len(ours)} client runs: all exit 0 with one JSON object")
