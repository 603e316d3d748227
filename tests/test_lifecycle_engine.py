"""The lifecycle engine on its own: context, the hooks-directory exit-code
contract, enable flags, on_failure, await, timeouts and floods, template
injection, pipe_output and traces. No wall-clock assertions: hangs are
proved killed by the process being gone, non-blocking by ordering."""
from __future__ import annotations

import json
import os
import shlex
import sys

import pytest

from ralph.loop.lifecycle import pending, pipe_output
from tests.lifecycle_support import CONTEXT, HookProject
from tests.loop_support import gone, pid_alive


def fire(engine: object, point: str, **extra: object) -> object:
    return engine.fire(point, {**CONTEXT, **extra})  # type: ignore[attr-defined]


def test_context_reaches_env_and_stdin(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.post_iteration]]\ncommand = "@RECORD@"\n')
    fired = fire(p.engine(monkeypatch), "post_iteration", last_result="verify_failed", changed_files=["a.py", "b c.py"])
    assert fired.ran == 1 and fired.results[0][1].ok
    [seen] = p.records()
    env, stdin = seen["env"], seen["stdin"]
    assert env["RALPH_HOOK_POINT"] == "post_iteration" and env["RALPH_ITERATION"] == "3"
    assert env["RALPH_STORY_TITLE"] == "Add greeting" and env["RALPH_LAST_RESULT"] == "verify_failed"
    assert env["RALPH_CHANGED_FILES"] == "a.py\nb c.py" and env["RALPH_LAST_HOOK_STATUS"] == ""
    assert env["RALPH_ERROR"] == "" and env["RALPH_TIMESTAMP"].endswith("Z")
    assert stdin["iteration"] == 3 and stdin["hook_point"] == "post_iteration" and stdin["changed_files"] == ["a.py", "b c.py"]
    assert seen["cwd"] == p.root


@pytest.mark.parametrize("point,code,abort,skip,message", [
    ("pre_iteration", 0, False, False, None),
    ("pre_iteration", 1, False, True, "this iteration is skipped"),
    ("session_start", 1, False, False, "exited 1 (warning)"),
    ("pre_iteration", 2, True, False, None),
    ("session_start", 2, True, False, None),
    ("pre_iteration", 124, False, False, "timed out"),
    ("pre_iteration", 7, False, False, "exit 7; the loop continues"),
])
def test_hooks_dir_exit_code_contract(tmp_path, monkeypatch, point, code, abort, skip, message) -> None:
    p = HookProject(tmp_path)
    name = {"pre_iteration": "next_iteration", "session_start": "started"}[point]
    p.dir_hook(name, f"echo checking; echo 'last words'\nexit {code}")
    engine = p.engine(monkeypatch)
    fired = fire(engine, point)
    assert fired.ran == 1 and fired.results[0][1].exit == code
    assert bool(fired.abort) is abort and fired.skip is skip
    if abort:
        assert fired.abort == f"{name} exited 2: last words"
    if message:
        assert any(message in m for m in engine.messages)


def test_hooks_dir_timeout_kills_and_continues(tmp_path, monkeypatch) -> None:
    # generous timeouts: the hook must have written its child's pid before it is killed
    p = HookProject(tmp_path, "[hooks]\ndir_timeout = 2\n")
    pid_file = os.path.join(p.tmp, "child.pid")
    p.dir_hook("started", f"sleep 300 &\necho $! > {pid_file}\nwait")
    fired = fire(p.engine(monkeypatch), "session_start")
    result = fired.results[0][1]
    assert result.status == "timeout" and result.exit == 124 and not fired.abort
    assert gone(int(open(pid_file).read()))  # the whole process group is gone


def test_non_executable_hook_is_warned_once_and_not_run(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path)
    p.dir_hook("next_iteration", f"touch {p.tmp}/ran", executable=False)
    engine = p.engine(monkeypatch)
    fire(engine, "pre_iteration")
    fire(engine, "pre_iteration")
    warnings = [m for m in engine.messages if "not executable" in m]
    assert len(warnings) == 1 and "chmod +x" in warnings[0]
    assert not os.path.exists(os.path.join(p.tmp, "ran"))


def test_unknown_file_in_hooks_dir_is_warned(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path)
    p.dir_hook("next_iteraton", "exit 0")
    p.dir_hook("custom/helper", "exit 0")
    hooks = p.hooks(monkeypatch)
    assert len(hooks.warnings) == 1 and "next_iteraton: not a hook name" in hooks.warnings[0]


