"""`ralph install` and the plugin, proven through the real Claude Code CLI:
no --settings flag anywhere, only the files the client finds by itself."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from . import harness
from .harness import bash, make_bare_remote, make_repo, text

pytestmark = pytest.mark.e2e

RALPH = os.path.join(harness.ralph_bin_dir(), "ralph")


def fresh_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    return home


def ralph(args: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = harness.client_env(home)
    return subprocess.run([RALPH, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def run_client(repo: Path, home: Path, turns: list[dict], extra_args: tuple[str, ...] = ()) -> harness.ScenarioResult:
    """`claude -p` in `repo` with HOME=home and NO --settings flag."""
    binary = harness.require_claude()
    command = [binary, "-p", "Publish the work.", *harness.client_flags(binary), *extra_args]
    run_dir = tmp_run_dir(repo)
    return harness.run_with_server(command, repo, turns, env=harness.client_env(home, None, binary), run_dir=run_dir,
                                   result_class=harness.ScenarioResult, timeout=90)


def tmp_run_dir(repo: Path) -> Path:
    number = len(harness.RESULTS) + 1
    run_dir = repo.parent / f"install-run-{number}-{os.getpid()}"
    run_dir.mkdir()
    return run_dir


def push_scenario(tmp_path: Path) -> tuple[Path, Path, str]:
    repo = make_repo(tmp_path)
    remote = make_bare_remote(repo)
    (repo / "feature.txt").write_text("new work\n", encoding="utf-8")
    harness.git(repo, "add", "feature.txt")
    harness.git(repo, "commit", "-q", "-m", "local work a push would publish")
    return repo, remote, harness.git(remote, "for-each-ref")


def assert_push_denied(result: harness.ScenarioResult, remote: Path, refs_before: str) -> None:
    assert result.exit_code == 0, result.describe()
    tool = result.tool_result("t_push")
    assert tool["is_error"] and "PreToolUse:Bash hook error" in tool["content"] and "push" in tool["content"], result.describe()
    assert harness.git(remote, "for-each-ref") == refs_before, "the push ran"
    harness.assert_hooks_answered_cleanly(result)


def test_ralph_install_user_alone_protects_a_session(tmp_path, claude_bin):
    home = fresh_home(tmp_path)
    repo, remote, refs = push_scenario(tmp_path)
    installed = ralph(["install", "--user"], home, repo)
    assert installed.returncode == 0, installed.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert "PreToolUse" in settings["hooks"]

    doctor = ralph(["doctor"], home, repo)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert f"Claude Code {harness.client_version()} (" in doctor.stdout
    assert "all checks passed: a real Claude Code session ran ralph's hooks" in doctor.stdout

    result = run_client(repo, home, [bash("git push origin main", "Push", id="t_push"), text("Refused.")])
    assert_push_denied(result, remote, refs)
    assert "--settings" not in result.command


def test_hooks_in_the_user_local_file_never_run_and_doctor_says_so(tmp_path, claude_bin):
    home = fresh_home(tmp_path)
    repo, remote, refs = push_scenario(tmp_path)
    (home / ".claude" / "settings.local.json").write_text(json.dumps(harness.hook_settings()))
    result = run_client(repo, home, [bash("git push origin main", "Push", id="t_push"), text("Pushed.")])
    assert not result.tool_result("t_push")["is_error"], result.describe()  # the client ignored the file: the push ran
    assert not result.hook_responses("PreToolUse")
    doctor = ralph(["doctor"], home, repo)
    assert doctor.returncode == 1 and "does not read this file" in doctor.stdout and "--move" in doctor.stdout


@pytest.mark.parametrize("kind", ["repository", "written"])
def test_plugin_dir_protects_a_session(tmp_path, claude_bin, kind):
    home = fresh_home(tmp_path)
    repo, remote, refs = push_scenario(tmp_path)
    if kind == "repository":
        plugin = harness.REPO_ROOT  # the checkout is a plugin; its launcher finds .venv/bin/ralph or PATH's
    else:
        plugin = tmp_path / "plugin"
        written = ralph(["install", "--plugin", str(plugin)], home, repo)
        assert written.returncode == 0, written.stderr
    result = run_client(repo, home, [bash("git push origin main", "Push", id="t_push"), text("Refused.")],
                        extra_args=("--plugin-dir", str(plugin)))
    assert_push_denied(result, remote, refs)
    doctor = ralph(["doctor", "--plugin", str(plugin)], home, repo)
    assert doctor.returncode == 0, doctor.stdout
