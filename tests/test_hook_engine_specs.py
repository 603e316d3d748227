"""The hook engine held to what the four hook systems users know promise
(../shared/specs): a lone non-executable hook is warned about, per-stage
max_iterations ends only its stage, plain-HTTP webhooks only to addresses that
really are loopback, a bad event-hook table is skipped with a warning while
the good ones run, event hooks in `ralph hooks list`/`test` and in the global
hooks.toml, and the spec names ralph lacked."""
from __future__ import annotations

import os

from tests.lifecycle_support import RECORDER
from tests.loop_support import Project

PLAN2 = "# Plan\n\n- [ ] US-001: Add greeting\n- [ ] US-002: Add farewell\n"
DO_STORY = [{"append": "work.txt", "text": "one more step\n"}, {"mark": "done"}]
NOTHING = [{"print": "thinking, no tick"}]


def recorder(tmp_path) -> tuple[str, str]:
    path = os.path.join(str(tmp_path), "recorder.py")
    with open(path, "w") as f:
        f.write(RECORDER)
    return path, os.path.join(str(tmp_path), "record.jsonl")


# ---- the hooks directory ----


def test_a_lone_non_executable_hook_is_warned_about(tmp_path) -> None:
    p = Project(tmp_path, PLAN2)
    p.script(default=DO_STORY)
    path = os.path.join(p.root, ".ralph", "hooks", "started")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho started\n")
    result = p.run_loop(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "hooks: warning:" in result.stdout and f"{path}: not executable" in result.stdout, result.stdout


# ---- per-stage max_iterations ----

TWO_BUILD_STAGES = ('[loop]\nno_progress_limit = 0\nmax_iterations_per_story = 0\n'
                    '[[loop.stages]]\nname = "first"\nmode = "build"\nmax_iterations = 1\n'
                    '[[loop.stages]]\nname = "second"\nmode = "build"\nmax_iterations = @SECOND@\n'
                    '[[hooks.stage_complete]]\ncommand = "@RECORD@ stage_complete"\n')


def stage_project(tmp_path, second: int) -> tuple[Project, str]:
    script, record = recorder(tmp_path)
    command = f"python3 {script}"
    p = Project(tmp_path, PLAN2, config=TWO_BUILD_STAGES.replace("@SECOND@", str(second)).replace("@RECORD@", command))
    return p, record


def test_a_stage_that_uses_up_its_max_iterations_ends_only_that_stage(tmp_path) -> None:
    p, record = stage_project(tmp_path, 5)
    p.script(runs=[NOTHING], default=DO_STORY)  # the first stage's one iteration finishes nothing
    result = p.run_loop(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "RECORD_FILE": record})
    assert result.returncode == 0, result.stdout + result.stderr
    assert p.run_state()["finish"]["type"] == "complete"
    assert [e["stage"] for e in p.events("stage_complete")] == ["first", "second"]
    import json

    with open(record) as f:
        seen = [json.loads(line)["env"]["RALPH_STAGE"] for line in f]
    assert seen == ["first", "second"]  # stage_complete fired for the stage that ran out
    assert [(e["story"], e["result"]) for e in p.events("iteration")] == [
        ("US-001", "incomplete"), ("US-001", "done"), ("US-002", "done")]


def test_the_last_stage_running_out_finishes_max_iterations_after_its_stage_complete(tmp_path) -> None:
    p, record = stage_project(tmp_path, 1)
    p.script(runs=[NOTHING], default=DO_STORY)
    result = p.run_loop(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "RECORD_FILE": record})
    assert result.returncode == 3, result.stdout + result.stderr
    finish = p.run_state()["finish"]
    assert finish["type"] == "max_iterations" and "second" in finish["message"] and "next: US-002" in finish["message"]
    assert [e["stage"] for e in p.events("stage_complete")] == ["first", "second"]


def test_the_whole_run_cap_still_ends_the_pipeline(tmp_path) -> None:
    p, record = stage_project(tmp_path, 5)
    p.script(runs=[NOTHING], default=DO_STORY)
    result = p.run_loop("--max-iterations", "1", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "RECORD_FILE": record})
    assert result.returncode == 3, result.stdout + result.stderr
    assert p.events("stage_complete") == [] and p.invocations() == 1


# ---- plain-HTTP webhooks: loopback by address, not by spelling ----