@pytest.mark.parametrize("flags,expected", [
    ({}, ["started", "lint"]),
    ({"RALPH_HOOKS_ENABLED": "false"}, []),
    ({"RALPH_HOOKS_ENABLED": "0"}, []),
    ({"RALPH_HOOKS_ENABLED": "true"}, ["started", "lint"]),
    ({"RALPH_HOOK_STARTED_ENABLED": "false"}, ["lint"]),
    ({"RALPH_HOOK_LINT_ENABLED": "off"}, ["started"]),
])
def test_enable_flags(tmp_path, monkeypatch, flags, expected) -> None:
    p = HookProject(tmp_path, '[[hooks.session_start]]\nname = "lint"\ncommand = "@RECORD@ lint"\n')
    p.dir_hook("started", f"{p.record_command} started")
    fired = fire(p.engine(monkeypatch, **flags), "session_start")
    assert [r["argv"][0] for r in p.records()] == expected
    assert fired.ran == len(expected)


def test_enabled_false_in_config(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.session_start]]\ncommand = "@RECORD@"\nenabled = false\n')
    hooks = p.hooks(monkeypatch)
    [spec] = hooks.by_point["session_start"]
    assert spec.disabled.startswith("enabled = false (") and spec.disabled.endswith("ralph.toml:3)")
    assert fire(p.engine(monkeypatch), "session_start").ran == 0 and p.records() == []


def test_on_failure_continue_runs_the_next_action_which_sees_the_status(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.post_iteration]]\ncommand = "exit 3"\n\n[[hooks.post_iteration]]\ncommand = "@RECORD@"\n')
    fired = fire(p.engine(monkeypatch), "post_iteration")
    assert [r.status for _, r in fired.results] == ["failed", "success"] and not fired.abort
    assert p.records()[0]["env"]["RALPH_LAST_HOOK_STATUS"] == "failed"


def test_on_failure_abort_stops_the_point(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.pre_iteration]]\nname = "gate"\ncommand = "exit 3"\non_failure = "abort"\n\n'
                              '[[hooks.pre_iteration]]\ncommand = "@RECORD@"\n')
    fired = fire(p.engine(monkeypatch), "pre_iteration")
    assert fired.abort == "pre_iteration hook 'gate' failed: exit 3"
    assert fired.ran == 1 and p.records() == []


def test_session_end_runs_every_action_even_after_an_abort(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.session_end]]\ncommand = "exit 3"\non_failure = "abort"\n\n'
                              '[[hooks.session_end]]\ncommand = "@RECORD@"\n')
    fired = fire(p.engine(monkeypatch), "session_end", finish_type="complete")
    assert fired.ran == 2 and len(p.records()) == 1


def test_on_failure_retry_counts_and_delays(tmp_path, monkeypatch) -> None:
    counter = os.path.join(str(tmp_path), "attempts")
    p = HookProject(tmp_path, f'[[hooks.post_iteration]]\ncommand = "echo x >> {counter}; exit 1"\n'
                              'on_failure = "retry"\nretries = 2\nretry_delay = 0.25\n')
    sleeps: list[float] = []
    engine = p.engine(monkeypatch, sleeps=sleeps)
    fired = fire(engine, "post_iteration")
    result = fired.results[0][1]
    assert open(counter).read().count("x") == 3 and result.attempts == 3
    assert sleeps == [0.25, 0.25] and result.status == "failed" and not fired.abort
    assert p.traces()[-1]["attempts"] == 3
    # each message names the command, and with it the temp path (which may hold the test's name, "retry")
    assert [m.rsplit(": ", 1)[-1] for m in engine.messages] == [
        "exit 1; retry 1/2 in 0.25s", "exit 1; retry 2/2 in 0.25s", "exit 1 (after 3 attempts)"]


def test_retry_stops_at_the_first_success(tmp_path, monkeypatch) -> None:
    counter = os.path.join(str(tmp_path), "attempts")
    p = HookProject(tmp_path, f'[[hooks.post_iteration]]\ncommand = "echo x >> {counter}; [ $(wc -l < {counter}) -ge 2 ]"\n'
                              'on_failure = "retry"\nretry_delay = 0\n')
    sleeps: list[float] = []
    fired = fire(p.engine(monkeypatch, sleeps=sleeps), "post_iteration")
    assert fired.results[0][1].ok and fired.results[0][1].attempts == 2 and sleeps == [0]


