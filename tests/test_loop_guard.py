"""ralph-loop's second line of defence against pushes and merges (the
sandbox layer and the loop's own checks of git), with the scripted fake
agent and real git: merges and foreign commits fail the iteration, git
hooks/config changed by the agent never run, guard denials end a stuck
iteration and then block the story, and the sandbox layer reaches a `claude`
agent through --settings (or the loop refuses to start without bubblewrap)."""
from __future__ import annotations

import json
import os
import shlex
import sys

import pytest

from ralph.loop.sandbox_layer import runs_claude, user_settings_value, with_settings
from tests.loop_support import FAKE_AGENT, Project, git
from tests.sandbox_support import sandbox_available  # noqa: F401 - fixture

PLAN = "- [ ] US-001: Add greeting\n- [ ] US-002: Add farewell\n"
NO_SANDBOX = "[sandbox]\nenabled = false\n"


def results(project: Project) -> list[tuple[str, str]]:
    return [(e["story"], e["result"]) for e in project.events("iteration")]


def project_with_side_branch(tmp_path) -> Project:
    """A project (sandbox off) with branch `side` one commit ahead of main ("side work", side.txt)."""
    project = Project(tmp_path, PLAN, config=NO_SANDBOX)
    git(project.root, "checkout", "-q", "-b", "side")
    project.write("side.txt", "from another branch\n")
    git(project.root, "add", "side.txt")
    git(project.root, "commit", "-q", "-m", "side work")
    git(project.root, "checkout", "-q", "main")
    return project


def test_a_merge_commit_fails_the_iteration_and_is_rolled_back(tmp_path):
    project = project_with_side_branch(tmp_path)
    checkpoint = git(project.root, "rev-parse", "HEAD").strip()
    project.script(runs=[
        [{"write": "greeting.txt", "text": "hello\n"},
         {"run": "git add greeting.txt && git commit -q -m greet && git merge -q --no-ff side -m 'merge side'"},
         {"mark": "done"}],
        [{"write": "greeting.txt", "text": "hello\n"}, {"mark": "done"}],
    ])
    done = project.run_loop("--max-iterations", "2")
    assert results(project)[:2] == [("US-001", "merge_detected"), ("US-001", "done")], done.stdout + done.stderr
    merge = [f for f in project.failures() if f["kind"] == "merge"]
    assert merge and "merge commit" in merge[0]["summary"] and "merge side" in merge[0]["summary"]
    # rolled back like any failed iteration: saved first, then reset to the checkpoint
    event = project.events("iteration")[0]
    assert event["rollback"]["restored"] and event["rollback"]["ref"].startswith("refs/ralph/rollbacks/")
    assert git(project.root, "rev-parse", f"{event['rollback']['ref']}^{{commit}}").strip()
    # the next prompt says why, and the committed history has no merge
    assert "merge commit" in project.prompt(2)
    assert git(project.root, "rev-list", "--merges", f"{checkpoint}..HEAD").strip() == ""
    assert not os.path.exists(os.path.join(project.root, "side.txt"))
    assert "merge commit" in done.stdout + done.stderr


def test_commits_fetched_from_a_remote_and_fast_forwarded_are_foreign(tmp_path):
    project = Project(tmp_path, PLAN, config=NO_SANDBOX)
    remote = str(tmp_path / "remote.git")
    git(project.root, "clone", "-q", "--bare", project.root, remote)
    other = str(tmp_path / "other")
    git(project.root, "clone", "-q", remote, other)
    with open(os.path.join(other, "upstream.txt"), "w") as f:
        f.write("upstream\n")
    git(other, "add", "upstream.txt")
    git(other, "commit", "-q", "-m", "upstream work")
    git(other, "push", "-q", "origin", "HEAD:main")
    git(project.root, "remote", "add", "origin", remote)
    project.script(runs=[
        [{"run": "git fetch -q origin && git merge -q --ff-only origin/main"}, {"mark": "done"}],
        [{"write": "greeting.txt", "text": "hello\n"}, {"mark": "done"}],
    ])
    project.run_loop("--max-iterations", "2")
    assert results(project)[0] == ("US-001", "merge_detected")
    summary = [f for f in project.failures() if f["kind"] == "merge"][0]["summary"]
    assert "brought in from another branch or a remote" in summary and "refs/remotes/origin/main" in summary
    assert "upstream work" not in git(project.root, "log", "--format=%s")


