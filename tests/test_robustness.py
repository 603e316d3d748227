"""A hook that crashes is a bypass: whatever it is fed, `ralph` exits 0 and
prints exactly one JSON object, with no traceback anywhere."""
from __future__ import annotations

import glob
import json
import os
import signal
import subprocess

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import HOOK_INPUTS, RALPH, load_payload, run_hook, hook_state_dir

SUBCOMMANDS = ["pre-tool", "post-tool", "post-tool-failure", "prompt", "stop", "hook"]
PAYLOADS = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(HOOK_INPUTS, "*.json")))]
PROBE_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


def assert_one_object(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr and b"Traceback" not in proc.stdout
    assert proc.stdout.endswith(b"\n") and proc.stdout.count(b"\n") == 1
    value = json.loads(proc.stdout)
    assert isinstance(value, dict)
    return value


def call(subcommand: str, data: bytes, cwd: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    return subprocess.run([RALPH, subcommand], input=data, capture_output=True, cwd=cwd, env=env, timeout=30)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)


@PROBE_SETTINGS
@given(subcommand=st.sampled_from(SUBCOMMANDS), data=st.binary(max_size=300))
def test_random_bytes(tmp_path_factory, subcommand: str, data: bytes) -> None:
    assert_one_object(call(subcommand, data, str(tmp_path_factory.getbasetemp())))


@PROBE_SETTINGS
@given(
    subcommand=st.sampled_from(SUBCOMMANDS),
    base=st.sampled_from(PAYLOADS),
    mutations=st.lists(st.tuples(st.sampled_from(["del", "set", "set_input"]), st.text(max_size=15), json_values), max_size=4),
)
def test_mutated_real_payloads(tmp_path_factory, subcommand: str, base: dict, mutations: list) -> None:
    payload = json.loads(json.dumps(base))
    keys = list(payload)
    for op, key, value in mutations:
        if op == "del" and keys:
            payload.pop(keys[len(key) % len(keys)], None)
        elif op == "set" and keys:
            payload[keys[len(key) % len(keys)]] = value
        elif op == "set_input" and isinstance(payload.get("tool_input"), dict):
            payload["tool_input"][key or "file_path"] = value
    cwd = str(tmp_path_factory.getbasetemp())
    if payload.get("cwd") == "/home/dev/app":
        payload["cwd"] = cwd
    assert_one_object(call(subcommand, json.dumps(payload).encode(), cwd))


def test_edge_inputs(tmp_path) -> None:
    cwd = str(tmp_path)
    cases = [b"", b"   \n", b"\xff\xfe\x00garbage", b"[1,2,3]", b"null", b'"string"', b"{", b'{"a":1}{"b":2}',
             b"[" * 100000 + b"]" * 100000, json.dumps({"hook_event_name": 5}).encode(),
             json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": "not-an-object"}).encode(),
             json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": {"file_path": 7}}).encode(),
             json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": ["git", "push"]}}).encode()]
    for subcommand in SUBCOMMANDS:
        for data in cases:
            assert_one_object(call(subcommand, data, cwd))


def test_missing_cwd_falls_back(repo: str) -> None:
    payload = load_payload("PreToolUse_Edit", repo)
    del payload["cwd"]
    assert run_hook("pre-tool", payload, repo).denied  # README.md, unread, resolved against the process cwd


def test_unwritable_state_dir_still_answers(repo: str, tmp_path) -> None:
    # A plain file where the state dir (inside .git/) should be: nothing can be created under it (root ignores chmod).
    with open(os.path.join(repo, ".git", "ralph"), "w") as f:
        f.write("not a directory\n")
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    run_hook("post-tool", load_payload("PostToolUse_Read", repo), repo, env)
    # reads went to the per-user fallback, so the edit is allowed and the log is there
    assert not run_hook("pre-tool", load_payload("PreToolUse_Edit", repo), repo, env).denied
    logs = glob.glob(str(tmp_path / "state" / "ralph-hooks" / "projects" / "*" / "logs" / "hooks.jsonl"))
    assert logs


def test_broken_state_files_are_survived(repo: str) -> None:
    run_hook("post-tool", load_payload("PostToolUse_Read", repo), repo)
    reads_log = glob.glob(os.path.join(hook_state_dir(repo), "sessions", "*", "reads.log"))[0]
    with open(reads_log, "ab") as f:
        f.write(b"\x00\xffgarbage line\nnot numbers at all\n12 3 4 [not json\n{torn")
    with open(os.path.join(hook_state_dir(repo), "run.json"), "w") as f:
        f.write('{"status": "running", "story": {"id": "US-1"')  # torn mid-write
    with open(os.path.join(hook_state_dir(repo), "reads_epoch"), "w") as f:
        f.write("garbage")
    assert not run_hook("pre-tool", load_payload("PreToolUse_Edit", repo), repo).denied
    assert run_hook("stop", load_payload("Stop", repo), repo).output == {}
    assert run_hook("prompt", load_payload("UserPromptSubmit", repo), repo).output == {}
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl")) as f:
        assert any("corrupt" in line for line in f)


def test_oversized_stdin_is_refused_but_answered(repo: str) -> None:
    big = b'{"hook_event_name":"PreToolUse","x":"' + b"a" * (64 * 1024 * 1024 + 10) + b'"}'
    value = assert_one_object(call("pre-tool", big, repo))
    assert value["hookSpecificOutput"]["permissionDecision"] == "deny"  # cannot inspect: fail closed
    assert assert_one_object(call("post-tool", big, repo)) == {}


def test_closed_stdout_sigpipe(repo: str) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read what the hook prints
    payload = json.dumps(load_payload("PreToolUse_Edit", repo)).encode()
    proc = subprocess.run([RALPH, "pre-tool"], input=payload, stdout=write_end, stderr=subprocess.PIPE, cwd=repo, timeout=30)
    os.close(write_end)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr
    assert proc.returncode != -signal.SIGPIPE


def test_internal_exception_fails_closed_on_pretooluse(monkeypatch, repo: str) -> None:
    from ralph.claude import dispatch as hook

    monkeypatch.setitem(hook.HANDLERS, "PreToolUse", {"*": "tests.exploding_handler"})
    monkeypatch.setitem(hook.HANDLERS, "Stop", {"*": "tests.exploding_handler"})
    try:
        outcome, _, event, notes = hook.dispatch("", json.dumps(load_payload("PreToolUse_Edit", repo)).encode(), {})
    finally:
        # dispatch arms the PreToolUse deadline and main() disarms it: left armed, its
        # SIGALRM would end whatever this test process runs 20 s later
        hook.disarm_deadline()
    assert outcome.output["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert any("ZeroDivisionError" in n for n in notes)
    outcome, _, _, _ = hook.dispatch("", json.dumps(load_payload("Stop", repo)).encode(), {})
    assert outcome.output == {}


def test_hung_pretooluse_check_still_denies(monkeypatch, repo: str) -> None:
    from ralph.claude import dispatch as hook

    monkeypatch.setitem(hook.HANDLERS, "PreToolUse", {"*": "tests.sleeping_handler"})
    monkeypatch.setattr(hook, "DEADLINE_SECONDS", 0.5)
    try:
        outcome, _, _, notes = hook.dispatch("", json.dumps(load_payload("PreToolUse_Edit", repo)).encode(), {})
    finally:
        hook.disarm_deadline()
    assert outcome.output["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert any(n.startswith("internal error Deadline: no answer within") for n in notes), notes


def test_large_payload_parsed_by_orjson_path(repo: str) -> None:
    from ralph.claude import dispatch as hook

    payload = load_payload("PostToolUse_Bash", repo)
    payload["tool_response"]["stdout"] = "ok\n" * ((hook.ORJSON_MIN_BYTES // 4) + 10)  # 4 bytes each in JSON
    data = json.dumps(payload).encode()
    assert hook.ORJSON_MIN_BYTES <= len(data) <= hook.MAX_STDIN
    assert hook.parse_payload(data) == payload
    assert assert_one_object(call("post-tool", data, repo)) == {}
    # stricter than json: a lone surrogate falls back to the C scanner
    odd = data.replace(b'"ok\\n', b'"\\ud800ok\\n', 1)
    assert hook.parse_payload(odd)["tool_response"]["stdout"].startswith("\ud800")