def test_retry_delay_default_is_five_seconds(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.post_iteration]]\ncommand = "exit 1"\non_failure = "retry"\nretries = 1\n')
    sleeps: list[float] = []
    fire(p.engine(monkeypatch, sleeps=sleeps), "post_iteration")
    assert sleeps == [5.0]


def test_fire_and_forget_does_not_block_and_is_reaped(tmp_path, monkeypatch) -> None:
    release = os.path.join(str(tmp_path), "release")
    done = os.path.join(str(tmp_path), "bg-done")
    # the background hook cannot finish before the test releases it: fire()
    # returning at all proves it did not wait
    p = HookProject(tmp_path, f'[[hooks.post_iteration]]\ncommand = "while [ ! -f {release} ]; do sleep 0.05; done; echo finished; touch {done}"\n'
                              'await = false\ntimeout = 120\npipe_output = true\n\n'
                              '[[hooks.post_iteration]]\ncommand = "@RECORD@"\n')
    engine = p.engine(monkeypatch)
    fired = fire(engine, "post_iteration")
    assert [r.status for _, r in fired.results] == ["success", "success"]
    assert "started in the background" in fired.results[0][1].message
    assert not os.path.exists(done) and len(p.records()) == 1  # the next action ran while it waits
    open(release, "w").close()
    engine.close()  # gives it a moment, reaps it
    assert os.path.exists(done)
    background = [t for t in p.traces() if t.get("background")]
    assert len(background) == 1 and background[0]["status"] == "success" and background[0]["exit"] == 0
    assert [e["text"] for e in pending.read(p.state_dir)] == ["finished"]


def test_fire_and_forget_still_running_is_killed_at_session_end(tmp_path, monkeypatch) -> None:
    pid_file = os.path.join(str(tmp_path), "bg.pid")
    p = HookProject(tmp_path, f'[[hooks.session_start]]\ncommand = "sleep 300 & echo $! > {pid_file}; wait"\nawait = false\ntimeout = 600\n')
    engine = p.engine(monkeypatch)
    fire(engine, "session_start")
    for _ in range(400):  # the job writes its pid (hang guard only)
        if os.path.exists(pid_file) and open(pid_file).read().strip():
            break
        import time

        time.sleep(0.05)
    pid = int(open(pid_file).read())
    assert pid_alive(pid)
    engine.close()
    assert gone(pid)
    [trace] = [t for t in p.traces() if t.get("background")]
    assert trace["status"] == "failed" and "killed" in trace["message"]


def test_hang_is_killed_with_its_children_and_reported(tmp_path, monkeypatch) -> None:
    pid_file = os.path.join(str(tmp_path), "child.pid")
    p = HookProject(tmp_path, f'[[hooks.post_iteration]]\nname = "hang"\ncommand = "sleep 300 & echo $! > {pid_file}; trap \'\' TERM; sleep 300"\n'
                              'timeout = 2\n')  # generous: the child's pid is written before the kill
    engine = p.engine(monkeypatch)
    fired = fire(engine, "post_iteration")
    result = fired.results[0][1]
    assert result.status == "timeout" and result.exit == 124 and "timed out after 2s" in result.message
    assert gone(int(open(pid_file).read()))
    assert any("hang: timed out" in m for m in engine.messages)
    assert p.traces()[-1]["status"] == "timeout"


def test_flood_of_100_mb_is_bounded_and_counted(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.post_iteration]]\ncommand = "echo START; head -c 100000000 /dev/zero | tr \'\\\\0\' x; echo; echo END"\n'
                              'timeout = 600\npipe_output = true\n')
    fired = fire(p.engine(monkeypatch), "post_iteration")
    result = fired.results[0][1]
    assert result.ok and result.output_bytes == 100_000_000 + len("START\n") + len("\nEND\n")
    assert len(result.output) < 100_000 and result.output.startswith("START") and result.output.endswith("END")
    assert "bytes of output cut" in result.output
    [entry] = pending.read(p.state_dir)
    assert len(entry["text"]) <= pipe_output.MAX_ENTRY_CHARS + 100


