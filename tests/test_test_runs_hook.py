"""Bash test runs through the real entry point (`ralph post-tool-failure`,
`ralph post-tool`): feedback on failures, rollback only in a loop run, and
`ralph rollbacks` bringing the saved work back. The test output is real: a
tiny pytest project inside the temp repo, run for real."""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest

from ralph.claude.protocol import HookCall
from tests.conftest import RALPH, git, hold_loop_lock, load_payload, run_hook, hook_state_dir

HERE = os.path.dirname(os.path.abspath(__file__))
POLICY_FIXTURES = os.path.join(HERE, "fixtures", "rollback_policy")
CLIENT_PAYLOADS = os.path.join(HERE, "fixtures", "test_outcome", "client", "payloads")
POLICY_CASES = sorted(glob.glob(os.path.join(POLICY_FIXTURES, "*", "*.json")))
PYTEST = "pytest -q -p no:cacheprovider"
VENV_BIN = os.path.dirname(sys.executable)

CALC = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\ndef test_add_negative():\n    assert add(-1, -1) == -2\n"


@pytest.fixture
def project(repo: str) -> str:
    """The shared repo plus a passing pytest project, committed: the checkpoint."""
    write(repo, "calc.py", CALC)
    write(repo, "tests/test_calc.py", TESTS)
    write(repo, "conftest.py", "")
    write(repo, ".gitignore", "__pycache__/\n*.log\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "passing project")
    write(repo, "notes.log", "ignored, must survive everything\n")
    return repo


def write(repo: str, rel: str, text: str | bytes, mode: int | None = None) -> None:
    path = os.path.join(repo, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)
    if mode is not None:
        os.chmod(path, mode)


def write_run(repo: str, *, status: str = "running", stage: str = "build", checkpoint: str | None = None) -> dict:
    run = {
        "version": 1,
        "run_id": "run-7",
        "status": status,
        "iteration": 3,
        "story": {"id": "US-042", "title": "Subtraction", "criteria": ["sub works"], "source": ".ralph/plan.md"},
        "checkpoint": checkpoint or git(repo, "rev-parse", "HEAD").strip(),
        "started": "2026-11-21T00:00:00Z",
        "pid": 1,
        "stage": stage,
        "finish": None,
    }
    write(repo, ".ralph/run.json", json.dumps(run))
    write(repo, ".ralph/plan.md", "- [ ] US-042: Subtraction\n")
    hold_loop_lock(os.path.join(repo, ".ralph"))  # its loop is alive
    return run


def run_tests(repo: str, command: str = PYTEST) -> tuple[int, str]:
    """Run the test command for real, as the Bash tool would (stderr merged)."""
    env = {**os.environ, "PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(command, shell=True, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


def bash_hook(repo: str, command: str, code: int, output: str):
    """Feed one Bash result to the hook Claude Code would call for it."""
    if code != 0:
        payload = load_payload("PostToolUseFailure_Bash_exit3", repo)
        payload["tool_input"]["command"] = command
        payload["error"] = f"Exit code {code}\n{output}"
        return run_hook("post-tool-failure", payload, repo)
    payload = load_payload("PostToolUse_Bash", repo)
    payload["tool_input"]["command"] = command
    payload["tool_response"]["stdout"] = output
    return run_hook("post-tool", payload, repo)


def break_calc(repo: str, variant: int = 0) -> None:
    write(repo, "calc.py", f"def add(a, b):\n    return a - b  # attempt {variant}\n")


def rollback_refs(repo: str) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname)", "refs/ralph/rollbacks/").split()


def history(repo: str, *parts: str) -> list[dict]:
    path = os.path.join(hook_state_dir(repo), *parts)
    with open(path) as f:
        return [json.loads(line) for line in f]


def snapshot_files(repo: str) -> dict:
    found = {}
    for dirpath, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in (".git", ".ralph")]
        for name in files:
            full = os.path.join(dirpath, name)
            with open(full, "rb") as f:
                found[os.path.relpath(full, repo)] = (os.stat(full).st_mode & 0o777, f.read())
    return found


# ---- outside a loop run: feedback, never a rollback ----