def fake_dns(monkeypatch, names: dict[str, list[str]]) -> list[str]:
    """socket.getaddrinfo answering `names` (each call pops its next answer,
    the last one repeats); other hosts resolve for real. Returns the names asked."""
    import socket

    real = socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host, port, *args, **kwargs):
        if host in names:
            asked.append(host)
            answers = names[host]
            address = answers.pop(0) if len(answers) > 1 else answers[0]
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sockaddr = (address, int(port)) if family == socket.AF_INET else (address, int(port), 0, 0)
            return [(family, socket.SOCK_STREAM, 6, "", sockaddr)]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def test_a_name_that_looks_loopback_is_judged_by_what_it_resolves_to(monkeypatch) -> None:
    from ralph.loop.lifecycle import webhook_config

    fake_dns(monkeypatch, {"127.0.0.1.evil.test": ["203.0.113.7"], "127.0.0.1.nip.test": ["127.0.0.1"],
                           "both.test": ["::1"]})
    problem = webhook_config.url_problem("http://127.0.0.1.evil.test/hook")
    assert problem and "must use https://" in problem and "resolves to 203.0.113.7" in problem
    assert webhook_config.url_problem("http://127.0.0.1.nip.test/hook") is None
    assert webhook_config.url_problem("http://both.test:8080/hook") is None
    assert webhook_config.url_problem("http://127.0.0.2/hook") is None and webhook_config.url_problem("http://[::ffff:127.0.0.1]/") is None
    assert "10.1.2.3 is not a loopback address" in (webhook_config.url_problem("http://10.1.2.3/hook") or "")
    assert webhook_config.url_problem("https://127.0.0.1.evil.test/hook") is None  # TLS checks the name


def test_a_non_loopback_name_is_refused_at_config_time(tmp_path, monkeypatch) -> None:
    from ralph.config.schema import ConfigError
    from ralph.loop.lifecycle.config import load_hooks, require_valid

    fake_dns(monkeypatch, {"127.0.0.1.evil.test": ["203.0.113.7"]})
    root = str(tmp_path)
    path = os.path.join(root, "ralph.toml")
    with open(path, "w") as f:
        f.write('[[hooks.session_end]]\ntype = "webhook"\nurl = "http://127.0.0.1.evil.test/hook"\n')
    try:
        require_valid(load_hooks(root, None, path, {}, include_global=False))
    except ConfigError as e:
        assert "ralph.toml:3:" in str(e) and "resolves to 203.0.113.7" in str(e)
    else:
        raise AssertionError("plain http to a non-loopback address was accepted")


def webhook_engine(tmp_path, url: str):
    from ralph.loop.lifecycle.config import load_hooks, require_valid
    from ralph.loop.lifecycle.engine import Engine

    root = str(tmp_path / "project")
    state = os.path.join(root, ".ralph")
    os.makedirs(state)
    path = os.path.join(root, "ralph.toml")
    with open(path, "w") as f:
        f.write(f'[[hooks.post_iteration]]\ntype = "webhook"\nurl = "${{HOOK_URL}}"\nretries = 1\nbackoff = 0\n')
    env = {"HOOK_URL": url, "PATH": os.environ.get("PATH", "")}
    hooks = require_valid(load_hooks(root, None, path, env, include_global=False))
    return Engine(hooks, root=root, state_dir=state, run_id="run-1", log_dir=os.path.join(state, "logs"), environ=env,
                  sleep=lambda s: None)


class Receiver:
    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.hosts: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.hosts.append(self.headers.get("Host", ""))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_webhook_goes_to_the_address_that_was_checked(tmp_path, monkeypatch) -> None:
    """The name resolves to loopback at the check and elsewhere right after
    (DNS rebinding): the request still goes to the checked address, with the
    name in the Host header, and the name is resolved once per attempt."""
    receiver = Receiver()
    try:
        asked = fake_dns(monkeypatch, {"hooks.test": ["127.0.0.1", "203.0.113.7"]})
        engine = webhook_engine(tmp_path, f"http://hooks.test:{receiver.port}/notify")
        ((_, result),) = engine.fire("post_iteration", {"iteration": 1}).results
        assert result.ok, result.message
        assert receiver.hosts == [f"hooks.test:{receiver.port}"] and asked == ["hooks.test"]
    finally:
        receiver.close()


def test_a_webhook_to_a_name_resolving_elsewhere_is_not_sent(tmp_path, monkeypatch) -> None:
    receiver = Receiver()
    try:
        asked = fake_dns(monkeypatch, {"127.0.0.1.evil.test": ["203.0.113.7"]})
        engine = webhook_engine(tmp_path, f"http://127.0.0.1.evil.test:{receiver.port}/notify")
        ((_, result),) = engine.fire("post_iteration", {"iteration": 1}).results
        assert result.status == "failed" and "resolves to 203.0.113.7" in result.message and "must use https://" in result.message
        assert receiver.hosts == [] and asked == ["127.0.0.1.evil.test"]  # refused at once, not retried
    finally:
        receiver.close()