def test_endless_flood_is_killed_at_the_timeout(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.post_iteration]]\ncommand = "yes flood"\ntimeout = 0.5\n')
    result = fire(p.engine(monkeypatch), "post_iteration").results[0][1]
    assert result.status == "timeout" and result.output_bytes > 0 and len(result.output) < 100_000


def test_a_hook_reading_stdin_gets_the_context_then_eof(tmp_path, monkeypatch) -> None:
    out = os.path.join(str(tmp_path), "stdin.json")
    p = HookProject(tmp_path, f'[[hooks.pre_iteration]]\ncommand = "cat > {out}; while read line; do :; done; cat"\ntimeout = 120\n')
    result = fire(p.engine(monkeypatch), "pre_iteration").results[0][1]
    assert result.ok
    assert json.load(open(out))["story_id"] == "US-001"


INJECTIONS = [
    "$(touch {canary})",
    "`touch {canary}`",
    "'; touch {canary}; '",
    "\"; touch {canary}; \"",
    "\\\"$(touch {canary})\\\"",
    "$(touch${{IFS}}{canary})",
    "x\n touch {canary}",
    "'\"'\"'; touch {canary} #",
    "${{IFS}}; touch {canary} &",
    "a && touch {canary} || b",
    "*; touch {canary}",
    "$((1+1)) > {canary}",
    "{{{{story_title}}}} | touch {canary}",
]
FORMS = [
    "printf '%s' {{{{task_content}}}}",
    "printf '%s' \"{{{{task_content}}}}\"",
    "printf '%s' '{{{{task_content}}}}'",
    "printf '%s' ${{STORY_TITLE}}",
    "printf '%s' \"pre ${{STORY_TITLE}} post\"",
    "printf '%s' x{{{{error}}}}y",
]


@pytest.mark.parametrize("index", range(len(FORMS)))
def test_injection_corpus_executes_nothing(tmp_path, monkeypatch, index) -> None:
    """Story titles, errors and file names full of shell syntax, substituted
    in every quoting context: each prints back exactly and runs nothing."""
    canary = os.path.join(str(tmp_path), "CANARY")
    texts = [t.format(canary=canary) for t in INJECTIONS]
    config = f'[[hooks.on_error]]\ncommand = {json.dumps(FORMS[index].format())}\n\n'
    config += '[[hooks.on_error]]\ncommand = ["printf", "%s", "{{task_content}}"]\n\n'
    config += "[[hooks.on_error]]\ncommand = \"printf '%s' \\\"$RALPH_CHANGED_FILES\\\"\"\nwhen = \"${STORY_TITLE} != '' && ${ERROR} != 'x'\"\n"
    p = HookProject(tmp_path, config)
    engine = p.engine(monkeypatch)
    for text in texts:
        fired = fire(engine, "on_error", story_title=text, error=text, changed_files=[text, "-rf"])
        outputs = [r.output for _, r in fired.results]
        expected = [text, text, text, text, f"pre {text} post", f"x{text}y"][index]
        assert outputs == [expected, text, f"{text}\n-rf"], (FORMS[index], text)
        assert not os.path.exists(canary), (FORMS[index], text)


def test_shown_command_quotes_the_values(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.on_error]]\ncommand = "echo {{error}} \\"{{task_id}}\\""\n')
    result = fire(p.engine(monkeypatch), "on_error", error="$(boom)", story_id="US 1").results[0][1]
    assert result.command == "echo '$(boom)' \"\"'US 1'\"\"" and result.output == "$(boom) US 1"
    import subprocess

    shown = subprocess.run(["/bin/sh", "-c", result.command], capture_output=True, text=True).stdout
    assert shown.rstrip("\n") == result.output  # what people are shown means what ran


def test_shell_environment_variables_stay_the_shells(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.session_start]]\ncommand = "echo ${HOME} {{session}}"\nenv = { GREETING = "hi {{task_id}}" }\n\n'
                              '[[hooks.session_start]]\ncommand = "echo $GREETING"\nworking_dir = "sub"\n')
    os.makedirs(os.path.join(p.root, "sub"))
    fired = fire(p.engine(monkeypatch), "session_start")
    assert fired.results[0][1].output == f"{os.environ['HOME']} r1"
    assert fired.results[1][1].output == ""  # env applies to its own action only


