"""Secrets never reach disk in clear, and every logged field is bounded.

A loop run whose agent (tests/fake_agent.py, through the real `ralph` hooks
and the real `ralph-loop`) types commands full of planted secrets, prints
them, fails tests that print them, and gets rolled back; then every file under
.ralph/ and every rollback snapshot's message is searched for them. Plus the
prompt cut, oversized fields, a lone surrogate and a 60 MB command.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

from tests.conftest import RALPH, load_payload, run_hook, hook_state_dir
from tests.loop_support import Project, git

# Every planted secret carries PLANTED in its secret part, so one search finds any leak.
GITHUB = "ghp_PLANTEDgh0123456789abcdefghijklmnopqrs"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/PLANTEDawsSECRETkey"
ANTHROPIC = "sk-ant-api03-PLANTEDanthropic0123456789abcdef"
AWS_KEY_ID = "AKIAPLANTEDKEY123456"
OPENAI = "sk-proj-PLANTEDopenai0123456789abcdefghij"
SLACK = "xoxb-PLANTED0123-456789abcdef"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJQTEFOVEVEIjoiand0In0.PLANTEDsignature0123456789"
PASSWORD = "hunter2PLANTEDpw"
KEY_BODY = "MIIEpPLANTEDprivateKEYbodyLINE0123456789"
PRIVATE_KEY = f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\n-----END RSA PRIVATE KEY-----"

FAILING_TEST = (
    "import os\n\n"
    "def test_prints_its_environment():\n"
    "    print('env:', os.environ.get('ANTHROPIC_API_KEY'), 'PASSWORD=' + os.environ.get('PASSWORD', ''))\n"
    "    print('bare:', os.environ.get('RALPH_TEST_PASSWORD'))  # no name, no format: known from the environment\n"
    "    assert False\n"
)
TEST_COMMAND = f"ANTHROPIC_API_KEY={ANTHROPIC} PASSWORD={PASSWORD} {sys.executable} -m pytest -q -p no:cacheprovider test_env.py"
AGENT_STEPS = [
    {"write": "test_env.py", "text": FAILING_TEST},
    {"run": f"git push https://x-access-token:{GITHUB}@github.com/o/r.git main"},
    {"run": f"AWS_SECRET_ACCESS_KEY={AWS_SECRET} git push origin main"},
    {"run": f"echo keyed keyAKIA{AWS_KEY_ID[4:]} token {SLACK} jwt {JWT}"},
    {"run": "printf '%s\\n' '-----BEGIN RSA PRIVATE KEY-----' '" + KEY_BODY + "' '-----END RSA PRIVATE KEY-----'"},
    {"run": TEST_COMMAND},
    {"run": TEST_COMMAND},
    {"run": TEST_COMMAND},  # the third failing run: rolled back (snapshot, failure, marker)
    {"write": "notes.txt", "text": "work\n"},
    {"mark": "done"},
]


def files_under(root: str) -> list[str]:
    found = []
    for dirpath, _dirs, files in os.walk(root):
        found += [os.path.join(dirpath, name) for name in files]
    return found


def test_planted_secrets_never_reach_disk(tmp_path) -> None:
    p = Project(tmp_path, "- [ ] US-001: Add the feature\n")
    p.script(runs=[AGENT_STEPS], default=[{"write": "ok.txt", "text": "ok\n"}, {"mark": "done"}],
             hooks=["prompt", "stop", "bash"])
    verify = f"OPENAI_API_KEY={OPENAI} test -f ok.txt"
    result = p.run_loop("--verify", verify, env={"RALPH_TEST_PASSWORD": "PLANTEDbareValue42"})
    assert result.returncode == 0, result.stdout + result.stderr
    # the session really went through every writer
    state = os.path.join(p.root, ".ralph")
    names = {os.path.relpath(f, state) for f in files_under(state)}
    assert "logs/hooks.jsonl" in names and "failures.jsonl" in names and "events.jsonl" in names
    assert any(n.endswith("tests.jsonl") for n in names) and any(n.endswith(".log") and n.startswith("logs/2") for n in names)
    hooks_log = open(os.path.join(state, "logs", "hooks.jsonl"), encoding="utf-8").read()
    assert hooks_log.count('"decision":"deny"') >= 2 and "REDACTED" in hooks_log
    kinds = [f["kind"] for f in p.failures()]
    assert "rollback" in kinds and "verify" in kinds, kinds
    # ... and nothing it wrote holds a planted secret
    for path in files_under(state):
        with open(path, "rb") as f:
            data = f.read()
        data.decode("utf-8")  # valid UTF-8 everywhere
        assert b"PLANTED" not in data, (path, data[max(0, data.find(b"PLANTED") - 200): data.find(b"PLANTED") + 50])
    messages = git(p.root, "log", "--format=%B", "--glob=refs/ralph/rollbacks/*")
    assert "Ralph-Trigger" in messages and "PLANTED" not in messages
    # the agent itself was told what it typed (the deny reason names its command)
    hooks_seen = open(os.path.join(p.agent_dir, "hooks-1.jsonl"), encoding="utf-8").read()
    assert "git push" in hooks_seen


def test_prompt_is_redacted_before_it_is_cut(repo: str) -> None:
    from ralph.claude.handlers.prompt import PROMPT_LOG_CHARS

    payload = load_payload("UserPromptSubmit", repo)
    payload["prompt"] = "a" * (PROMPT_LOG_CHARS - 15) + ANTHROPIC  # the key straddles the cut
    run_hook("prompt", payload, repo)
    logged = json.loads(open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl")).readlines()[-1])["prompt"]
    assert "sk-ant" not in logged and "api03" not in logged
    assert len(logged) <= PROMPT_LOG_CHARS


def raw_hook(subcommand: str, data: bytes, cwd: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG")}
    return subprocess.run([RALPH, subcommand], input=data, capture_output=True, cwd=cwd, env=env, timeout=300)


def log_lines(repo: str) -> list[bytes]:
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl"), "rb") as f:
        return f.read().splitlines()


def test_huge_fields_are_bounded_in_the_log(repo: str) -> None:
    payload = load_payload("PreToolUse_Bash", repo)
    payload["session_id"] = "s" * (2 * 1024 * 1024)
    payload["tool_input"] = {"command": "git push origin main " + "x" * (1024 * 1024)}
    proc = raw_hook("pre-tool", json.dumps(payload).encode(), repo)
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    payload["cwd"] = "/nonexistent/" + "c" * (2 * 1024 * 1024)
    raw_hook("pre-tool", json.dumps(payload).encode(), repo)
    lines = log_lines(repo)
    assert len(lines) == 2
    for line in lines:
        assert len(line) < 16 * 1024, len(line)
        json.loads(line)


def test_lone_surrogate_output_and_log_stay_valid_utf8(repo: str) -> None:
    payload = load_payload("PreToolUse_Bash", repo)
    payload["tool_input"] = {"command": "git push origin ma\ud800in"}
    data = json.dumps(payload).encode()  # ensure_ascii: the surrogate travels as \\ud800
    proc = raw_hook("pre-tool", data, repo)
    out = json.loads(proc.stdout.decode("utf-8"))  # strict: valid UTF-8
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    [line] = log_lines(repo)
    entry = json.loads(line.decode("utf-8"))
    assert entry["decision"] == "deny"


def test_sixty_megabyte_command_is_judged_on_a_bounded_prefix(repo: str) -> None:
    from ralph.claude.protocol import MAX_JUDGED_COMMAND

    command = "python -m pytest -q " + "a" * (60 * 1024 * 1024)
    post = load_payload("PostToolUse_Bash", repo)
    post["tool_input"] = {"command": command}
    post["tool_response"] = {"stdout": "1 passed in 0.01s\n", "stderr": "", "interrupted": False, "isImage": False}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = raw_hook("post-tool", json.dumps(post).encode(), repo)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert proc.returncode == 0 and json.loads(proc.stdout) == {}
    entry = json.loads(log_lines(repo)[-1])
    assert entry["command_cut"] == f"judged on the first {MAX_JUDGED_COMMAND} of {len(command)} characters"
    # memory: the payload itself (60 MB as bytes and as str) and little more
    if peak_kib > before:
        assert peak_kib < 700 * 1024, peak_kib
    pre = load_payload("PreToolUse_Bash", repo)
    pre["tool_input"] = {"command": command}
    out = json.loads(raw_hook("pre-tool", json.dumps(pre).encode(), repo).stdout)
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny" and "characters long" in reason


def test_iteration_log_redacts_across_chunks_and_key_blocks(tmp_path) -> None:
    from ralph.run.proc import RedactedLog

    path = tmp_path / "iteration.log"
    log = RedactedLog(open(path, "ab"))
    text = (f"run with ANTHROPIC_API_KEY={ANTHROPIC}\nkey follows:\n{PRIVATE_KEY}\nafter the key\n"
            f"no newline at the end {GITHUB}").encode()
    for start in range(0, len(text), 7):  # output arrives in arbitrary pieces
        log.write(text[start:start + 7])
    log.close()
    written = path.read_bytes().decode("utf-8")
    assert "PLANTED" not in written
    assert written.splitlines() == ["run with ANTHROPIC_API_KEY=[REDACTED:anthropic_key]", "key follows:",
                                    "[REDACTED:private_key]", "after the key", "no newline at the end [REDACTED:github_token]"]