def test_own_commits_on_the_branch_are_fine(tmp_path):
    project = Project(tmp_path, PLAN, config=NO_SANDBOX)
    project.script(runs=[[{"write": "a.txt", "text": "a\n"}, {"run": "git add a.txt && git commit -q -m 'agent commit'"},
                          {"mark": "done"}]])
    project.run_loop("--once")
    assert results(project) == [("US-001", "done")]
    assert project.log()[:2] == ["feat(US-001): Add greeting", "agent commit"]


def test_a_hook_the_agent_wrote_never_runs_and_is_removed(tmp_path):
    project = Project(tmp_path, PLAN, config=NO_SANDBOX)
    marker = os.path.join(project.agent_dir, "HOOK_RAN")
    hook = f"#!/bin/sh\ntouch {shlex.quote(marker)}\n"
    project.script(runs=[
        [{"write": ".git/hooks/pre-commit", "text": hook}, {"run": "chmod +x .git/hooks/pre-commit"},
         {"run": "git config alias.ship '!echo shipped'"},
         {"write": "greeting.txt", "text": "hello\n"}, {"mark": "done"}],
    ])
    config_before = project.read(".git/config")
    project.run_loop("--once")
    assert results(project) == [("US-001", "git_config_changed")]
    assert not os.path.exists(marker), "the agent's pre-commit hook ran outside the sandbox"
    assert not os.path.exists(os.path.join(project.root, ".git", "hooks", "pre-commit"))
    assert project.read(".git/config") == config_before
    failure = [f for f in project.failures() if f["kind"] == "git_control"][0]
    assert ".git/hooks/pre-commit" in failure["summary"] and ".git/config" in failure["summary"]
    assert project.log() == ["initial"]


def denied_runs(count: int) -> list[dict]:
    return [{"run": f"git push origin HEAD:main{n}"} for n in range(count)]


def test_guard_denials_end_the_iteration_then_block_the_story(tmp_path):
    told = tmp_path / "story_blocked.txt"
    project = Project(tmp_path, PLAN, config=NO_SANDBOX + "\n[loop]\nmax_guard_denials = 3\nmax_stuck_iterations = 2\n"
                      f'\n[[hooks.story_blocked]]\ncommand = "echo $RALPH_STORY_ID $RALPH_REASON $RALPH_STORY_TITLE > {told}"\n')
    project.script(runs=[
        [*denied_runs(3), {"mark": "done"}],
        [*denied_runs(4)],
        [{"write": "farewell.txt", "text": "bye\n"}, {"mark": "done"}],
    ], hooks=["bash"])
    done = project.run_loop("--max-iterations", "3")
    assert results(project) == [("US-001", "guard_stopped"), ("US-001", "guard_stopped"), ("US-002", "done")], done.stdout
    failures = [f for f in project.failures() if f["kind"] in ("guard_denials", "guard_blocked")]
    assert [f["kind"] for f in failures] == ["guard_denials", "guard_denials", "guard_blocked"]
    assert "3 commands were denied by the push/merge guard" in failures[0]["summary"]
    assert "git push origin HEAD:main0" in failures[0]["excerpt"]
    assert "marked blocked" in failures[2]["summary"] and "7 denied commands" in failures[2]["summary"]
    assert "- [!] US-001" in project.read(".ralph/plan.md")
    assert told.read_text() == "US-001 guard_denials Add greeting\n"  # the story_blocked hook point
    assert "denied by the push/merge guard" in project.prompt(2)  # the next prompt is told
    # the log the loop reads, one line per denial, with iteration and story
    with open(os.path.join(project.root, ".ralph", "protected", "denials.jsonl"), encoding="utf-8") as f:
        denials = [json.loads(line) for line in f]
    assert [(d["iteration"], d["story"]) for d in denials] == [(1, "US-001")] * 3 + [(2, "US-001")] * 4
    # a denial under the limit does not end anything
    status = project_status(project)
    assert "guard denials" in status and "US-001: 7" in status


