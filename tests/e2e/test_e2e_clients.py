"""The clients users really run, through the real CLI: the suite's own client
(RALPH_CLAUDE_VERSION, default the newest 2.1) and the last 2.0, which
scripts/test installs and drives, and -- marked old_clients, so deselected
unless `-m` names the marker (docs/development.md) -- the last 1.0 and the
last 2.0 before PostToolUseFailure (installed from npm on first use).

Hooks come only from the files the client finds itself (`ralph install
--user` into a fresh HOME, no --settings flag). Old clients report no hook
events in their stream, so each test reads what our handlers logged
(hooks.jsonl) and what the model was told (the scripted API's requests).
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest

from ralph.claude.protocol import HOOK_ENTRIES, client_release, events_of

from . import harness
from .harness import bash, make_bare_remote, make_repo, text, write_active_run

pytestmark = pytest.mark.e2e
OLD = pytest.mark.old_clients  # a release only `-m old_clients` drives

LAST_1_0, BEFORE_FAILURE_EVENT = harness.OLD_RELEASES
LAST_2_0 = harness.SECOND_VERSION
# the releases every hook event is driven on: the suite's client and the last 2.0
SUITES_CLIENTS = list(dict.fromkeys([harness.client_version(), LAST_2_0]))
RALPH = os.path.join(harness.ralph_bin_dir(), "ralph")
PUSH = "git push origin main"
FAILING_TEST_PROJECT = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
}
NOISY_PROJECT = {
    "test_noisy.py": (
        "def test_prints_a_lot():\n"
        "    for i in range(40000):\n"
        "        print(f'line {i:06d} of a chatty test')\n\n\n"
        "def test_fails_at_the_end():\n"
        "    assert 2 + 2 == 5\n"
    ),
}


def client_events_script():
    spec = importlib.util.spec_from_file_location("client_events", harness.REPO_ROOT / "scripts" / "client_events.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fresh_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    return home


def ralph(args: list[str], home: Path, cwd: Path, binary: str) -> subprocess.CompletedProcess:
    """`ralph ...` as a user runs it, with `binary`'s directory on PATH (so `claude` is that client)."""
    return subprocess.run([RALPH, *args], capture_output=True, text=True, cwd=cwd, env=harness.client_env(home, None, binary), timeout=600)


def session(repo: Path, home: Path, binary: str, turns: list[dict], prompt: str = "Do the task.") -> harness.ScenarioResult:
    """`claude -p` in `repo` with HOME=home and NO --settings flag."""
    command = [binary, "-p", prompt, *harness.client_flags(binary)]
    run_dir = repo.parent / f"clients-run-{len(harness.RESULTS) + 1}-{os.getpid()}"
    run_dir.mkdir()
    return harness.run_with_server(command, repo, turns, env=harness.client_env(home, None, binary), run_dir=run_dir,
                                   result_class=harness.ScenarioResult, timeout=180)


def push_project(tmp_path: Path, files: dict[str, str] | None = None) -> tuple[Path, Path, str]:
    repo = make_repo(tmp_path, files=files)
    remote = make_bare_remote(repo)
    (repo / "feature.txt").write_text("new work\n", encoding="utf-8")
    harness.git(repo, "add", "feature.txt")
    harness.git(repo, "commit", "-q", "-m", "local work a push would publish")
    return repo, remote, harness.git(remote, "for-each-ref")


def decisions(result: harness.RunResult, event: str, tool: str | None = None) -> list[str]:
    return [e.get("decision") for e in result.hooks_log() if e.get("event") == event and (tool is None or e.get("tool") == tool)]


def user_settings(home: Path) -> dict:
    return json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))


@pytest.fixture(params=SUITES_CLIENTS)
def client_bin(request) -> str:
    """The binary of one of SUITES_CLIENTS (the suite's own honours RALPH_CLAUDE_BIN)."""
    return harness.require_claude(None if request.param == harness.client_version() else request.param)


# ---- the releases' own code ------------------------------------------------------------