def test_failing_run_outside_a_loop_gets_feedback_only(project: str) -> None:
    break_calc(project)
    before = snapshot_files(project)
    for attempt in range(5):
        code, output = run_tests(project)
        assert code == 1 and "FAILED tests/test_calc.py::test_add" in output
        result = bash_hook(project, PYTEST, code, output)
        assert set(result.output) == {"hookSpecificOutput"}, result.output
        assert result.output["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure"
        assert "pytest run failed (exit 1)" in result.context
        assert "tests/test_calc.py::test_add" in result.context and "test_add_negative" in result.context
        assert "Loop:" not in result.context
    assert snapshot_files(project) == before
    assert rollback_refs(project) == []
    [session] = os.listdir(os.path.join(hook_state_dir(project), "sessions"))
    records = history(project, "sessions", session, "tests.jsonl")
    assert [r["verdict"] for r in records] == ["fail"] * 5 and records[0]["runner"] == "pytest"


def test_finished_run_is_not_a_loop(project: str) -> None:
    write_run(project, status="finished")
    break_calc(project)
    for _ in range(4):
        result = bash_hook(project, PYTEST, *run_tests(project))
        assert "decision" not in result.output and "pytest run failed" in result.context
    assert rollback_refs(project) == []
    assert "a - b" in open(os.path.join(project, "calc.py")).read()


def test_passing_and_non_test_commands_say_nothing(project: str) -> None:
    write_run(project)
    code, output = run_tests(project)
    assert code == 0
    assert bash_hook(project, PYTEST, code, output).output == {}
    assert bash_hook(project, "ls -la", 0, "total 0\n").output == {}
    assert bash_hook(project, "grep -rn FAILED .", 1, "").output == {}
    [record] = history(project, "runs", "run-7", "tests.jsonl")
    assert record["verdict"] == "pass" and record["iteration"] == 3 and record["story"] == "US-042"


# ---- in a loop run: countdown, then rollback, then restore ----


def test_three_failures_roll_back_and_restore_brings_the_work_back(project: str) -> None:
    checkpoint = git(project, "rev-parse", "HEAD").strip()
    write_run(project)
    at_checkpoint = snapshot_files(project)
    # the agent's work: a broken edit, a new untracked module, a staged file, an exec script
    write(project, "sub.py", "def sub(a, b):\n    return a - b\n")
    write(project, "scripts/run me.sh", "#!/bin/sh\necho hi\n", 0o755)
    write(project, "data.bin", bytes(range(256)))
    git(project, "add", "data.bin")
    contexts = []
    for attempt in range(3):
        break_calc(project, attempt)
        code, output = run_tests(project)
        assert code == 1
        work = snapshot_files(project), git(project, "ls-files", "-s")
        result = bash_hook(project, PYTEST, code, output)
        contexts.append(result)
    first, second, third = contexts
    assert "decision" not in first.output and "1 of 3 failing runs in a row" in first.context and "2 more failing runs" in first.context
    assert checkpoint[:12] in first.context
    assert "2 of 3 failing runs in a row" in second.context and "the next failing run" in second.context

    assert third.output["decision"] == "block"
    [ref] = rollback_refs(project)
    snap_id = ref.rsplit("/", 1)[1]
    assert ref in third.reason and checkpoint[:12] in third.reason
    assert "re-read" in third.reason and "smaller step" in third.reason
    assert "tests/test_calc.py::test_add" in third.context
    # the tree is back at the checkpoint; ignored files and .ralph are untouched
    assert git(project, "rev-parse", "HEAD").strip() == checkpoint
    status = git(project, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert [line for line in status if ".ralph/" not in line] == []
    assert snapshot_files(project) == at_checkpoint
    assert os.path.exists(os.path.join(project, ".ralph", "run.json"))
    # everyone was told: failures for the next prompt, reads invalidated, the log line
    failure = history(project, "failures.jsonl")[-1]
    assert failure["kind"] == "rollback" and failure["ref"] == ref and failure["story"] == "US-042" and failure["iteration"] == 3
    assert failure["runner"] == "pytest" and "tests/test_calc.py::test_add" in failure["failing_tests"]
    assert "FAILED tests/test_calc.py::test_add" in failure["excerpt"]
    assert os.path.exists(os.path.join(project, ".ralph", "reads_epoch"))
    log = history(project, "logs", "hooks.jsonl")[-1]
    assert log["decision"] == "block" and log["rollback"]["ref"] == ref and log["test_verdict"] == "fail"
    markers = [r for r in history(project, "runs", "run-7", "tests.jsonl") if r["kind"] == "rollback"]
    assert len(markers) == 1 and markers[0]["restored"] is True

    # `ralph rollbacks list` shows it; `restore` brings the work back byte for byte
    listing = subprocess.run([RALPH, "rollbacks", "list"], cwd=project, capture_output=True, text=True)
    assert listing.returncode == 0 and snap_id in listing.stdout and "US-042" in listing.stdout
    as_json = subprocess.run([RALPH, "rollbacks", "list", "--json"], cwd=project, capture_output=True, text=True)
    row = json.loads(as_json.stdout.splitlines()[0])
    assert row["id"] == snap_id and row["iteration"] == "3" and row["files_changed"] == 4 and "3 consecutive failing runs" in row["trigger"]
    restore = subprocess.run([RALPH, "rollbacks", "restore", snap_id], cwd=project, capture_output=True, text=True)
    assert restore.returncode == 0, restore.stderr
    assert (snapshot_files(project), git(project, "ls-files", "-s")) == work
    # a fourth failure after the rollback starts a fresh count
    fourth = bash_hook(project, PYTEST, *run_tests(project))
    assert "decision" not in fourth.output and "1 of 3 failing runs in a row" in fourth.context


def test_masked_failure_on_post_tool_counts(project: str) -> None:
    """`pytest | tail` exits 0: it arrives on PostToolUse and still counts as the same command."""
    write_run(project)
    break_calc(project)
    command = PYTEST + " 2>&1 | tail -5"
    results = []
    for _ in range(2):
        code, output = run_tests(project, command)
        assert code == 0
        results.append(bash_hook(project, command, code, output))
    results.append(bash_hook(project, PYTEST, *run_tests(project)))
    assert results[0].output["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "1 of 3 failing runs in a row" in results[0].context
    assert results[2].output["decision"] == "block"
    assert "return a + b" in open(os.path.join(project, "calc.py")).read()


def test_immediate_policy_from_config(project: str) -> None:
    write(project, "ralph.toml", '[rollback]\npolicy = "immediate"\n')
    git(project, "add", "ralph.toml")
    git(project, "commit", "-q", "-m", "config")
    write_run(project)
    break_calc(project)
    result = bash_hook(project, PYTEST, *run_tests(project))
    assert result.output["decision"] == "block" and "policy immediate" in result.reason


def test_broken_config_falls_back_to_the_default(project: str) -> None:
    write(project, "ralph.toml", '[rollback]\npolicy = "sometimes"\n')
    write_run(project)
    break_calc(project)
    result = bash_hook(project, PYTEST, *run_tests(project))
    assert "1 of 3 failing runs in a row" in result.context
    log = history(project, "logs", "hooks.jsonl")[-1]
    assert any("ralph.toml:2: [rollback] policy: must be one of" in note and "'sometimes'" in note for note in log.get("notes", []))


def test_planning_iteration_is_never_rolled_back(project: str) -> None:
    write_run(project, stage="plan")
    break_calc(project)
    for _ in range(3):
        result = bash_hook(project, PYTEST, *run_tests(project))
        assert "decision" not in result.output
    assert rollback_refs(project) == []


def test_failed_rollback_leaves_the_work_and_says_so(project: str) -> None:
    write_run(project, checkpoint="0123456789abcdef0123456789abcdef01234567")
    write(project, "ralph.toml", "[rollback]\nmax_consecutive_failures = 1\n")
    break_calc(project)
    before = snapshot_files(project)
    result = bash_hook(project, PYTEST, *run_tests(project))
    assert "decision" not in result.output
    assert "tried to roll back" in result.context and "not a commit" in result.context
    assert snapshot_files(project) == before and rollback_refs(project) == []
    failure = history(project, "failures.jsonl")[-1]
    assert failure["kind"] == "rollback_failed"


def test_dirty_submodule_refuses_the_rollback(project: str, tmp_path) -> None:
    sub_src = tmp_path / "subsrc"
    sub_src.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(sub_src)], check=True)
    write(str(sub_src), "lib.txt", "v1\n")
    git(str(sub_src), "add", "-A")
    git(str(sub_src), "commit", "-q", "-m", "lib")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub_src), "vendor/lib")
    git(project, "commit", "-q", "-m", "submodule")
    write(project, "ralph.toml", "[rollback]\nmax_consecutive_failures = 1\n")
    write_run(project)
    write(project, "vendor/lib/lib.txt", "work inside the submodule\n")
    break_calc(project)
    result = bash_hook(project, PYTEST, *run_tests(project))
    assert "decision" not in result.output and "vendor/lib" in result.context and "submodule" in result.context
    assert open(os.path.join(project, "vendor/lib/lib.txt")).read() == "work inside the submodule\n"
    assert "a - b" in open(os.path.join(project, "calc.py")).read()


