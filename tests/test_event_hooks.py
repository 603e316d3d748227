"""Users' [[hooks.event]] commands on Claude Code events, through the installed
`ralph` entry point fed real captured payloads (tests/fixtures/hook_inputs)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from ralph.claude import event_command_run
from ralph.claude import event_command_select as event_hooks
from tests.conftest import RALPH, load_payload, run_hook, hook_state_dir
from tests.loop_support import gone


def write_config(repo: str, body: str) -> str:
    path = os.path.join(repo, "ralph.toml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(body))
    return path


def bash_payload(repo: str, command: str) -> dict:
    payload = load_payload("PreToolUse_Bash", repo)
    payload["tool_input"]["command"] = command
    return payload


def last_log(repo: str) -> dict:
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl"), encoding="utf-8") as f:
        return json.loads(f.readlines()[-1])


# ---------------------------------------------------------------- patterns


@pytest.mark.parametrize(
    "pattern, event, tool, expected",
    [
        ("PreToolUse", "PreToolUse", "Bash", True),  # exact event: every tool
        ("PreToolUse", "PostToolUse", "Bash", False),
        ("PreToolUse:Bash", "PreToolUse", "Bash", True),  # tool-specific
        ("PreToolUse:Bash", "PreToolUse", "Edit", False),
        ("PostToolUse:Edit", "PostToolUse", "Edit", True),
        ("pretooluse:bash", "PreToolUse", "Bash", True),  # case-insensitive
        ("PreToolUse:*", "PreToolUse", "Write", True),  # glob
        ("Post*", "PostToolUseFailure", "Bash", True),
        ("*", "Stop", "", True),
        ("*:Bash", "PostToolUseFailure", "Bash", True),
        ("*:Bash", "PostToolUse", "Edit", False),
        ("PreToolUse:mcp__*", "PreToolUse", "mcp__github__create_issue", True),
        ("Stop,UserPromptSubmit", "UserPromptSubmit", "", True),  # comma list
        ("PreToolUse:Edit, PreToolUse:Write", "PreToolUse", "Write", True),
        ("PreToolUse:Edit, PreToolUse:Write", "PreToolUse", "Bash", False),
        ("tool:pre_execute", "PreToolUse", "Bash", True),  # aliases
        ("tool:pre_execute:bash", "PreToolUse", "Bash", True),
        ("tool:pre_execute:bash", "PreToolUse", "Edit", False),
        ("tool:post_execute:write", "PostToolUse", "Write", True),
        ("tool:error", "PostToolUseFailure", "Bash", True),
        ("tool:error", "PostToolUse", "Bash", False),
        ("tool:*", "PostToolUse", "Read", True),
        ("tool:*", "UserPromptSubmit", "", False),
        ("tool:*:write", "PreToolUse", "Write", True),
        ("session:start", "SessionStart", "", True),
        ("session:end", "SessionEnd", "", True),
        ("session:*", "SessionEnd", "", True),
        ("user:prompt_submit", "UserPromptSubmit", "", True),
        ("session:start,tool:error", "PostToolUseFailure", "Bash", True),
    ],
)
def test_pattern_forms(pattern: str, event: str, tool: str, expected: bool) -> None:
    hook_patterns = event_hooks.split_patterns(pattern)
    assert event_hooks.matches(hook_patterns, event, tool) is expected
    assert event_hooks.pattern_problem(hook_patterns[0]) is None


@pytest.mark.parametrize(
    "pattern, says",
    [
        ("PreTooUse", "matches no Claude Code event"),
        ("tool:pre_exec", "matches no Claude Code event"),
        ("Stop:Bash", "Stop has no tool name"),
        ("session:start:bash", "SessionStart has no tool name"),
        ("Foo*", "matches no Claude Code event"),
    ],
)
def test_patterns_that_match_nothing_are_config_errors(pattern: str, says: str) -> None:
    assert says in event_hooks.pattern_problem(pattern)


# ---------------------------------------------------------------- config


def test_config_errors_name_file_line_table_and_key(tmp_path) -> None:
    text = textwrap.dedent(
        """\
        [loop]
        max_iterations = 3

        [[hooks.event]]
        match = "PreToolUse:Bash"
        command = "true"
        timout = 5

        [[hooks.event]]
        match = "PreToolUs"
        command = ""

        [[hooks.event]]
        command = "true"
        timeout = "soon"
        """
    )
    import tomllib

    path = str(tmp_path / "ralph.toml")
    hooks, errors = event_hooks.parse_event_hooks(tomllib.loads(text), path, text)
    assert hooks == []
    assert errors == [
        f"{path}:7: [[hooks.event]] #1: unknown key 'timout'; known keys: match, command, working_dir, timeout, env, enabled, description, pipe_output",
        f"{path}:10: [[hooks.event]] #2 match: " + event_hooks.pattern_problem("PreToolUs"),
        f"{path}:11: [[hooks.event]] #2 command: must be a non-empty string (run by /bin/sh) or a list of strings (run as is), got ''",
        f"{path}:13: [[hooks.event]] #3: match is required; add match = ...",
        f"{path}:15: [[hooks.event]] #3 timeout: must be a number, got 'soon'",
    ]


def test_defaults_apply_to_a_minimal_table(tmp_path) -> None:
    hooks, errors = event_hooks.parse_event_hooks({"hooks": {"event": [{"match": "Stop", "command": ["true"]}]}}, "ralph.toml")
    assert errors == []
    (hook,) = hooks
    assert (hook.timeout, hook.env, hook.enabled, hook.description, hook.pipe_output, hook.working_dir) == (10.0, {}, True, "", False, None)


def test_an_invalid_event_hook_is_skipped_with_a_warning_and_the_valid_ones_run(repo: str, tmp_path) -> None:
    """The specs' rule: an invalid hook config is warned about and skipped;
    it never takes the valid hooks (or every tool call) down."""
    seen = tmp_path / "seen"
    write_config(repo, f"""\
        [[hooks.event]]
        match = "tool:pre_exekute"
        command = "true"

        [[hooks.event]]
        match = "PreToolUse:Bash"
        command = "true"
        timeout = -1

        [[hooks.event]]
        match = "PreToolUse:Bash"
        command = "echo ran >> {seen}; case \\"$RALPH_TOOL_ARGS\\" in *make*) echo 'no make here' >&2; exit 1;; esac"
        description = "no make"
        """)
    result = run_hook("pre-tool", bash_payload(repo, "make"), repo)
    assert result.denied and 'Blocked by your hook "no make" (ralph.toml:10), exit 1: no make here' in result.reason
    assert seen.read_text() == "ran\n" and "ralph.toml:2" in result.output["systemMessage"]
    allowed = run_hook("pre-tool", bash_payload(repo, "ls"), repo)
    with_hook = dict(allowed.output)
    assert seen.read_text() == "ran\nran\n"
    warning = with_hook["systemMessage"]
    assert "skipped invalid [[hooks.event]] table(s), the others run" in warning
    assert "ralph.toml:2: [[hooks.event]] #1 match: pattern 'tool:pre_exekute' matches no Claude Code event" in warning
    assert "ralph.toml:8: [[hooks.event]] #2 timeout: must be >= 0.1" in warning
    post = run_hook("post-tool", load_payload("PostToolUse_Read", repo), repo)
    assert "ralph.toml:2" in post.output["systemMessage"]
    assert "skipped invalid tables" in json.dumps(last_log(repo))


def test_invalid_toml_with_event_hooks_denies_with_file_and_line(repo: str) -> None:
    write_config(repo, '[[hooks.event]]\nmatch = "PreToolUse:Bash"\ncommand = "true\n')
    result = run_hook("pre-tool", bash_payload(repo, "ls"), repo)
    assert result.denied
    assert "ralph.toml:3: invalid TOML" in result.reason


# ---------------------------------------------------------------- hot path cost


def imported_modules(repo: str, subcommand: str, payload: dict) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG")}
    proc = subprocess.run([sys.executable, "-X", "importtime", RALPH, subcommand], input=json.dumps(payload).encode(),
                          capture_output=True, cwd=repo, env=env, timeout=60)
    assert proc.returncode == 0
    json.loads(proc.stdout)
    return proc.stderr.decode()


def test_without_event_hooks_nothing_is_imported_or_parsed(repo: str) -> None:
    read = load_payload("PostToolUse_Read", repo)
    assert "ralph.claude.event_command_select" not in imported_modules(repo, "post-tool", read)
    write_config(repo, "[loop]\nmax_iterations = 3\n")
    trace = imported_modules(repo, "post-tool", read)
    assert "ralph.claude.event_command_select" not in trace and "tomllib" not in trace  # post-tool never parsed ralph.toml
    write_config(repo, '[[hooks.event]]\nmatch = "Stop"\ncommand = "true"\n')
    assert "ralph.claude.event_command_select" in imported_modules(repo, "post-tool", read)


# ---------------------------------------------------------------- PreToolUse


def test_non_zero_exit_denies_with_the_hooks_output_as_reason(repo: str) -> None:
    write_config(repo, """\
        [[hooks.event]]
        match = "PreToolUse:Bash"
        description = "no rm -rf"
        command = '''case "$RALPH_TOOL_ARGS" in *"rm -rf"*) echo "rm -rf is not allowed; delete files one by one" >&2; exit 1;; esac'''
        """)
    result = run_hook("pre-tool", bash_payload(repo, "rm -rf build"), repo)
    assert result.denied
    assert result.reason == 'Blocked by your hook "no rm -rf" (ralph.toml:1), exit 1: rm -rf is not allowed; delete files one by one'
    assert last_log(repo)["event_hooks"] == [{"hook": 1, "match": "PreToolUse:Bash", "result": "failed", "exit": 1,
                                              "ms": last_log(repo)["event_hooks"][0]["ms"], "bytes": 47, "decision": "deny"}]
    assert run_hook("pre-tool", bash_payload(repo, "ls build"), repo).output == {}


def test_json_deny_on_stdout_denies_and_plain_stdout_allows(repo: str) -> None:
    write_config(repo, """\
        [[hooks.event]]
        match = "tool:pre_execute:bash"
        command = '''if grep -q curl; then echo '{"decision": "deny", "reason": "no network from here"}'; else echo looks fine; fi'''
        """)
    denied = run_hook("pre-tool", bash_payload(repo, "curl https://example.com"), repo)
    assert denied.denied and denied.reason.endswith(": no network from here")
    assert run_hook("pre-tool", bash_payload(repo, "make"), repo).output == {}


def test_first_block_stops_the_chain(repo: str, tmp_path) -> None:
    marks = tmp_path / "marks"
    write_config(repo, f"""\
        [[hooks.event]]
        match = "PreToolUse"
        command = "echo first >> {marks}"

        [[hooks.event]]
        match = "PreToolUse:Bash"
        command = "echo second >> {marks}; echo second says no; exit 3"

        [[hooks.event]]
        match = "*"
        command = "echo third >> {marks}"
        """)
    result = run_hook("pre-tool", bash_payload(repo, "make"), repo)
    assert result.denied and "exit 3: second says no" in result.reason
    assert marks.read_text().split() == ["first", "second"]


def test_a_ralph_deny_comes_first_and_no_user_hook_runs(repo: str, tmp_path) -> None:
    marks = tmp_path / "marks"
    write_config(repo, f"""\
        [[hooks.event]]
        match = "PreToolUse"
        command = '''echo ran >> {marks}; echo '{{"decision": "approve"}}' '''
        """)
    result = run_hook("pre-tool", bash_payload(repo, "git push origin main"), repo)
    assert result.denied and "push" in result.reason.lower()
    assert not marks.exists()


def test_a_hook_that_allows_never_turns_a_ralph_deny_into_allow(repo: str) -> None:
    # read-before-edit denies an edit of an unread file; an approving hook changes nothing
    write_config(repo, """\
        [[hooks.event]]
        match = "PreToolUse:Edit"
        command = '''echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}' '''
        """)
    result = run_hook("pre-tool", load_payload("PreToolUse_Edit", repo), repo)
    assert result.denied and "read" in result.reason.lower()


def test_context_in_the_environment_and_the_event_on_stdin(repo: str, tmp_path) -> None:
    seen = tmp_path / "seen.json"
    write_config(repo, f"""\
        [[hooks.event]]
        match = "PreToolUse:Bash"
        working_dir = "sub"
        env = {{ GREETING = "hi there", VERBOSE = true }}
        command = ["{sys.executable}", "-c", "import json, os, sys; json.dump({{'env': dict(os.environ), 'stdin': sys.stdin.read(), 'cwd': os.getcwd()}}, open('{seen}', 'w'))"]
        """)
    os.makedirs(os.path.join(repo, "sub"))
    payload = bash_payload(repo, "echo 'quoted $(whoami)'")
    assert run_hook("pre-tool", payload, repo).output == {}
    record = json.loads(seen.read_text())
    env = record["env"]
    assert json.loads(record["stdin"]) == payload
    assert record["cwd"] == os.path.join(repo, "sub")
    assert env["RALPH_EVENT"] == "PreToolUse" and env["RALPH_EVENT_ALIAS"] == "tool:pre_execute"
    assert env["RALPH_SESSION_ID"] == payload["session_id"]
    assert env["RALPH_WORKING_DIR"] == payload["cwd"] and env["RALPH_PROJECT_DIR"] == repo
    assert env["RALPH_TOOL_NAME"] == "Bash"
    assert json.loads(env["RALPH_TOOL_ARGS"]) == payload["tool_input"]
    assert "RALPH_TOOL_RESULT" not in env and "RALPH_TRUNCATED" not in env
    assert env["GREETING"] == "hi there" and env["VERBOSE"] == "true"
    assert env[event_hooks.DEPTH_VAR] == "1"


def test_post_events_get_the_bounded_tool_result(repo: str, tmp_path) -> None:
    seen = tmp_path / "seen.json"
    write_config(repo, f"""\
        [[hooks.event]]
        match = "tool:post_execute, tool:error"
        command = ["{sys.executable}", "-c", "import json, os; json.dump(dict(os.environ), open('{seen}', 'w'))"]
        """)
    post = load_payload("PostToolUse_Bash", repo)
    post["tool_response"]["stdout"] = "x" * 500_000  # bigger than an env value may be
    assert json.loads(run_hook("post-tool", post, repo).stdout) == {}
    env = json.loads(seen.read_text())
    result = json.loads(env["RALPH_TOOL_RESULT"])  # still valid JSON once cut
    assert result["stdout"].startswith("xxxx") and "chars cut" in result["stdout"]
    assert env["RALPH_TRUNCATED"] == "RALPH_TOOL_RESULT"
    failure = load_payload("PostToolUseFailure_Bash_exit3", repo)
    run_hook("post-tool-failure", failure, repo)
    env = json.loads(seen.read_text())
    assert env["RALPH_EVENT"] == "PostToolUseFailure"
    assert json.loads(env["RALPH_TOOL_RESULT"]) == {"error": failure["error"]}


def test_a_huge_write_still_reaches_the_hook(repo: str, tmp_path) -> None:
    seen = tmp_path / "seen"
    write_config(repo, f"""\
        [[hooks.event]]
        match = "PreToolUse:Write"
        command = 'printf "%s" "$RALPH_TRUNCATED" > {seen}; wc -c > {seen}.stdin'
        """)
    payload = load_payload("PreToolUse_Write", repo)
    payload["tool_input"]["content"] = "é" * 2_000_000
    run_hook("pre-tool", payload, repo)
    assert seen.read_text() == "RALPH_TOOL_ARGS"
    assert int((tmp_path / "seen.stdin").read_text()) == len(json.dumps(payload).encode())


def test_a_hook_that_hangs_is_killed_with_its_children_and_denies(repo: str, tmp_path) -> None:
    pids = tmp_path / "pids"
    write_config(repo, f"""\
        [[hooks.event]]
        match = "PreToolUse:Bash"
        timeout = 0.5
        description = "slow check"
        command = "sleep 300 & echo $! > {pids}; sleep 300"
        """)
    result = run_hook("pre-tool", bash_payload(repo, "make"), repo)
    assert result.denied
    assert 'your hook "slow check" (ralph.toml:1) gave no answer within' in result.reason
    assert last_log(repo)["event_hooks"][0]["result"] == "timeout"
    assert gone(int(pids.read_text()))


def test_a_hook_that_exits_but_leaves_a_child_holding_its_output_does_not_stall(repo: str, tmp_path) -> None:
    pids = tmp_path / "pids"
    write_config(repo, f"""\
        [[hooks.event]]
        match = "PostToolUse"
        timeout = 60
        command = "sleep 300 & echo $! > {pids}; echo done"
        pipe_output = true
        """)
    result = run_hook("post-tool", load_payload("PostToolUse_Read", repo), repo)
    assert result.context.endswith("done")
    assert last_log(repo)["event_hooks"][0]["result"] == "success"  # not a timeout
    assert gone(int(pids.read_text()))


def test_a_flooding_hook_is_bounded_and_the_answer_is_one_json_object(repo: str) -> None:
    write_config(repo, """\
        [[hooks.event]]
        match = "PostToolUse"
        pipe_output = true
        command = "head -c 100000000 /dev/zero | tr '\\\\0' a; echo; head -c 30000000 /dev/zero >&2"
        """)
    result = run_hook("post-tool", load_payload("PostToolUse_Read", repo), repo)
    context = result.context
    assert len(context) <= 9000 and context.startswith('[output of your hook "')
    entry = last_log(repo)["event_hooks"][0]
    assert entry["result"] == "success" and entry["bytes"] == 130_000_001


def test_a_hook_that_floods_stdin_reads_and_never_exits_is_stopped(repo: str) -> None:
    write_config(repo, """\
        [[hooks.event]]
        match = "PreToolUse:Bash"
        timeout = 1
        command = "yes"
        """)
    result = run_hook("pre-tool", bash_payload(repo, "make"), repo)
    assert result.denied and "gave no answer within" in result.reason


def test_a_missing_working_dir_denies_with_the_reason(repo: str) -> None:
    write_config(repo, """\
        [[hooks.event]]
        match = "PreToolUse"
        working_dir = "does/not/exist"
        command = "true"
        """)
    result = run_hook("pre-tool", bash_payload(repo, "make"), repo)
    assert result.denied and "could not start" in result.reason


def test_post_event_failures_are_logged_not_blocking(repo: str) -> None:
    write_config(repo, """\
        [[hooks.event]]
        match = "PostToolUse"
        command = "echo broken >&2; exit 9"
        """)
    result = run_hook("post-tool", load_payload("PostToolUse_Read", repo), repo)
    assert result.output == {}
    entry = last_log(repo)
    assert entry["event_hooks"][0]["result"] == "failed"
    assert any("failed (exit 9)" in note for note in entry["notes"])


def test_pipe_output_goes_to_additional_context_after_ralphs_own(repo: str) -> None:
    write_config(repo, """\
        [[hooks.event]]
        match = "PostToolUseFailure:Bash"
        description = "lint"
        command = "echo 'lint: 2 warnings'"
        pipe_output = true

        [[hooks.event]]
        match = "PostToolUseFailure"
        command = "echo not piped"
        """)
    failure = load_payload("PostToolUseFailure_Bash_exit3", repo)
    result = run_hook("post-tool-failure", failure, repo)
    context = result.context
    assert context.endswith('[output of your hook "lint"]\nlint: 2 warnings')
    assert "not piped" not in context


def test_pipe_output_is_never_sent_on_stop(repo: str, tmp_path) -> None:
    marks = tmp_path / "marks"
    write_config(repo, f"""\
        [[hooks.event]]
        match = "Stop"
        command = "echo ran > {marks}; echo keep going"
        pipe_output = true
        """)
    result = run_hook("stop", load_payload("Stop", repo), repo)
    assert result.output == {} and marks.read_text() == "ran\n"


def test_session_start_alias_runs_through_the_generic_subcommand(repo: str, tmp_path) -> None:
    write_config(repo, """\
        [[hooks.event]]
        match = "session:start"
        command = "echo 'branch: main'"
        pipe_output = true
        """)
    result = run_hook("hook", load_payload("SessionStart", repo), repo)
    assert result.output == {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                    "additionalContext": '[output of your hook "echo \'branch: main\'"]\nbranch: main'}}


def test_disabled_hooks_do_not_run(repo: str, tmp_path) -> None:
    write_config(repo, """\
        [[hooks.event]]
        match = "PreToolUse"
        command = "exit 1"
        enabled = false
        """)
    assert run_hook("pre-tool", bash_payload(repo, "make"), repo).output == {}
    write_config(repo, '[[hooks.event]]\nmatch = "PreToolUse"\ncommand = "exit 1"\n')
    assert run_hook("pre-tool", bash_payload(repo, "make"), repo).denied
    assert run_hook("pre-tool", bash_payload(repo, "make"), repo, env={"RALPH_HOOKS_ENABLED": "false"}).output == {}


def test_a_circular_trigger_is_stopped_by_the_depth_counter(repo: str, tmp_path) -> None:
    depths = tmp_path / "depths"
    # the hook fires ralph's PreToolUse hook again, as a nested `claude -p` would
    write_config(repo, f"""\
        [[hooks.event]]
        match = "PreToolUse:Bash"
        timeout = 12
        command = 'echo "$RALPH_EVENT_HOOK_DEPTH" >> {depths}; {RALPH} pre-tool > /dev/null'
        """)
    result = run_hook("pre-tool", bash_payload(repo, "make"), repo)
    assert result.output == {}
    assert depths.read_text().split() == [str(d) for d in range(1, event_hooks.MAX_DEPTH + 1)]
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl"), encoding="utf-8") as f:
        entries = [json.loads(line) for line in f]
    stopped = [e for e in entries if e.get("event_hooks_error") == "circular_trigger"]
    assert len(stopped) == 1 and any("circular trigger stopped" in n for n in stopped[0]["notes"])


def test_the_budget_bounds_a_chain_of_slow_hooks(repo: str) -> None:
    body = "".join('[[hooks.event]]\nmatch = "UserPromptSubmit"\ntimeout = 5\ncommand = "sleep 30"\n\n' for _ in range(3))
    write_config(repo, body)
    run_hook("prompt", load_payload("UserPromptSubmit", repo), repo)
    records = last_log(repo)["event_hooks"]
    # 7 s budget: the first hook gets its 5 s, the second what is left, the third nothing
    assert [r["result"] for r in records] == ["timeout", "timeout", "skipped: budget spent"]
    assert records[1]["timeout_cut_to"] < 5


# ---------------------------------------------------------------- run_command


def test_run_command_reports_a_command_that_cannot_start(tmp_path) -> None:
    result = event_command_run.run_command(["/nonexistent/tool"], str(tmp_path), {}, b"", 5)
    assert result.status() == "error" and "could not start" in result.error


def test_run_command_feeds_stdin_to_a_hook_that_reads_it_all(tmp_path) -> None:
    data = b"line\n" * 400_000
    result = event_command_run.run_command("wc -c", str(tmp_path), dict(os.environ), data, 30)
    assert result.ok and int(result.stdout) == len(data)


def test_run_command_survives_a_hook_that_ignores_its_stdin(tmp_path) -> None:
    result = event_command_run.run_command("exec 0<&-; echo ok", str(tmp_path), dict(os.environ), b"x" * 5_000_000, 30)
    assert result.ok and result.stdout == b"ok\n"


def test_ralph_loop_dry_run_reports_event_hook_errors_with_the_others(repo: str) -> None:
    from tests.loop_support import RALPH_LOOP

    os.makedirs(os.path.join(repo, ".ralph"), exist_ok=True)
    with open(os.path.join(repo, ".ralph", "plan.md"), "w") as f:
        f.write("- [ ] US-001: x\n")
    write_config(repo, """\
        [[hooks.post_iteration]]
        command = "true"
        timeout = "long"

        [[hooks.event]]
        match = "tool:pre_exec"
        command = "true"
        """)
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG")}
    proc = subprocess.run([RALPH_LOOP, "--dry-run"], cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "ralph.toml:3: [hooks.post_iteration] timeout" in proc.stderr
    assert "ralph.toml:6: [[hooks.event]] #1 match: pattern 'tool:pre_exec' matches no Claude Code event" in proc.stderr


def test_hook_output_reaches_the_model_as_is_but_the_log_redacted(repo: str) -> None:
    write_config(repo, """\
        [[hooks.event]]
        match = "PreToolUse:Bash"
        command = "echo 'refused: token=ghp_abcdefghijklmnopqrstuvwxyz0123456789'; exit 1"
        """)
    result = run_hook("pre-tool", bash_payload(repo, "make"), repo)
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" in result.reason
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl"), encoding="utf-8") as f:
        logged = f.read()
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in logged and "REDACTED" in logged


def test_a_config_that_cannot_be_read_denies_and_a_missing_one_is_no_config(repo: str, tmp_path) -> None:
    unreadable = tmp_path / "config-dir"
    unreadable.mkdir()  # open() fails on a directory, even for root
    result = run_hook("pre-tool", bash_payload(repo, "make"), repo, env={"RALPH_CONFIG": str(unreadable)})
    assert result.denied and f"{unreadable}: cannot read" in result.reason
    missing = run_hook("pre-tool", bash_payload(repo, "make"), repo, env={"RALPH_CONFIG": str(tmp_path / "none.toml")})
    assert not missing.denied