@pytest.mark.parametrize("version", [pytest.param(LAST_1_0, marks=OLD), LAST_2_0, None])
def test_the_event_table_is_what_each_clients_own_code_accepts(version):
    binary = harness.require_claude(version)
    bundle = binary
    package = Path(binary).resolve().parent  # a cli.js client: node_modules/@anthropic-ai/claude-code/
    if (package / "cli.js").is_file():
        bundle = str(package / "cli.js")
    found = client_events_script().read_bundle(bundle)
    done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=120)
    release = client_release(done.stdout)
    assert release is not None, done.stdout
    assert set(found["events"]) == events_of(release), (release, found["events"])


# ---- 1.0.x: a file naming PostToolUseFailure runs no hook at all -----------------------------


@OLD
def test_1_0_runs_no_hook_from_a_file_that_names_an_event_it_does_not_know(tmp_path):
    """The client's behaviour that broke every install on 1.0.x (a fact of the client)."""
    binary = harness.require_claude(LAST_1_0)
    home = fresh_home(tmp_path)
    repo, remote, refs = push_project(tmp_path)
    (home / ".claude" / "settings.json").write_text(json.dumps(harness.hook_settings()), encoding="utf-8")  # all five events
    result = session(repo, home, binary, [bash(PUSH, "Push", id="t_push"), text("Pushed.")])
    assert result.exit_code == 0, result.describe()
    assert not result.tool_result("t_push")["is_error"] and harness.git(remote, "for-each-ref") != refs  # the push landed
    assert result.hooks_log() == [], result.describe()  # not one hook ran


@OLD
@pytest.mark.parametrize("version", [LAST_1_0, BEFORE_FAILURE_EVENT])
def test_before_the_failure_event_a_failing_command_reaches_no_hook(tmp_path, version):
    """What doctor tells users of these releases: no feedback on a failing run."""
    binary = harness.require_claude(version)
    home = fresh_home(tmp_path)
    repo = make_repo(tmp_path, files=FAILING_TEST_PROJECT)
    assert ralph(["install", "--user"], home, repo, binary).returncode == 0
    turns = [bash("python -m pytest -q -p no:cacheprovider test_calc.py", "Run the tests", id="t_fail"),
             bash("python -m pytest -q -p no:cacheprovider test_calc.py || true", "Run them again", id="t_masked"), text("Done.")]
    result = session(repo, home, binary, turns, prompt="Run the tests.")
    assert result.tool_result("t_fail")["is_error"] and not result.tool_result("t_masked")["is_error"], result.describe()
    assert decisions(result, "PreToolUse", "Bash") == ["allow", "allow"]
    assert decisions(result, "PostToolUse", "Bash") == ["context"]  # only the command that exited 0
    assert not decisions(result, "PostToolUseFailure")


@OLD
def test_ralph_install_on_1_0_writes_only_its_events_and_the_session_is_protected(tmp_path):
    binary = harness.require_claude(LAST_1_0)
    home = fresh_home(tmp_path)
    repo, remote, refs = push_project(tmp_path)
    installed = ralph(["install", "--user"], home, repo, binary)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert set(user_settings(home)["hooks"]) == {"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"}
    assert f"Claude Code {LAST_1_0}" in installed.stdout and "not writing PostToolUseFailure" in installed.stdout
    assert "no feedback from ralph and no rollback" in installed.stdout

    result = session(repo, home, binary, [bash(PUSH, "Push", id="t_push"), text("Refused.")])
    assert result.exit_code == 0, result.describe()
    told = result.tool_result("t_push")
    assert told["is_error"] and "ralph-hooks blocked this command" in told["content"], told
    assert harness.git(remote, "for-each-ref") == refs, "the push ran"
    assert decisions(result, "PreToolUse", "Bash") == ["deny"] and decisions(result, "UserPromptSubmit") and decisions(result, "Stop")


