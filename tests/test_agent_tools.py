"""The agent's tools (ralph.mcp) against real repos: the loop's own code sets
up a build iteration (run.json, the tools' context in .ralph/protected/),
the verify command is a real pytest run, and each tool is called as the
server calls it, then the loop judges what is left, as it does once the
agent has exited. The server itself is spoken to through the SDK's client;
its hot-path cousins (`ralph pre-tool`, `ralph stop`) must not load it."""
from __future__ import annotations

import asyncio
import io
import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from ralph.loop import agent_tools, prepare
from ralph.loop.display import Display
from ralph.loop.run import Run
from ralph.loop.sandbox_layer import SandboxLayer
from ralph.mcp import context
from ralph.mcp.complete_story import complete_story
from ralph.mcp.report_blocked import report_blocked
from ralph.mcp.request_merge import request_merge
from ralph.mcp.story_status import story_status
from ralph.plan import set_story_state, story_state
from ralph.run import tool_calls as records
from ralph.run.proc import Interrupts
from ralph.run.settings import loop_settings

from .conftest import RALPH, hold_loop_lock, load_payload, run_hook
from .loop_support import Project, git

pytest.importorskip("mcp", reason="the mcp extra (pip install -e '.[mcp]'); scripts/test installs it")

VERIFY = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
PLAN = "- [ ] US-001: Add numbers\n  - add(2, 3) is 5\n- [ ] US-002: Subtract numbers\n"
BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"


class Iteration:
    """A build iteration as the loop begins it, before its agent starts."""

    def __init__(self, tmp_path, monkeypatch, config: str | None = None, verify: str | None = VERIFY) -> None:
        monkeypatch.delenv("RALPH_STATE_DIR", raising=False)
        monkeypatch.delenv("RALPH_CONFIG", raising=False)
        self.project = Project(tmp_path, PLAN, config=config)
        self.root = self.project.root
        self.project.write("calc.py", BROKEN)
        self.project.write("test_calc.py", TESTS)
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", "calc")
        flags = {"verify_command": verify} if verify else {}
        settings = loop_settings(self.root, {}, None, flags)
        self.run = Run(settings, self.project.plan_path, Display(io.StringIO(), tty=False), Interrupts())
        self.run.sandbox = SandboxLayer()
        self.run.stage = settings.stages[0]
        story = self.run.stories()[0]
        self.run.budget(story).iterations += 1
        self.it = prepare.begin(self.run, story)
        agent_tools.write_context(self.run, self.it)
        hold_loop_lock(self.run.state_dir)  # the loop holds its lock while it lives

    def ctx(self, **env: str) -> context.ToolContext:
        """What a call of the server the client started sees (its environment is the agent's)."""
        return context.find(dict(os.environ, CLAUDE_PROJECT_DIR=self.root, RALPH_RUN_ID=self.run.run_id,
                                 RALPH_ITERATION=str(self.run.iteration), RALPH_AGENT_TOOLS="1", **env), self.root)

    def state(self, story: str = "US-001") -> str | None:
        return story_state(self.project.plan_path, story)

    def progress(self) -> str:
        return self.project.read(".ralph/progress.md")


def test_complete_story_runs_the_verify_command_and_keeps_a_failing_story_open(tmp_path, monkeypatch) -> None:
    loop = Iteration(tmp_path, monkeypatch)
    answer = complete_story(loop.ctx(), "US-001", "add is done", True)
    assert answer.is_error, answer.text
    assert "US-001 is NOT done" in answer.text
    assert "test_calc.py::test_add" in answer.text  # the failing test, by name
    assert "assert -1 == 5" in answer.text  # and the end of the output
    assert "test_calc.py::test_zero" not in answer.text.split("End of the output:")[0]  # it passes
    assert loop.state() == "todo"
    assert not os.path.exists(os.path.join(loop.root, ".ralph", "progress.md"))
    history = os.path.join(loop.run.state_dir, "runs", loop.run.run_id, "tests.jsonl")
    with open(history, encoding="utf-8") as f:
        runs = [json.loads(line) for line in f]
    assert [(r["verdict"], r["by"], r["iteration"], r["story"]) for r in runs] == [("fail", "complete_story", 1, "US-001")]
    assert "test_calc.py::test_add" in runs[0]["failing_tests"]
    with open(loop.it.log_path, "rb") as f:
        assert b"=== complete_story verify:" in f.read()  # the run is in the iteration's log