def test_env_table_and_working_dir(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.session_start]]\ncommand = "@RECORD@"\nenv = { GREETING = "hi {{task_id}}" }\nworking_dir = "sub"\n')
    os.makedirs(os.path.join(p.root, "sub"))
    p_env = p.environ()
    fire(p.engine(monkeypatch), "session_start")
    [seen] = p.records()
    assert seen["cwd"] == os.path.join(p.root, "sub")
    assert p_env  # the recorder only lists RALPH_*; GREETING is checked through output below
    p.write_config('[[hooks.session_start]]\ncommand = "printf %s \\"$GREETING\\""\nenv = { GREETING = "hi {{task_id}}" }\n')
    assert fire(p.engine(monkeypatch), "session_start").results[0][1].output == "hi US-001"


def test_when_selects_actions_and_a_bad_value_skips_with_a_message(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.post_iteration]]\ncommand = "@RECORD@ every-3rd"\nwhen = "${ITERATION} % 3 == 0"\n\n'
                              '[[hooks.post_iteration]]\ncommand = "@RECORD@ plan-only"\nwhen = "${STAGE} == \'plan\'"\n\n'
                              '[[hooks.post_iteration]]\ncommand = "@RECORD@ broken"\nwhen = "${STAGE} % 2 == 0"\n')
    engine = p.engine(monkeypatch)
    for iteration in (1, 2, 3, 4, 5, 6):
        fire(engine, "post_iteration", iteration=iteration)
    assert [(r["argv"][0], r["env"]["RALPH_ITERATION"]) for r in p.records()] == [("every-3rd", "3"), ("every-3rd", "6")]
    assert sum("could not be evaluated" in m for m in engine.messages) == 6


def test_pipe_output_is_fifo_across_hooks_and_points_and_ansi_free(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.post_iteration]]\ncommand = "printf \'\\\\033[31mE1 red\\\\033[0m\\\\n\'"\npipe_output = true\n\n'
                              '[[hooks.post_iteration]]\ncommand = "echo not piped"\n\n'
                              '[[hooks.post_iteration]]\nname = "tests"\ncommand = "echo E2 >&2; exit 1"\npipe_output = true\n\n'
                              '[[hooks.on_task_complete]]\ncommand = "echo E3"\npipe_output = true\n\n'
                              '[[hooks.session_end]]\ncommand = "echo never piped"\npipe_output = true\n')
    engine = p.engine(monkeypatch)
    fire(engine, "post_iteration", iteration=1)
    fire(engine, "on_task_complete", iteration=2)
    fire(engine, "session_end", finish_type="complete")
    entries = pending.read(p.state_dir)
    assert [e["text"] for e in entries] == ["E1 red", "E2", "E3"]
    block = engine.pending_block()
    assert block.index("E1 red") < block.index("E2") < block.index("E3")
    assert "### post_iteration · tests · iteration 1 · failed (exit 1)" in block and "\x1b" not in block


def test_pending_buffer_is_bounded_dropping_the_oldest(tmp_path) -> None:
    state = str(tmp_path)
    for number in range(20):
        pipe_output.add(state, {"point": "post_iteration", "label": f"h{number}", "text": f"{number}:" + "y" * 5000})
    entries = pending.read(state)
    total = sum(len(e["text"]) for e in entries)
    assert total <= pipe_output.MAX_TOTAL_CHARS and entries[-1]["label"] == "h19"
    assert entries[0]["dropped"] == 20 - len(entries)
    assert f"({20 - len(entries)} older hook output(s) dropped" in pending.render(entries)


def test_torn_pending_file_is_moved_aside(tmp_path) -> None:
    path = pending.path_in(str(tmp_path))
    with open(path, "w") as f:
        f.write('{"version": 1, "entries": [{"te')
    assert pending.read(str(tmp_path)) == []
    assert os.path.exists(path + ".corrupt")


def test_traces_are_written_and_redacted(tmp_path, monkeypatch) -> None:
    secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    p = HookProject(tmp_path, f'[[hooks.post_iteration]]\ncommand = "echo token {secret}; echo TOKEN={secret} >&2"\n')
    fire(p.engine(monkeypatch), "post_iteration")
    [trace] = p.traces()
    assert trace["point"] == "post_iteration" and trace["exit"] == 0 and trace["output_bytes"] > 0
    assert "duration_s" in trace and trace["where"].endswith("ralph.toml:1")
    assert secret not in json.dumps(trace) and "[REDACTED" in trace["command"]
    log = open(os.path.join(p.state_dir, "logs", "r1", "hooks.log")).read()
    assert secret not in log and "[REDACTED" in log
    [event] = [json.loads(line) for line in open(os.path.join(p.state_dir, "events.jsonl"))]
    assert event["event"] == "hooks" and event["point"] == "post_iteration" and event["actions"][0]["status"] == "success"