@OLD
def test_doctor_on_1_0_catches_the_dropped_hooks_then_passes_with_what_is_missing(tmp_path):
    binary = harness.require_claude(LAST_1_0)
    home = fresh_home(tmp_path)
    repo = make_repo(tmp_path)
    (home / ".claude" / "settings.json").write_text(json.dumps(harness.hook_settings(), indent=2), encoding="utf-8")
    broken = ralph(["doctor"], home, repo, binary)
    assert broken.returncode == 1 and "all checks passed" not in broken.stdout, broken.stdout
    assert "hooks.PostToolUseFailure: Claude Code 1.0.128 has no such event" in broken.stdout
    assert "NONE of the file's hooks" in broken.stdout
    assert f"`{PUSH}` ran in the session and landed in the scratch remote" in broken.stdout, broken.stdout

    assert ralph(["install", "--user"], home, repo, binary).returncode == 0
    doctor = ralph(["doctor"], home, repo, binary)
    assert doctor.returncode == 0, doctor.stdout
    assert "all checks passed: a real Claude Code session ran ralph's hooks" in doctor.stdout
    assert "[ok  ] session: Claude Code 1.0.128 ran ralph's PreToolUse, PostToolUse, UserPromptSubmit, Stop hooks" in doctor.stdout
    assert ("[WARN] client: Claude Code 1.0.128 has no PostToolUseFailure (it came in 2.0.56) and runs no hook at all for a Bash "
            "command that exits non-zero: a failing test run gets no feedback from ralph and no rollback") in doctor.stdout
    assert 'ignores "onFailure"' in doctor.stdout


# ---- 2.0.x -------------------------------------------------------------------------------------


@OLD
def test_a_plugin_written_for_2_0_55_protects_its_sessions(tmp_path):
    """2.0.25 - 2.0.55 take --plugin-dir but run none of a plugin's hooks when its
    hooks.json names PostToolUseFailure: `ralph install --plugin` writes the
    events the client knows."""
    binary = harness.require_claude(BEFORE_FAILURE_EVENT)
    home = fresh_home(tmp_path)
    repo, remote, refs = push_project(tmp_path)
    plugin = tmp_path / "plugin"
    written = ralph(["install", "--plugin", str(plugin)], home, repo, binary)
    assert written.returncode == 0, written.stdout + written.stderr
    assert "PostToolUseFailure" not in json.loads((plugin / "hooks" / "hooks.json").read_text())["hooks"]
    command = [binary, "-p", "Publish the work.", *harness.client_flags(binary), "--plugin-dir", str(plugin)]
    run_dir = tmp_path / "plugin-run"
    run_dir.mkdir()
    result = harness.run_with_server(command, repo, [bash(PUSH, "Push", id="t_push"), text("Refused.")],
                                     env=harness.client_env(home, None, binary), run_dir=run_dir, result_class=harness.ScenarioResult, timeout=180)
    assert "ralph-hooks blocked this command" in result.tool_result("t_push")["content"], result.describe()
    assert harness.git(remote, "for-each-ref") == refs, "the push ran"