def test_complete_story_marks_a_passing_story_done_and_the_loop_trusts_only_that_tree(tmp_path, monkeypatch) -> None:
    loop = Iteration(tmp_path, monkeypatch)
    loop.project.write("calc.py", FIXED)
    answer = complete_story(loop.ctx(), "US-001", "add() adds; test_calc covers 2+3 and 0+0.", True)
    assert not answer.is_error, answer.text
    assert "US-001 is done" in answer.text and "Stop now" in answer.text
    assert loop.state() == "done"
    assert "add() adds; test_calc covers 2+3 and 0+0." in loop.progress()
    assert "US-001: Add numbers (complete_story, iteration 1 of run" in loop.progress()
    call = records.last_call(loop.run.state_dir, loop.run.run_id, 1, "US-001", records.COMPLETE)
    assert call is not None and call["verify"]["result"] == "pass" and len(call["tree"]) == 40
    # the loop, after the agent: the same tree is not verified again
    assert agent_tools.verified_unchanged(loop.run, loop.it)
    assert loop.it.event["verify"]["by"] == "complete_story" and loop.it.event["verify"]["result"] == "pass"
    # a change after the call: the loop runs the verify command itself
    loop.project.write("notes.txt", "written after complete_story\n")
    loop.it.event.pop("verify")
    assert not agent_tools.verified_unchanged(loop.run, loop.it)
    assert "verify" not in loop.it.event and "tree changed" in loop.it.event["complete_story"]
    # broken again: the next call fails, and the story is open again in the plan
    loop.project.write("calc.py", BROKEN)
    stale_bytecode_off(loop.project.root)
    assert complete_story(loop.ctx(), "US-001", "again", True).is_error
    assert loop.state() == "todo"


def test_complete_story_runs_the_verify_command_as_the_loop_would(tmp_path, monkeypatch) -> None:
    # not with the markers of the agent's session (a project testing its own
    # ralph hooks would take them for the loop's iteration)
    probe = ("import os, sys; leaked = [k for k in ('RALPH_RUN_ID', 'RALPH_ITERATION', 'RALPH_AGENT_TOOLS') if k in os.environ]; "
             "print(leaked); sys.exit(1 if leaked else 0)")
    loop = Iteration(tmp_path, monkeypatch, verify=f"{shlex.quote(sys.executable)} -c {shlex.quote(probe)}")
    answer = complete_story(loop.ctx(), "US-001", "s", True)
    assert not answer.is_error, answer.text


def test_complete_story_refuses_a_story_that_is_not_the_current_one(tmp_path, monkeypatch) -> None:
    loop = Iteration(tmp_path, monkeypatch)
    loop.project.write("calc.py", FIXED)
    for tool in (lambda ctx: complete_story(ctx, "US-002", "done", True),
                 lambda ctx: report_blocked(ctx, "US-002", "why", "what"),
                 lambda ctx: request_merge(ctx, "US-002", "merge it")):
        answer = tool(loop.ctx())
        assert answer.is_error
        assert "'US-002' is not the current story. The current story is US-001 (Add numbers)" in answer.text
    assert loop.state("US-002") == "todo" and loop.state() == "todo"
    assert not os.path.exists(records.merge_requests_path(loop.run.state_dir))