def test_list_command_runs_without_a_shell(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, f'[[hooks.post_iteration]]\ncommand = [{json.dumps(sys.executable)}, "-c", "import sys; print(sys.argv[1:])", "{{{{task_id}}}}", "$(x)"]\n')
    result = fire(p.engine(monkeypatch), "post_iteration").results[0][1]
    assert result.output == "['US-001', '$(x)']" and result.command.startswith(shlex.quote(sys.executable))


def test_a_command_that_cannot_start_is_a_failure(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.post_iteration]]\ncommand = ["/nonexistent/hook"]\non_failure = "abort"\n')
    fired = fire(p.engine(monkeypatch), "post_iteration")
    assert fired.results[0][1].status == "failed" and "cannot run" in fired.abort


@pytest.fixture
def fake_action(monkeypatch):
    from ralph.loop.lifecycle import action_types
    from tests import fake_action as module

    monkeypatch.setitem(action_types.ACTIONS, "approval", action_types.ActionType("tests.fake_action", exports=module.EXPORTS))
    module.CALLS.clear()
    return module


def test_a_new_action_type_plugs_into_the_table(tmp_path, monkeypatch, fake_action) -> None:
    """The action contract: a module in ACTIONS with KEYS, validate and run,
    and the names it exports, gets when/on_failure/retry, and its exports
    reach later actions' env, templates and conditions."""
    p = HookProject(tmp_path, '[[hooks.pre_iteration]]\ntype = "approval"\nanswer = "it\'s $(ok)"\n\n'
                              '[[hooks.pre_iteration]]\ncommand = "printf \'%s|%s|%s\' {{hook_response}} \\"${HOOK_RESPONSE}\\" \\"$RALPH_HOOK_RESPONSE\\""\n\n'
                              '[[hooks.pre_iteration]]\ncommand = "echo gated"\nwhen = "${HOOK_RESPONSE} == \'approved\'"\n\n'
                              '[[hooks.pre_iteration]]\ncommand = "@RECORD@"\n\n'
                              '[[hooks.pre_iteration]]\ntype = "approval"\nfail = true\non_failure = "retry"\nretries = 1\nretry_delay = 0\n')
    fired = fire(p.engine(monkeypatch), "pre_iteration")
    assert [r.status for _, r in fired.results] == ["success", "success", "success", "failed"]  # `when` was false: not run
    assert fired.results[1][1].output == "it's $(ok)|it's $(ok)|it's $(ok)"
    assert len(fake_action.CALLS) == 3 and fired.results[3][1].attempts == 2
    [seen] = p.records()
    assert seen["stdin"]["hook_response"] == "it's $(ok)" and seen["env"]["RALPH_HOOK_RESPONSE"] == "it's $(ok)"


def test_an_action_can_abort_the_loop(tmp_path, monkeypatch, fake_action) -> None:
    p = HookProject(tmp_path, '[[hooks.stage_complete]]\ntype = "approval"\nverdict = "reject"\n\n[[hooks.stage_complete]]\ncommand = "@RECORD@"\n')
    fired = fire(p.engine(monkeypatch), "stage_complete")
    assert fired.abort == "rejected by a person: not yet" and fired.ran == 1 and p.records() == []


def test_an_action_types_keys_are_validated_with_lines(tmp_path, monkeypatch, fake_action) -> None:
    from ralph.config.schema import ConfigError
    from ralph.loop.lifecycle.config import require_valid

    p = HookProject(tmp_path, '[[hooks.stage_complete]]\ntype = "approval"\nverdict = "maybe"\ncommand = "x"\n')
    with pytest.raises(ConfigError) as caught:
        require_valid(p.hooks(monkeypatch))
    text = str(caught.value)
    assert f"{p.config_path}:3: [hooks.stage_complete] verdict: must be one of 'approve', 'reject'" in text
    assert f"{p.config_path}:4: [hooks.stage_complete] unknown key 'command' for a approval hook" in text
