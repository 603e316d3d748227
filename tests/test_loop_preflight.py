"""What would fail in every iteration ends the run before the first one, with
its reason (finish `error`); and every failed iteration says why on the
terminal, not only in failures.jsonl. Real ralph-loop runs, real git,
tests/fake_agent.py."""
from __future__ import annotations

import os
import subprocess

from tests.loop_support import AGENT_COMMAND, Project, git

PLAN2 = "# Plan\n\n- [ ] US-001: Add greeting\n- [ ] US-002: Add farewell\n"


def without_identity(p: Project, tmp_path) -> dict:
    """An environment where git knows no identity: no GIT_AUTHOR_*/GIT_COMMITTER_*,
    an empty home, no system config, and no guessing from the host name."""
    env = {k: v for k, v in p.env().items() if not k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_"))}
    home = tmp_path / "home"
    home.mkdir()
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), GIT_CONFIG_NOSYSTEM="1")
    git(p.root, "config", "user.useConfigOnly", "true")
    return env


def run(p: Project, env: dict, *args: str, agent: str | None = AGENT_COMMAND) -> subprocess.CompletedProcess:
    return subprocess.run(p.loop_argv(*args, agent=agent), cwd=p.root, env=env, capture_output=True, text=True, timeout=120)


def test_no_git_identity_ends_the_run_before_the_first_iteration(tmp_path) -> None:
    p = Project(tmp_path, PLAN2)
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    result = run(p, without_identity(p, tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "finished: error — git has no author identity here, so no story could be committed" in result.stdout
    assert "git config user.email you@example.com" in result.stdout
    assert p.invocations() == 0 and p.events("iteration") == []
    [finish] = p.events("finish")
    assert finish["type"] == "error" and "identity" in finish["message"]
    # with an identity in the repository's config, the same run goes ahead
    git(p.root, "config", "user.name", "Some One")
    git(p.root, "config", "user.email", "some.one@example.invalid")
    result = run(p, {**p.env(), "GIT_CONFIG_NOSYSTEM": "1"}, "--once")
    assert result.returncode == 3 and p.log()[0] == "feat(US-001): Add greeting", result.stdout + result.stderr


def test_an_agent_program_that_does_not_exist_ends_the_run_with_finish_error(tmp_path) -> None:
    for number, (command, said) in enumerate((
        ('"/nonexistent"', "the build stage's agent command ('/nonexistent') cannot start: /nonexistent does not exist"),
        ('"no-such-agent-program -p --verbose"', "('no-such-agent-program') cannot start: no-such-agent-program is not found on PATH"),
        ('["./agent.sh", "-p"]', "cannot start: " + "{root}/./agent.sh does not exist"),
    )):
        base = tmp_path / f"case-{number}"
        base.mkdir()
        p = Project(base, PLAN2, config=f"[loop]\nagent_command = {command}\n")
        p.script(default=[{"mark": "done"}])
        result = p.run_loop(agent=None)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "finished: error — " in result.stdout and said.format(root=p.root) in result.stdout, result.stdout
        assert p.events("iteration") == [] and p.failures() == []


def test_agent_commands_the_shell_reads_are_left_to_the_shell(tmp_path) -> None:
    # An assignment before the program, a program found on PATH, shell syntax:
    # nothing to refuse; the run goes ahead.
    p = Project(tmp_path, PLAN2)
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    for agent in (f"AGENT_MODE=test {AGENT_COMMAND}", f"cd . && {AGENT_COMMAND}"):
        result = p.run_loop("--once", agent=agent)
        assert result.returncode in (0, 3), (agent, result.stdout + result.stderr)
    assert p.log()[:2] == ["feat(US-002): Add farewell", "feat(US-001): Add greeting"]


def test_every_failed_iteration_says_why_on_the_terminal(tmp_path) -> None:
    (tmp_path / "a").mkdir()
    p = Project(tmp_path / "a", PLAN2)
    p.script(runs=[[{"exit": 7}], [{"append": "work.txt", "text": "x\n"}, {"mark": "done"}]])
    result = p.run_loop("--max-iterations", "2", "--verify", "grep -q y work.txt")
    out = result.stdout
    assert "iteration 1: US-001: agent_failed — the agent exited with code 7 without finishing US-001" in out, out
    assert "iteration 2: US-001: verify_failed — verify exited with code 1" in out, out
    # git's own reason for a refused commit (here a pre-commit hook's)
    (tmp_path / "b").mkdir()
    p = Project(tmp_path / "b", PLAN2)
    hook = os.path.join(p.root, ".git", "hooks", "pre-commit")
    with open(hook, "w") as f:
        f.write("#!/bin/sh\necho 'error: commits are frozen today' >&2\nexit 1\n")
    os.chmod(hook, 0o755)
    p.script(default=[{"append": "work.txt", "text": "y\n"}, {"mark": "done"}])
    result = p.run_loop("--once", "--verify", "test -f work.txt")
    assert ("iteration 1: US-001: commit_failed — git refused the commit (exit 1); the story stays open: "
            "error: commits are frozen today") in result.stdout, result.stdout