def test_2_0_another_bash_hook_takes_the_deny_reason_doctor_warns_and_the_deny_holds(tmp_path):
    binary = harness.require_claude(LAST_2_0)
    home = fresh_home(tmp_path)
    repo, remote, refs = push_project(tmp_path)
    assert ralph(["install", "--user"], home, repo, binary).returncode == 0
    settings = user_settings(home)
    # another tool's Bash guard that allows, and answers after ralph's
    other = {"matcher": "Bash", "hooks": [{"type": "command", "command": "sleep 2; echo '{}'", "timeout": 30}]}
    settings["hooks"]["PreToolUse"].insert(0, other)
    (home / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")

    result = session(repo, home, binary, [bash(PUSH, "Push", id="t_push"), text("Refused.")])
    told = result.tool_result("t_push")
    assert told == {"content": "Hook PreToolUse:Bash denied this tool", "is_error": True, "request": 1}, result.describe()
    assert harness.git(remote, "for-each-ref") == refs, "the push ran"
    assert decisions(result, "PreToolUse", "Bash") == ["deny"]

    doctor = ralph(["doctor"], home, repo, binary)
    assert doctor.returncode == 0, doctor.stdout
    assert "tells the model the reason of whichever matching PreToolUse hook finished last" in doctor.stdout
    assert "sleep 2; echo '{}'" in doctor.stdout and "(>= 2.1.105)" in doctor.stdout
    assert "the push was denied, but the model was told 'Hook PreToolUse:Bash denied this tool'" in doctor.stdout


def test_2_0_cuts_a_long_output_and_the_feedback_says_the_verdict_is_incomplete(tmp_path):
    binary = harness.require_claude(LAST_2_0)
    home = fresh_home(tmp_path)
    repo = make_repo(tmp_path, files=NOISY_PROJECT)
    assert ralph(["install", "--user"], home, repo, binary).returncode == 0
    masked = "python -m pytest -s -q -p no:cacheprovider test_noisy.py; true"
    result = session(repo, home, binary, [bash(masked, "Run the tests", id="t_tests"), text("Done.")], prompt="Run the tests.")
    output = result.tool_result("t_tests")["content"]
    assert "lines truncated] ..." in output and "1 failed" not in output, output[-300:]  # the client cut the summary away
    said = result.new_text(1)
    assert "Claude Code cut this output" in said and "no path to the rest, so this verdict is incomplete" in said, said[-3000:]
    assert decisions(result, "PostToolUse", "Bash") == ["context"], result.describe()


# ---- the suite's client (newest 2.1 by default) and the last 2.0 --------------------------------


def test_the_hook_protocol_on_the_suites_client(tmp_path, client_bin):
    """Every event ralph answers, in one session, installed by `ralph install`:
    the prompt gets the story, a push is denied with ralph's reason, a failing
    test run reaches the model with the failing test named, Stop blocks."""
    home = fresh_home(tmp_path)
    repo, remote, refs = push_project(tmp_path, FAILING_TEST_PROJECT)
    write_active_run(repo, "US-042", "Make add() add", ["test_calc passes"])
    installed = ralph(["install", "--user"], home, repo, client_bin)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    release = client_release(subprocess.run([client_bin, "--version"], capture_output=True, text=True, timeout=120).stdout)
    assert set(user_settings(home)["hooks"]) == set(HOOK_ENTRIES) & events_of(release)
    turns = [bash(PUSH, "Push", id="t_push"), bash("python -m pytest -q -p no:cacheprovider test_calc.py", "Run the tests", id="t_tests"),
             text("Done."), text("Still open.")]
    result = session(repo, home, client_bin, turns, prompt="Work on the story.")

    assert result.exit_code == 0, result.describe()
    assert "US-042" in result.request_text(0) and "Make add() add" in result.request_text(0)
    assert decisions(result, "UserPromptSubmit") == ["context"]
    assert "ralph-hooks blocked this command" in result.tool_result("t_push")["content"] and harness.git(remote, "for-each-ref") == refs
    assert decisions(result, "PreToolUse", "Bash") == ["deny", "allow"]
    assert decisions(result, "PostToolUseFailure", "Bash") == ["context"]
    tests_told = result.new_text(result.tool_result("t_tests")["request"])
    assert "pytest run failed" in tests_told and "test_add" in tests_told, tests_told[-2000:]
    assert decisions(result, "Stop")[0] == "block"
    stop_reason = next(e["reason"] for e in result.hooks_log() if e.get("event") == "Stop")
    assert stop_reason[:200] in result.request_text(len(result.main_requests) - 1)


def test_install_doctor_uninstall_on_the_suites_client_leave_no_trace(tmp_path, client_bin):
    home = fresh_home(tmp_path)
    repo = make_repo(tmp_path)
    before = sorted(os.listdir(home / ".claude"))
    assert ralph(["install", "--user"], home, repo, client_bin).returncode == 0
    doctor = ralph(["doctor"], home, repo, client_bin)
    assert doctor.returncode == 0 and "all checks passed: a real Claude Code session ran ralph's hooks" in doctor.stdout, doctor.stdout
    assert "`git push origin main` was denied" in doctor.stdout
    release = client_release(subprocess.run([client_bin, "--version"], capture_output=True, text=True, timeout=120).stdout)
    if "PreSkillShellCommand" in events_of(release):
        # the round trip and the session's skill, whose inline shell line pushes
        assert "[ok  ] round trip: PreSkillShellCommand:" in doctor.stdout, doctor.stdout
        assert "denied (as a Bash call and as a skill's shell line)" in doctor.stdout, doctor.stdout
    done = ralph(["uninstall", "--user"], home, repo, client_bin)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(home / ".claude")) == before and sorted(os.listdir(home)) == [".claude"]