def project_status(project: Project) -> str:
    import subprocess

    from tests.conftest import RALPH

    done = subprocess.run([RALPH, "status"], cwd=project.root, capture_output=True, text=True, env=project.env(), timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_denials_under_the_limit_leave_the_iteration_alone(tmp_path):
    project = Project(tmp_path, PLAN, config=NO_SANDBOX)
    project.script(runs=[[*denied_runs(2), {"write": "greeting.txt", "text": "hello\n"}, {"mark": "done"}]], hooks=["bash"])
    project.run_loop("--once")
    assert results(project) == [("US-001", "done")]
    assert project.events("iteration")[0]["guard_denials"] == 2


# ---- the sandbox layer reaching the agent ----


def fake_claude(tmp_path) -> str:
    """A `claude` on disk that records its argv and plays the fake agent."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    path = bin_dir / "claude"
    argv_file = tmp_path / "agent" / "claude-argv.json"
    path.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"json.dump(sys.argv[1:], open({str(argv_file)!r}, 'w'))\n"
        f"os.execv(sys.executable, [sys.executable, {FAKE_AGENT!r}])\n"
    )
    path.chmod(0o755)
    return str(path)


def test_loop_passes_the_layer_merged_into_the_users_settings(tmp_path, sandbox_available):
    project = Project(tmp_path, PLAN)
    claude = fake_claude(tmp_path)
    user_settings = tmp_path / "my-settings.json"
    user_settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "ralph stop"}]}]},
                                         "sandbox": {"filesystem": {"denyWrite": ["/srv/mine"]}}}))
    project.script(runs=[[{"write": "greeting.txt", "text": "hello\n"}, {"mark": "done"}]])
    agent = f"{shlex.quote(claude)} -p --dangerously-skip-permissions --settings {shlex.quote(str(user_settings))} | cat"
    done = project.run_loop("--once", agent=agent)
    assert results(project) == [("US-001", "done")], done.stdout + done.stderr
    with open(tmp_path / "agent" / "claude-argv.json") as f:
        argv = json.load(f)
    at = argv.index("--settings")
    settings_file = argv[at + 1]
    assert settings_file.startswith(os.path.join(project.root, ".ralph", "protected"))
    with open(settings_file) as f:
        settings = json.load(f)
    assert settings["hooks"] == {"Stop": [{"hooks": [{"type": "command", "command": "ralph stop"}]}]}  # kept
    sandbox = settings["sandbox"]
    assert sandbox["enabled"] and sandbox["failIfUnavailable"] and sandbox["allowUnsandboxedCommands"] is False
    deny_write = sandbox["filesystem"]["denyWrite"]
    assert deny_write[0] == "/srv/mine"
    assert os.path.join(project.root, ".git", "hooks") in deny_write
    assert os.path.join(project.root, ".ralph", "protected") in deny_write
    assert argv.count("--settings") == 1
    assert settings["disableSkillShellExecution"] is True  # skills' inline shell lines stay off ([loop] skill_shell)


def agent_settings(tmp_path, config: str) -> dict | None:
    """The settings the loop hands a `claude` agent under `config`; None when it passes no --settings."""
    project = Project(tmp_path, PLAN, config=config)
    claude = fake_claude(tmp_path)
    project.script(runs=[[{"write": "greeting.txt", "text": "hello\n"}, {"mark": "done"}]])
    done = project.run_loop("--once", agent=f"{shlex.quote(claude)} -p --dangerously-skip-permissions")
    assert results(project) == [("US-001", "done")], done.stdout + done.stderr
    with open(tmp_path / "agent" / "claude-argv.json") as f:
        argv = json.load(f)
    if "--settings" not in argv:
        return None
    with open(argv[argv.index("--settings") + 1]) as f:
        return json.load(f)


def test_skills_shell_lines_are_off_in_a_loop_run_even_without_the_sandbox(tmp_path):
    assert agent_settings(tmp_path, NO_SANDBOX) == {"disableSkillShellExecution": True}


def test_loop_skill_shell_true_lets_them_run(tmp_path):
    assert agent_settings(tmp_path, NO_SANDBOX + "[loop]\nskill_shell = true\n") is None


def test_loop_refuses_to_start_without_bubblewrap(tmp_path):
    project = Project(tmp_path, PLAN)
    claude = fake_claude(tmp_path)
    bin_dir = tmp_path / "nobwrap"
    bin_dir.mkdir()
    for tool in ("git", "sh", "cat"):
        for base in ("/usr/bin", "/bin"):
            if os.path.exists(f"{base}/{tool}"):
                os.symlink(f"{base}/{tool}", bin_dir / tool)
                break
    project.script(runs=[[{"mark": "done"}]])
    done = project.run_loop("--once", agent=f"{claude} -p", env={"PATH": str(bin_dir)})
    assert done.returncode == 1
    out = done.stdout + done.stderr
    assert "the sandbox cannot run here" in out and "apt-get install bubblewrap socat" in out
    assert "[sandbox] enabled = false" in out
    assert project.invocations() == 0
    # the opt-out runs the agent unsandboxed, and says so
    project.write("ralph.toml", "[sandbox]\nfail_if_unavailable = false\n")
    project.commit()
    done = project.run_loop("--once", agent=f"{claude} -p", env={"PATH": str(bin_dir)})
    assert project.invocations() == 1, done.stdout + done.stderr
    assert "UNAVAILABLE, the agent runs unsandboxed" in done.stdout + done.stderr


@pytest.mark.parametrize("command, expected", [
    ("claude -p --dangerously-skip-permissions", "claude --settings /s.json -p --dangerously-skip-permissions"),
    ("/opt/bin/claude -p | tee log", "/opt/bin/claude --settings /s.json -p | tee log"),
    ("claude -p --settings mine.json", "claude -p --settings /s.json"),
    ("claude -p --settings='my file.json' -x", "claude -p --settings /s.json -x"),
    (["claude", "-p"], ["claude", "--settings", "/s.json", "-p"]),
    (["env", "A=1", "/usr/local/bin/claude", "--settings=x.json"], ["env", "A=1", "/usr/local/bin/claude", "--settings=/s.json"]),
])
def test_with_settings(command, expected):
    assert runs_claude(command)
    assert with_settings(command, "/s.json") == expected


def test_commands_that_do_not_start_claude():
    for command in ("python agent.py", ["python3", "fake_agent.py"], "claudette -p", "my-claude-wrapper"):
        assert not runs_claude(command)
    assert user_settings_value("claude --settings '{\"a\": 1}' -p") == '{"a": 1}'


def test_empty_stub_files_the_sandbox_leaves_behind_are_not_changes(tmp_path):
    """Claude Code's sandbox leaves empty mount-point files such as .git/config.worktree behind."""
    project = Project(tmp_path, PLAN, config=NO_SANDBOX)
    project.script(runs=[[{"run": ": > .git/config.worktree"}, {"write": "greeting.txt", "text": "hello\n"}, {"mark": "done"}]])
    project.run_loop("--once")
    assert results(project) == [("US-001", "done")]



def test_a_bad_sandbox_table_stops_the_loop_before_anything_runs(tmp_path):
    project = Project(tmp_path, PLAN, config="[sandbox]\nenabled = 1\n")
    project.script(runs=[[{"mark": "done"}]])
    done = project.run_loop("--once")
    assert done.returncode == 2
    assert "ralph.toml:2: [sandbox] enabled: must be true or false" in done.stderr
    assert project.invocations() == 0


def test_a_merge_in_a_plan_stage_is_caught_too(tmp_path):
    project = project_with_side_branch(tmp_path)
    project.script(runs=[[{"run": "git merge -q --no-ff side -m 'merge side'"}]], default=[])
    project.run_loop("--mode", "plan", "--max-iterations", "2")
    plan_events = [e for e in project.events("iteration") if e.get("mode") == "plan"]
    assert plan_events[0]["result"] == "merge_detected", plan_events
    assert [f["story"] for f in project.failures() if f["kind"] == "merge"] == ["PLAN"]
    assert git(project.root, "rev-list", "--merges", "HEAD").strip() == ""


@pytest.mark.parametrize("verify_sandboxed", [True, False])
def test_the_verify_command_runs_the_agents_code_under_bubblewrap(tmp_path, sandbox_available, verify_sandboxed):
    """verify runs code the agent wrote (tests, scripts): sandboxed, a push from it fails."""
    config = 'verify_command = "sh check.sh"\n'
    project = Project(tmp_path, PLAN, config="[loop]\n" + config + ("" if verify_sandboxed else "\n[sandbox]\nverify = false\n"))
    remote = str(tmp_path / "remote.git")
    git(project.root, "clone", "-q", "--bare", project.root, remote)
    git(project.root, "remote", "add", "origin", remote)
    claude = fake_claude(tmp_path)
    project.script(runs=[[{"write": "check.sh", "text": "git push -q origin HEAD:refs/heads/evil 2>/dev/null && echo PUSHED || echo PUSH_REFUSED\n"},
                          {"mark": "done"}]])
    done = project.run_loop("--once", agent=f"{claude} -p")
    refs = git(remote, "for-each-ref", "--format=%(refname)")
    assert results(project) == [("US-001", "done")], done.stdout + done.stderr
    if verify_sandboxed:
        assert "refs/heads/evil" not in refs
        assert "PUSH_REFUSED" in done.stdout + done.stderr
    else:
        assert "refs/heads/evil" in refs  # the control: the same verify pushes without bubblewrap