def test_report_blocked_marks_the_story_lets_the_agent_stop_and_the_loop_moves_on(tmp_path, monkeypatch) -> None:
    loop = Iteration(tmp_path, monkeypatch)
    loop.project.write("calc.py", "def add(a, b):\n    raise NotImplementedError  # which overflow rule?\n")
    answer = report_blocked(loop.ctx(), "US-001", "The spec does not say how add() treats overflow.",
                            "Should add() saturate at 2**31-1 or raise?")
    assert not answer.is_error, answer.text
    assert "marked blocked ([!])" in answer.text and "Stop now" in answer.text
    assert loop.state() == "blocked"
    assert "Reason: The spec does not say how add() treats overflow." in loop.progress()
    assert "Question for a person: Should add() saturate at 2**31-1 or raise?" in loop.progress()
    # the Stop hook lets a story handed to a person stop (it refuses an unfinished one)
    stop = run_hook("stop", load_payload("Stop", loop.root), loop.root, env={"CLAUDE_PROJECT_DIR": loop.root})
    assert stop.output == {}, stop.output
    # the loop, after the agent: work saved and reset, failure noted, event with the question
    agent_tools.story_blocked(loop.run, loop.it)
    assert loop.project.read("calc.py") == BROKEN  # back at the checkpoint
    ref = loop.it.event["rollback"]["ref"]
    assert "NotImplementedError" in git(loop.root, "show", f"{ref}:calc.py")
    assert loop.state() == "blocked"
    [blocked] = loop.project.events("story_blocked")
    assert blocked["by"] == "agent" and blocked["story"] == "US-001"
    assert blocked["reason"] == "The spec does not say how add() treats overflow."
    assert blocked["question"] == "Should add() saturate at 2**31-1 or raise?"
    [failure] = loop.project.failures()
    assert failure["kind"] == "blocked" and ref in failure["summary"] and "saturate" in failure["summary"]


def test_stop_still_refuses_a_story_marked_blocked_by_hand_without_the_tool(tmp_path, monkeypatch) -> None:
    loop = Iteration(tmp_path, monkeypatch)
    set_story_state(loop.project.plan_path, "US-001", "blocked")
    stop = run_hook("stop", load_payload("Stop", loop.root), loop.root, env={"CLAUDE_PROJECT_DIR": loop.root})
    assert stop.output.get("decision") == "block"
    tools = run_hook("stop", load_payload("Stop", loop.root), loop.root, env={"CLAUDE_PROJECT_DIR": loop.root, "RALPH_AGENT_TOOLS": "1"})
    assert "mcp__ralph__complete_story" in tools.output["reason"] and "mcp__ralph__report_blocked" in tools.output["reason"]


def test_request_merge_records_the_request_and_pushes_nothing(tmp_path, monkeypatch) -> None:
    loop = Iteration(tmp_path, monkeypatch)
    head = git(loop.root, "rev-parse", "HEAD")
    answer = request_merge(loop.ctx(), "US-001", "calc.add is ready for main")
    assert not answer.is_error and "Nothing was pushed or merged" in answer.text and "(1 in this run)" in answer.text
    [request] = records.merge_requests(loop.run.state_dir)
    assert {k: request[k] for k in ("run_id", "iteration", "story", "summary")} == {
        "run_id": loop.run.run_id, "iteration": 1, "story": "US-001", "summary": "calc.add is ready for main"}
    [event] = loop.project.events("merge_requested")
    assert event["summary"] == "calc.add is ready for main" and event["at"] == request["at"]
    assert git(loop.root, "rev-parse", "HEAD") == head
    status = subprocess.run([RALPH, "status", "-C", loop.root], capture_output=True, text=True, timeout=60)
    assert "merge requests (request_merge) in run" in status.stdout
    assert "US-001" in status.stdout and "calc.add is ready for main" in status.stdout


def test_story_status_says_what_the_next_prompt_would(tmp_path, monkeypatch) -> None:
    loop = Iteration(tmp_path, monkeypatch)
    complete_story(loop.ctx(), "US-001", "not yet", True)  # a failing attempt...
    loop.run.fail("US-001", "verify", "verify exited with code 1: test_calc.py::test_add")  # ...as the loop records it
    text = story_status(loop.ctx()).text
    assert text.startswith("Current story: US-001: Add numbers\nState in .ralph/plan.md: todo\nAcceptance criteria:\n- add(2, 3) is 5")
    assert "Attempt 1 of at most 5 (4 more after this one)." in text
    assert f"Verify command (complete_story runs it): `{VERIFY}` (the loop's verify command, timeout 1800s)" in text
    assert "- iteration 1 (verify): verify exited with code 1: test_calc.py::test_add" in text