# ---- event hooks: listed, testable, and from the global hooks.toml ----

EVENT_HOOKS = """\
[[hooks.event]]
match = "PreToolUse:Bash"
command = "case \\"$RALPH_TOOL_ARGS\\" in *make*) echo 'use the build script' >&2; exit 1;; esac"
description = "no bare make"

[[hooks.event]]
match = "tool:post_execute"
command = ["true"]
enabled = false
"""


def ralph(*args: str, cwd: str, env: dict | None = None):
    import subprocess
    import sys

    full = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG")}
    full.update(env or {})
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), "ralph"), *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=60)


def event_project(tmp_path, config: str = EVENT_HOOKS, global_config: str | None = None) -> tuple[str, dict]:
    from tests.conftest import git

    root = str(tmp_path / "repo")
    os.makedirs(root)
    git(root, "init", "-q")
    with open(os.path.join(root, "ralph.toml"), "w") as f:
        f.write(config)
    xdg = str(tmp_path / "xdg")
    if global_config is not None:
        os.makedirs(os.path.join(xdg, "ralph-hooks"))
        with open(os.path.join(xdg, "ralph-hooks", "hooks.toml"), "w") as f:
            f.write(global_config)
    return root, {"XDG_CONFIG_HOME": xdg}


def test_hooks_list_shows_event_hooks_with_their_description(tmp_path) -> None:
    root, env = event_project(tmp_path)
    result = ralph("hooks", "list", cwd=root, env=env)
    assert result.returncode == 0, result.stderr
    assert "Claude Code events ([[hooks.event]]" in result.stdout
    assert "[on ] no bare make  (project: ralph.toml:1)" in result.stdout
    assert "match 'PreToolUse:Bash'" in result.stdout
    assert "[off] true  (project: ralph.toml:6)" in result.stdout


def test_hooks_test_fires_event_hooks_on_a_captured_payload(tmp_path) -> None:
    root, env = event_project(tmp_path)
    denied = ralph("hooks", "test", "PreToolUse:Bash", "--input", '{"command": "make all"}', cwd=root, env=env)
    assert denied.returncode == 0, denied.stderr
    assert "PreToolUse:Bash: 1 matching event hook(s)" in denied.stdout
    assert '[failed] hook "no bare make" (ralph.toml:1)' in denied.stdout
    assert "the tool call would be denied; the model reads: Blocked by your hook \"no bare make\" (ralph.toml:1), exit 1: use the build script" in denied.stdout
    allowed = ralph("hooks", "test", "tool:pre_execute:Bash", "--input", '{"command": "ls"}', cwd=root, env=env)
    assert "[success]" in allowed.stdout and "the call would go on unchanged" in allowed.stdout
    none = ralph("hooks", "test", "Stop", cwd=root, env=env)
    assert "Stop: 0 matching event hook(s)" in none.stdout
    bad = ralph("hooks", "test", "Stop:Bash", cwd=root, env=env)
    assert bad.returncode == 2 and "Stop has no tool" in bad.stderr


def test_event_hooks_in_the_global_hooks_toml_run_unless_the_project_disables_them(tmp_path) -> None:
    from tests.conftest import load_payload, run_hook

    root, env = event_project(tmp_path, config="[loop]\nmax_iterations = 3\n", global_config=EVENT_HOOKS)
    payload = load_payload("PreToolUse_Bash", root)
    payload["tool_input"]["command"] = "make"
    result = run_hook("pre-tool", payload, root, env=env)
    assert result.denied and "use the build script" in result.reason and "hooks.toml:1" in result.reason
    listing = ralph("hooks", "list", cwd=root, env=env)
    assert "[on ] no bare make  (global: hooks.toml:1)" in listing.stdout
    with open(os.path.join(root, "ralph.toml"), "w") as f:
        f.write("[hooks]\ndisable_global_hooks = true\n")
    assert not run_hook("pre-tool", payload, root, env=env).denied
    assert "no bare make" not in ralph("hooks", "list", cwd=root, env=env).stdout


# ---- the spec names ralph lacked ----