# ---- the policy fixture cases, run through the real entry point ----


def captured_run(name: str) -> tuple[str, int, str]:
    base = os.path.join(POLICY_FIXTURES, "outputs", name)
    with open(base + ".cmd") as f, open(base + ".exit") as g, open(base + ".txt") as h:
        return f.read().strip(), int(g.read()), h.read()


def stop_call(repo: str) -> HookCall:
    payload = load_payload("Stop_after_block_stop_hook_active_true", repo)
    return HookCall("Stop", payload, {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG")})


@pytest.mark.parametrize("path", POLICY_CASES, ids=[os.path.relpath(p, POLICY_FIXTURES) for p in POLICY_CASES])
def test_policy_case_through_the_hook(project: str, path: str) -> None:
    from ralph.claude.bash_results import rollback_at_stop
    from ralph.run.state import load_active_run

    with open(path) as f:
        case = json.load(f)
    if case["config"]:
        lines = [f"{key} = {json.dumps(value)}" for key, value in case["config"].items()]
        write(project, "ralph.toml", "[rollback]\n" + "\n".join(lines) + "\n")
    write_run(project)
    for number, step in enumerate(case["steps"], 1):
        write(project, "work_in_progress.txt", f"step {number}\n")  # something for a rollback to save
        if step.get("stop"):
            call = stop_call(project)
            message = rollback_at_stop(call, load_active_run(call.state_dir))
            rolled_back = message is not None and "rolled" in message and "did not" not in message
        else:
            command, code, output = captured_run(step["run"])
            command = step.get("command", command)
            result = bash_hook(project, command, code, output)
            rolled_back = result.output.get("decision") == "block"
            assert "pytest run failed" in result.context or code == 0 and "fail" not in step["run"]
        assert rolled_back == step["rollback"], f"step {number}: {step}"
        assert os.path.exists(os.path.join(project, "work_in_progress.txt")) != rolled_back, f"step {number}"


def test_a_bash_call_that_runs_no_tests_loads_no_verdict_or_git_code(project: str) -> None:
    """Most Bash calls run no tests: their PostToolUse stays cheap (no history,
    no rollback, no subprocess, no TOML); a test run loads the judging code."""
    write_run(project)
    code, output = run_tests(project)
    loaded = {}
    for command in ("ls -la", PYTEST):
        payload = load_payload("PostToolUse_Bash", project) | {"tool_input": {"command": command}}
        payload["tool_response"]["stdout"] = output
        done = subprocess.run([sys.executable, "-X", "importtime", RALPH, "post-tool"], input=json.dumps(payload), capture_output=True,
                              text=True, cwd=project, env={k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"})
        assert done.returncode == 0 and isinstance(json.loads(done.stdout), dict), done.stderr
        loaded[command] = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    heavy = {"subprocess", "ralph.rollback", "ralph.claude.bash_results", "tomllib"}
    assert not loaded["ls -la"] & heavy, sorted(loaded["ls -la"] & heavy)
    assert {"ralph.claude.bash_results", "subprocess"} <= loaded[PYTEST], sorted(loaded[PYTEST])


def test_rollbacks_command_errors_are_clear(project: str, tmp_path) -> None:
    empty = subprocess.run([RALPH, "rollbacks", "list"], cwd=project, capture_output=True, text=True)
    assert empty.returncode == 0 and "no saved work" in empty.stdout
    write(project, "wip.txt", "by hand\n")
    saved = subprocess.run([RALPH, "rollbacks", "save", "before lunch"], cwd=project, capture_output=True, text=True)
    assert saved.returncode == 0 and "nothing was reset" in saved.stdout
    assert os.path.exists(os.path.join(project, "wip.txt"))
    [ref] = rollback_refs(project)
    listing = subprocess.run([RALPH, "rollbacks"], cwd=project, capture_output=True, text=True)
    assert "before lunch" in listing.stdout and ref in listing.stdout
    unknown = subprocess.run([RALPH, "rollbacks", "restore", "nope"], cwd=project, capture_output=True, text=True)
    assert unknown.returncode == 1 and "known ids: " + ref.rsplit("/", 1)[1] in unknown.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    outside = subprocess.run([RALPH, "rollbacks", "list"], cwd=plain, capture_output=True, text=True)
    assert outside.returncode == 1 and "not inside a git work tree" in outside.stderr


# ---- outputs the client cut ----

NOISY_TESTS = (
    "def test_prints_a_lot():\n"
    "    for i in range(70000):\n"
    "        print(f'line {i:06d} of a chatty test: some log text to make the output large ........')\n\n\n"
    "def test_fails_at_the_end():\n"
    "    assert 2 + 2 == 5\n"
)


def test_persisted_output_is_read_and_judged_whole(project: str, tmp_path) -> None:
    """Over ~30,000 characters the client passes the start of stdout plus persistedOutputPath:
    the hook reads the file (tail first) and finds the summary the cut stdout lacks."""
    write(project, "tests/test_noisy.py", NOISY_TESTS)
    command = PYTEST + " -s tests/test_noisy.py; true"
    code, output = run_tests(project, command)
    assert code == 0 and len(output) > 5_000_000 and "1 failed, 1 passed" in output[-300:]
    persisted = tmp_path / "tool-results" / "b1.txt"
    persisted.parent.mkdir()
    persisted.write_text(output)
    # the shape the real client sent in tests/e2e/test_e2e_test_outcome.py (stdout: first 30,000 chars)
    with open(os.path.join(CLIENT_PAYLOADS, "PostToolUse_Bash_persisted_5MB.json")) as f:
        payload = json.load(f)
    assert len(payload["tool_response"]["stdout"]) == 30_000 and payload["tool_response"]["persistedOutputSize"] > 5_000_000
    payload.update(cwd=project, session_id="s-persisted")
    payload["tool_input"]["command"] = command
    payload["tool_response"].update(stdout=output[:30_000], persistedOutputPath=str(persisted), persistedOutputSize=len(output))
    result = run_hook("post-tool", payload, project)
    assert "pytest run failed" in result.context and "test_fails_at_the_end" in result.context, result.output
    # without the file the cut stdout alone says nothing about the outcome
    payload["tool_response"]["persistedOutputPath"] = str(tmp_path / "missing.txt")
    missing = run_hook("post-tool", payload, project)
    assert "could not tell whether this test run passed" in missing.context and "could not be read" in missing.context


def test_real_cut_failure_payload_gets_the_cut_note(project: str) -> None:
    """The PostToolUseFailure payload the real client sent for a 5 MB failing run (first ~10 KB, no path)."""
    with open(os.path.join(CLIENT_PAYLOADS, "PostToolUseFailure_Bash_cut_10KB.json")) as f:
        payload = json.load(f)
    payload.update(cwd=project)
    result = run_hook("post-tool-failure", payload, project)
    # pytest's own exit status (1: tests failed) still decides; the note says what was not seen
    assert "pytest run failed (exit 1)" in result.context and "only the first ~10 KB" in result.context


def test_failure_output_cut_by_the_client_is_said(project: str) -> None:
    """PostToolUseFailure carries only the first ~10 KB and no path: judge that, and say it was cut."""
    write(project, "tests/test_noisy.py", NOISY_TESTS.replace("70000", "2000"))
    code, output = run_tests(project, PYTEST + " -s -v tests/test_noisy.py")
    assert code == 1
    head = output[:10_000]
    assert "1 failed" not in head
    result = bash_hook(project, PYTEST + " -s -v tests/test_noisy.py", code, head)
    assert "only the first ~10 KB" in result.context
    [record] = [r for r in history(project, "sessions", os.listdir(os.path.join(hook_state_dir(project), "sessions"))[0], "tests.jsonl")]
    assert record["output_cut"] is True


# ---- the baseline: failures already there at the checkpoint ----


def test_failures_already_failing_at_the_checkpoint_never_roll_back(project: str) -> None:
    # the checkpoint itself has a failing test
    write(project, "tests/test_legacy.py", "def test_legacy_bug():\n    assert 1 == 2\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "checkpoint with a known failure")
    write_run(project)
    first = bash_hook(project, PYTEST, *run_tests(project))
    assert "decision" not in first.output
    assert "Baseline:" in first.context and "before anything changed" in first.context
    # the agent works; the same old test keeps failing: never a rollback, however often
    write(project, "sub.py", "def sub(a, b):\n    return a - b\n")
    for _ in range(4):
        result = bash_hook(project, PYTEST, *run_tests(project))
        assert "decision" not in result.output, result.output
        assert "1 failing, all already failing at the checkpoint" in result.context
    assert rollback_refs(project) == []
    # the Stop gate does not hold the stop for it
    stop = run_hook("stop", load_payload("Stop", project), project)
    assert "last test run failed" not in json.dumps(stop.output)
    # a NEW failure counts: three in a row roll back
    break_calc(project)
    results = [bash_hook(project, PYTEST, *run_tests(project)) for _ in range(3)]
    assert "3 failing: 2 new (tests/test_calc.py::test_add" in results[0].context and "already failing at the checkpoint" in results[0].context
    assert "1 of 3 failing runs in a row" in results[0].context
    assert results[2].output["decision"] == "block"
    assert len(rollback_refs(project)) == 1


def test_a_failure_made_after_the_first_edit_is_never_baseline(project: str) -> None:
    write_run(project)
    break_calc(project)  # the agent broke it before its first test run
    results = [bash_hook(project, PYTEST, *run_tests(project)) for _ in range(3)]
    assert "Baseline:" not in results[0].context
    assert results[2].output["decision"] == "block"
    records = [r for r in history(project, "runs", "run-7", "tests.jsonl") if r["kind"] == "test"]
    assert records[0]["at_checkpoint"] is False and not any(r.get("baseline_only") for r in records)


def test_baseline_off_in_config(project: str) -> None:
    write(project, "tests/test_legacy.py", "def test_legacy_bug():\n    assert 1 == 2\n")
    write(project, "ralph.toml", '[tests]\nbaseline = "off"\n')
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "checkpoint with a known failure")
    write_run(project)
    write(project, "sub.py", "def sub(a, b):\n    return a - b\n")
    results = [bash_hook(project, PYTEST, *run_tests(project)) for _ in range(3)]
    assert "Baseline:" not in results[0].context
    assert results[2].output["decision"] == "block"


# ---- [tests]: a project's own test commands ----


def test_declared_test_command_and_patterns(project: str) -> None:
    write(project, "ralph.toml", '[tests]\ncommands = ["./ci/check-all"]\nfail_patterns = ["^BROKEN: [1-9]"]\n')
    write(project, "ci/check-all", "#!/bin/sh\necho 'suite A ... fine'\necho 'BROKEN: 2 of 9'\n", 0o755)
    code, output = run_tests(project, "./ci/check-all --fast")
    assert code == 0
    result = bash_hook(project, "./ci/check-all --fast", code, output)
    assert "The project run failed" in result.context and "BROKEN: 2 of 9" in result.context
    # an undeclared command printing the same line is not a test run
    assert bash_hook(project, "./ci/other", 1, output).output == {}


def test_a_plain_command_of_a_program_that_runs_no_tests_is_not_parsed(project: str) -> None:
    result = bash_hook(project, "git status", 0, "nothing to commit, working tree clean\n")
    assert result.output == {}
    last = history(project, "logs", "hooks.jsonl")[-1]
    assert last.get("tests") == "plain command", last


def test_a_declared_command_is_judged_even_when_it_looks_plain(project: str) -> None:
    # the fast path is off in a project with a ralph.toml: its [tests] may name any program
    write(project, "ralph.toml", '[tests]\ncommands = ["ls"]\nfail_patterns = ["^BROKEN: [1-9]"]\n')
    result = bash_hook(project, "ls -la", 0, "total 8\nBROKEN: 1 of 2\n")
    assert "The project run failed" in result.context and "BROKEN: 1 of 2" in result.context


def test_broken_tests_config_is_named_with_its_line(project: str) -> None:
    write(project, "ralph.toml", '[loop]\nmax_iterations = 3\n\n[tests]\ncommands = "make check"\n')
    break_calc(project)
    result = bash_hook(project, PYTEST, *run_tests(project))
    assert "pytest run failed" in result.context  # the verdict still works on defaults
    log = history(project, "logs", "hooks.jsonl")[-1]
    assert any("ralph.toml:5: [tests] commands" in n for n in log.get("notes", [])), log


# ---- the next prompt: only this story's failures ----


def test_prompt_shows_only_the_current_story_failures(project: str) -> None:
    from ralph.run.failures import record_failure

    write_run(project)  # story US-042
    state = os.path.join(project, ".ralph")
    record_failure(state, {"run_id": "run-7", "iteration": 1, "story": "US-001", "kind": "rollback", "summary": "rolled back US-001 work"})
    record_failure(state, {"run_id": "run-7", "iteration": 2, "story": "US-042", "kind": "verify", "summary": "verify failed for US-042"})
    result = run_hook("prompt", load_payload("UserPromptSubmit", project), project)
    assert "verify failed for US-042" in result.context
    assert "US-001" not in result.context


def test_loop_verify_at_iteration_start_is_the_baseline(tmp_path) -> None:
    """`[tests] baseline = "verify"`: ralph-loop runs the verify command before the agent;
    what fails then never rolls the agent back, through the real hooks."""
    from tests.loop_support import Project

    pytest_cmd = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    config = f'[loop]\nverify_command = "{pytest_cmd}"\n\n[tests]\nbaseline = "verify"\n'
    p = Project(tmp_path, "- [ ] US-001: Add sub\n", config=config)
    p.write("tests/test_legacy.py", "def test_legacy_bug():\n    assert 1 == 2\n")
    p.write("tests/test_ok.py", "def test_ok():\n    assert True\n")
    git(p.root, "add", "-A")
    git(p.root, "commit", "-q", "-m", "known failure")
    run = [{"write": "sub.py", "text": "def sub(a, b):\n    return a - b\n"}] + [{"run": pytest_cmd}] * 4
    p.script(runs=[run], hooks=["bash"])
    p.run_loop("--once")
    records = [json.loads(line) for path in glob.glob(os.path.join(p.root, ".ralph", "runs", "*", "tests.jsonl")) for line in open(path)]
    baseline = [r for r in records if r["kind"] == "baseline"]
    assert len(baseline) == 1 and baseline[0]["verdict"] == "fail" and baseline[0]["failing_tests"] == ["tests/test_legacy.py::test_legacy_bug"]
    runs = [r for r in records if r["kind"] == "test"]
    assert len(runs) == 4 and all(r["baseline_only"] for r in runs), runs
    assert not [r for r in records if r["kind"] == "rollback"]
    assert git(p.root, "for-each-ref", "refs/ralph/rollbacks/") == ""


def test_run_moved_to_the_background_is_never_a_pass(project: str) -> None:
    """2.1.330: past its timeout a Bash command goes on in the background and the hook
    gets PostToolUse with `timedOutAfterMs`, `backgroundTaskId` and the output so far
    (shape captured through the real client). No exit status yet: never `pass`."""
    with open(os.path.join(CLIENT_PAYLOADS, "PostToolUse_Bash_timed_out_to_background.json")) as f:
        payload = json.load(f)
    assert payload["tool_response"]["timedOutAfterMs"] and payload["tool_response"]["backgroundTaskId"]
    payload.update(cwd=project)
    write_run(project)
    result = run_hook("post-tool", payload, project)
    assert "could not tell whether this test run passed" in result.context and "moved it to the background" in result.context
    [record] = history(project, "runs", "run-7", "tests.jsonl")
    assert record["verdict"] == "unknown" and record["exit_code"] is None
    # with a failure already visible in the output so far, it is a failing run
    payload["tool_response"]["stdout"] += " FAILED\ntest_slow.py::test_later "
    failing = run_hook("post-tool", payload, project)
    assert "pytest run failed" in failing.context and "moved it to the background" in failing.context