def test_outside_a_run_the_tools_say_there_is_no_current_story(tmp_path, monkeypatch, repo) -> None:
    monkeypatch.delenv("RALPH_STATE_DIR", raising=False)
    monkeypatch.delenv("RALPH_CONFIG", raising=False)
    ctx = context.find(dict(os.environ, CLAUDE_PROJECT_DIR=repo), repo)
    for answer in (story_status(ctx), complete_story(ctx, "US-001", "s", True), report_blocked(ctx, "US-001", "r", "q"),
                   request_merge(ctx, "US-001", "s")):
        assert answer.text.startswith("There is no current story: no ralph-loop run is working on a story in "), answer.text
    assert complete_story(ctx, "US-001", "s", True).is_error  # and no verify command to run
    # an explicit [loop] verify_command still runs
    with open(os.path.join(repo, "ralph.toml"), "w") as f:
        f.write(f"[loop]\nverify_command = {json.dumps(VERIFY)}\n\n[sandbox]\nverify = false\n")
    with open(os.path.join(repo, "test_one.py"), "w") as f:
        f.write("def test_one():\n    assert 1 == 2\n")
    ctx = context.find(dict(os.environ, CLAUDE_PROJECT_DIR=repo), repo)
    failing = complete_story(ctx, "US-001", "s", True)
    assert failing.is_error and "Nothing was marked done" in failing.text and "test_one.py::test_one" in failing.text
    with open(os.path.join(repo, "test_one.py"), "w") as f:
        f.write("def test_one():\n    assert 1 == 1\n")
    passing = complete_story(ctx, "US-001", "s", True)
    assert not passing.is_error and "passed" in passing.text and "[loop] verify_command in ralph.toml" in passing.text


def test_the_agent_command_gets_the_server_only_for_claude_in_a_build_iteration(tmp_path, monkeypatch) -> None:
    loop = Iteration(tmp_path, monkeypatch)
    loop.it.stage.agent_command = "claude -p --dangerously-skip-permissions"
    command = agent_tools.agent_command(loop.run, loop.it, "claude -p --dangerously-skip-permissions")
    config = os.path.join(loop.run.state_dir, "protected", "mcp-config.json")
    assert command == f"claude --mcp-config={config} -p --dangerously-skip-permissions"
    assert agent_tools.with_mcp_config(["/opt/bin/claude", "-p"], "/x y/c.json") == ["/opt/bin/claude", "--mcp-config=/x y/c.json", "-p"]
    assert agent_tools.with_mcp_config("cd sub && claude -p", "/x y/c.json") == "cd sub && claude '--mcp-config=/x y/c.json' -p"
    with open(config, encoding="utf-8") as f:
        server = json.load(f)["mcpServers"]["ralph"]
    assert server["args"] == ["-P", "-m", "ralph", "mcp"] and server["alwaysLoad"] is True
    assert server["env"]["CLAUDE_PROJECT_DIR"] == loop.root and server["timeout"] == (1800 + 120) * 1000
    env = agent_tools.environment(loop.run, loop.it, {})
    assert env == {"RALPH_AGENT_TOOLS": "1", "MCP_CONNECTION_NONBLOCKING": "0", "MCP_TIMEOUT": "120000"}
    # another agent, or the key off: unchanged
    loop.it.stage.agent_command = "my-agent --go"
    assert agent_tools.agent_command(loop.run, loop.it, "my-agent --go") == "my-agent --go"
    loop.it.stage.agent_command = "claude -p"
    loop.run.settings.values["agent_tools"] = False
    assert agent_tools.agent_command(loop.run, loop.it, "claude -p") == "claude -p"
    assert agent_tools.environment(loop.run, loop.it, {}) == {}