def test_status_ctx_last_decision_and_spec_dir_under_ralphs_names(tmp_path, monkeypatch) -> None:
    import json

    from tests.lifecycle_support import CONTEXT, HookProject

    hp = HookProject(tmp_path, """\
[[hooks.post_iteration]]
command = "@RECORD@ ${STATUS} ${CTX} {{spec_dir}}"
when = "${LAST_DECISION} == 'done'"
""")
    engine = hp.engine(monkeypatch)
    plan = os.path.join(hp.root, ".ralph", "PRD-greeting", "plan.md")
    engine.fire("post_iteration", {**CONTEXT, "last_result": "verify_failed", "plan_file": plan})
    assert hp.records() == []  # LAST_DECISION is the last result: the condition was false
    engine.fire("post_iteration", {**CONTEXT, "last_result": "done", "plan_file": plan})
    [record] = hp.records()
    env = record["env"]
    assert record["argv"] == [env["RALPH_STATUS_FILE"], env["RALPH_CONTEXT_FILE"], env["RALPH_SPEC_DIR"]]
    assert env["RALPH_STATUS_FILE"] == os.path.join(hp.state_dir, "run.json")
    assert env["RALPH_SPEC_DIR"] == os.path.dirname(plan)
    with open(env["RALPH_CONTEXT_FILE"], encoding="utf-8") as f:
        saved = json.load(f)
    assert saved["story_id"] == "US-001" and saved["last_result"] == "done" and saved["hook_point"] == "post_iteration"
    assert saved["context_file"] == env["RALPH_CONTEXT_FILE"] == record["stdin"]["context_file"]
    assert oct(os.stat(env["RALPH_CONTEXT_FILE"]).st_mode & 0o777) == "0o600"


def test_stage_outputs_are_the_stages_iteration_logs(tmp_path) -> None:
    import json

    script, record = recorder(tmp_path)
    config = ('[loop]\nno_progress_limit = 0\n'
              '[[loop.stages]]\nname = "first"\nmode = "build"\nmax_iterations = 1\n'
              '[[loop.stages]]\nname = "second"\nmode = "build"\n'
              f'[[hooks.stage_complete]]\ncommand = "python3 {script} stage_complete"\n')
    p = Project(tmp_path, PLAN2, config=config)
    p.script(runs=[NOTHING], default=DO_STORY)
    result = p.run_loop(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "RECORD_FILE": record})
    assert result.returncode == 0, result.stdout + result.stderr
    with open(record) as f:
        seen = [json.loads(line) for line in f]
    logs = {it["iteration"]: os.path.join(p.root, it["log"]) for it in p.events("iteration")}
    assert [r["env"]["RALPH_STAGE_OUTPUTS"].splitlines() for r in seen] == [[logs[1]], [logs[2], logs[3]]]
    assert seen[1]["stdin"]["stage_outputs"] == [logs[2], logs[3]] and all(os.path.isfile(log) for log in logs.values())


def test_hook_timeout_from_the_environment_and_a_fail_closed_hooks_dir(tmp_path, monkeypatch) -> None:
    from tests.lifecycle_support import CONTEXT, HookProject

    hp = HookProject(tmp_path)
    hp.dir_hook("next_iteration", "sleep 30")
    engine = hp.engine(monkeypatch, RALPH_HOOK_TIMEOUT="0.2")
    fired = engine.fire("pre_iteration", CONTEXT)
    ((_, result),) = fired.results
    assert result.status == "timeout" and "timed out after 0.2s" in result.message and fired.abort is None
    closed = hp.engine(monkeypatch, RALPH_HOOK_TIMEOUT="0.2", RALPH_HOOK_FAIL_BEHAVIOR="abort").fire("pre_iteration", CONTEXT)
    assert closed.abort == "next_iteration timed out (dir_on_failure = abort)"
    hp.dir_hook("next_iteration", "exit 3")
    assert hp.engine(monkeypatch).fire("pre_iteration", CONTEXT).abort is None
    hp.write_config('[hooks]\ndir_on_failure = "abort"\n')
    assert "exit 3" in (hp.engine(monkeypatch).fire("pre_iteration", CONTEXT).abort or "")
    assert hp.engine(monkeypatch, RALPH_HOOK_FAIL_BEHAVIOR="continue").fire("pre_iteration", CONTEXT).abort is None
    hp.dir_hook("next_iteration", "exit 0", executable=False)  # fail closed: a check that cannot run stops the loop
    engine = hp.engine(monkeypatch)
    assert any("not executable: with dir_on_failure = abort" in w for w in engine.hooks.warnings)
    assert "next_iteration failed" in (engine.fire("pre_iteration", CONTEXT).abort or "")
    bad = hp.hooks(monkeypatch, RALPH_HOOK_TIMEOUT="soon", RALPH_HOOK_FAIL_BEHAVIOR="explode").errors
    assert len(bad) == 2 and bad[0].startswith("environment RALPH_HOOK_TIMEOUT='soon': ") and "RALPH_HOOK_FAIL_BEHAVIOR='explode'" in bad[1]