def test_the_server_lists_its_tools_with_descriptions_and_answers_with_is_error(tmp_path, monkeypatch) -> None:
    from mcp import Client

    from ralph.mcp.server import build_server

    loop = Iteration(tmp_path, monkeypatch)

    async def talk() -> tuple[list, object, object]:
        async with Client(build_server(loop.ctx)) as client:
            listed = (await client.list_tools()).tools
            failed = await client.call_tool("complete_story", {"story_id": "US-001", "summary": "s", "tests_passed": True})
            status = await client.call_tool("story_status", {})
            return listed, failed, status

    listed, failed, status = asyncio.run(talk())
    assert [t.name for t in listed] == ["complete_story", "report_blocked", "request_merge", "story_status"]
    schema = {t.name: t.input_schema for t in listed}
    assert schema["complete_story"]["required"] == ["story_id", "summary", "tests_passed"]
    assert schema["report_blocked"]["properties"]["question"]["description"].startswith("The question a person must answer")
    assert all(t.description for t in listed)
    assert failed.is_error and "test_calc.py::test_add" in failed.content[0].text
    assert not status.is_error and "Current story: US-001" in status.content[0].text


def test_ralph_mcp_starts_over_stdio_and_says_how_to_install_the_sdk_when_missing(tmp_path) -> None:
    from ralph.mcp.launch import TOOL_NAMES, list_tools, server_command

    command, args = server_command()
    listing = list_tools(command, args, cwd=str(tmp_path))
    assert listing.ok, listing.error
    assert listing.tools == list(TOOL_NAMES)
    hide_sdk = "import sys; sys.modules['mcp.server.mcpserver'] = None; from ralph.cli import main; sys.exit(main(['mcp']))"
    done = subprocess.run([sys.executable, "-c", hide_sdk], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert "ralph mcp: the MCP SDK is not installed" in done.stderr and "pip install 'ralph-hooks[mcp]'" in done.stderr


def test_hook_calls_never_load_the_server_and_denials_name_request_merge(repo) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG", "RALPH_STATE_DIR")}
    env["RALPH_AGENT_TOOLS"] = "1"
    calls = {"pre-tool": load_payload("PreToolUse_Bash", repo) | {"tool_input": {"command": "git push origin main"}},
             "post-tool": load_payload("PostToolUse_Bash", repo), "stop": load_payload("Stop", repo),
             "prompt": load_payload("UserPromptSubmit", repo)}
    for subcommand, payload in calls.items():
        done = subprocess.run([RALPH, subcommand], input=json.dumps(payload), capture_output=True, text=True, cwd=repo,
                              env=dict(env, PYTHONPROFILEIMPORTTIME="1"), timeout=60)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
        assert imported, "no import trace"
        assert not imported & {"mcp", "mcp_types", "pydantic", "ralph.mcp.server", "ralph.mcp.context", "anyio"}, (subcommand, sorted(imported))
        if subcommand == "pre-tool":
            reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
            assert "mcp__ralph__request_merge" in reason, reason
    without = run_hook("pre-tool", calls["pre-tool"], repo)
    assert without.denied and "request_merge" not in without.reason


def stale_bytecode_off(root: str) -> None:
    """A source rewritten within the second of its bytecode and at the same
    size would be run from that bytecode (Python compares mtime seconds and
    size): drop it, as an agent's edit minutes later would make it stale."""
    shutil.rmtree(os.path.join(root, "__pycache__"), ignore_errors=True)


def test_the_tree_fingerprint_sees_a_file_rewritten_in_the_second_of_its_commit(tmp_path) -> None:
    # complete_story does not verify again a tree whose fingerprint it has
    # seen pass. The fingerprint is built on a copy of the index; with a fresh
    # mtime the copy hid git's racy-git check, and a file rewritten at the
    # same size in the second of its last `git add` kept the old fingerprint
    # (tests/test_rollback.py has the same case for the rollback's capture)
    from ralph.run.tree import fingerprint

    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    target = root / "app.py"
    target.write_text("VALUE = 1\n")
    then = os.stat(root).st_mtime_ns - 100 * 10**9
    os.utime(target, ns=(then, then))
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "add", "app.py"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "app"], check=True)
    before = fingerprint(str(root), [])
    with open(target, "r+") as f:  # in place, same size
        f.write("VALUE = 2\n")
    os.utime(target, ns=(then, then))
    os.utime(root / ".git" / "index", ns=(then, then))  # the entry is racily clean: git compares its content
    after = fingerprint(str(root), [])
    assert before and after and before != after
