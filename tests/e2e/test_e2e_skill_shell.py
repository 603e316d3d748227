"""Skills' and slash commands' inline shell lines (!`cmd`) through the real
client: the client runs them itself when a skill loads, and they never reach
PreToolUse. Claude Code 2.1.332 fires PreSkillShellCommand before each; ralph
answers it with the Bash guard (ralph.claude.handlers.skill_shell), wired as
settings.example.json wires it. Also: the client's own switch
(disableSkillShellExecution, which ralph-loop sets) and the Bash sandbox,
which covers these lines as it covers the Bash tool."""
from __future__ import annotations

import json

import pytest

from ralph.claude.protocol import EVENT_SINCE, client_release
from tests.sandbox_support import require_sandbox

from . import harness
from .harness import bash, git, hook_settings, make_bare_remote, make_repo, run_scenario, text, tool_use

pytestmark = pytest.mark.e2e

PUSH_SKILL = "---\nname: publish\ndescription: Publish the branch\n---\nPublished: !`git push origin main 2>&1; echo exit=$?`\n"
LIST_SKILL = "---\nname: show-files\ndescription: Show the project's files\n---\nThe files: !`ls`\n"
PUSH_COMMAND = "---\ndescription: Publish the branch\n---\nPublished: !`git push origin main`\n"


@pytest.fixture(autouse=True)
def client_knows_the_event(claude_bin):
    release = client_release(harness.client_version())
    if release is not None and release < EVENT_SINCE["PreSkillShellCommand"]:
        pytest.skip(f"Claude Code {harness.client_version()} has no PreSkillShellCommand")


def project(tmp_path, files: dict[str, str]):
    """A repo with `files`, a bare remote, and one commit the remote lacks; (repo, remote, remote refs)."""
    repo = make_repo(tmp_path, files=files)
    remote = make_bare_remote(repo)
    git(repo, "commit", "--allow-empty", "-q", "-m", "local work a push would publish")
    return repo, remote, git(remote, "for-each-ref")


def skill_calls(result: harness.ScenarioResult) -> list[dict]:
    return [e for e in result.hooks_log() if e.get("event") == "PreSkillShellCommand"]


def test_a_project_skill_that_pushes_is_denied_and_the_remote_is_unchanged(tmp_path, claude_bin):
    repo, remote, refs = project(tmp_path, {".claude/skills/publish/SKILL.md": PUSH_SKILL})
    result = run_scenario(repo, [tool_use("Skill", {"skill": "publish"}, id="t_skill"), text("Done.")], prompt="Publish the work.")

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert git(remote, "for-each-ref") == refs, result.describe()
    answers = result.hook_outputs("PreSkillShellCommand")
    assert len(answers) == 1, result.describe()
    specific = answers[0]["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreSkillShellCommand" and specific["permissionDecision"] == "deny"
    calls = skill_calls(result)
    assert [(c["tool"], c["decision"], c.get("rule_id"), c.get("skill")) for c in calls] == [("Bash", "deny", "git.push", "publish")]
    # the model's side: the line's place holds the client's refusal with ralph's reason, and nothing of a push
    told = result.new_text(1)
    assert "[not run: blocked by hook: ralph-hooks blocked this command" in told and "exit=" not in told, told[-2000:]


def test_a_project_skill_that_lists_files_runs(tmp_path, claude_bin):
    repo, _, _ = project(tmp_path, {".claude/skills/show-files/SKILL.md": LIST_SKILL, "notes.txt": "n\n"})
    result = run_scenario(repo, [tool_use("Skill", {"skill": "show-files"}, id="t_skill"), text("Done.")], prompt="Show the files.")

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert result.hook_outputs("PreSkillShellCommand") == [{}], result.describe()
    assert [c["decision"] for c in skill_calls(result)] == ["allow"], result.describe()
    told = result.new_text(1)
    assert "The files: " in told and "notes.txt" in told and "not run" not in told, told[-2000:]


def test_a_slash_command_the_user_types_is_judged_too(tmp_path, claude_bin):
    repo, remote, refs = project(tmp_path, {".claude/commands/publish.md": PUSH_COMMAND})
    result = run_scenario(repo, [text("Done.")], prompt="/publish")

    assert result.exit_code == 0, result.describe()
    assert git(remote, "for-each-ref") == refs, result.describe()
    calls = skill_calls(result)
    assert [(c["decision"], c.get("invoked_by")) for c in calls] == [("deny", "user")], result.describe()


def test_a_hook_that_cannot_answer_stops_the_line_only_with_on_failure_block(tmp_path, claude_bin):
    """Why ralph's entry says "onFailure": "block": a crashed hook otherwise lets the line run (a fact of the client)."""
    for on_failure, lands in (({"onFailure": "block"}, False), ({}, True)):
        repo, remote, refs = project(tmp_path / ("block" if on_failure else "plain"), {".claude/skills/publish/SKILL.md": PUSH_SKILL})
        settings = {"hooks": {"PreSkillShellCommand": [{"hooks": [{"type": "command", "command": "exit 1", "timeout": 30, **on_failure}]}]}}
        result = run_scenario(repo, [tool_use("Skill", {"skill": "publish"}, id="t_skill"), text("Done.")], prompt="Publish.", settings=settings)
        assert result.exit_code == 0 and not result.exhausted, result.describe()
        assert (git(remote, "for-each-ref") != refs) is lands, result.describe()
        assert ("[not run: blocked by hook:" in result.new_text(1)) is not lands, result.new_text(1)[-1000:]


def test_disable_skill_shell_execution_runs_no_line_and_no_hook(tmp_path, claude_bin):
    repo, remote, refs = project(tmp_path, {".claude/skills/publish/SKILL.md": PUSH_SKILL})
    settings = dict(hook_settings(), disableSkillShellExecution=True)
    result = run_scenario(repo, [tool_use("Skill", {"skill": "publish"}, id="t_skill"), text("Done.")], prompt="Publish.", settings=settings)

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert git(remote, "for-each-ref") == refs, result.describe()
    assert not result.hook_responses("PreSkillShellCommand") and not skill_calls(result), result.describe()
    told = result.new_text(1)
    assert "Published: " in told and "exit=" not in told and "git push origin main" not in told.split("Published: ", 1)[1][:200], told[-2000:]


def test_the_bash_sandbox_covers_skill_shell_lines(tmp_path, claude_bin):
    """No hooks at all: only the sandbox stands between the line and the remote."""
    require_sandbox()
    skill = PUSH_SKILL + "Outside: !`touch \"$HOME/../outside-the-project\" 2>&1; echo touch=$?`\n"
    sandbox = {"sandbox": {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}}
    turns = [tool_use("Skill", {"skill": "publish"}, id="t_skill"), text("Done.")]

    repo, remote, refs = project(tmp_path / "sandboxed", {".claude/skills/publish/SKILL.md": skill})
    result = run_scenario(repo, turns, prompt="Publish.", settings=sandbox)
    assert result.exit_code == 0 and not result.exhausted, result.describe()
    told = result.new_text(1)
    assert "exit=1" in told and "remote unpack failed" in told and "touch=1" in told, told[-2000:]
    assert git(remote, "for-each-ref") == refs, result.describe()

    # the control: the same skill without the sandbox pushes
    repo, remote, refs = project(tmp_path / "control", {".claude/skills/publish/SKILL.md": skill})
    result = run_scenario(repo, turns, prompt="Publish.", settings={})
    assert "exit=0" in result.new_text(1), result.describe()
    assert git(remote, "for-each-ref") != refs, json.dumps(result.new_text(1))[-1000:]


# ---- ralph-loop: skills' shell lines off unless [loop] skill_shell = true ----

LOOP_PLAN = "# Plan\n\n- [ ] US-001: Add greeting file\n  - greeting.txt says hello\n"


def loop_run(tmp_path, claude_bin, skill_shell: bool):
    """ralph-loop, sandbox off and no hooks in the agent's settings: only the
    loop's disableSkillShellExecution stands between a skill's line and the
    remote. One story; the agent loads the pushing skill first."""
    from .test_loop_e2e import loop_executable, story_session

    repo, remote, refs = project(tmp_path, {".claude/skills/publish/SKILL.md": PUSH_SKILL, ".ralph/plan.md": LOOP_PLAN,
                                            ".gitignore": ".ralph/*\n!.ralph/plan.md\n"})
    settings_file = tmp_path / "agent-settings.json"
    settings_file.write_text("{}", encoding="utf-8")
    agent = [claude_bin, "-p", *harness.CLIENT_FLAGS, "--settings", str(settings_file)]
    (repo / "ralph.toml").write_text(
        f"[loop]\nagent_command = {json.dumps(agent)}\ntimeout_seconds = 120\nverify_command = \"test -f greeting.txt\"\n"
        f"skill_shell = {'true' if skill_shell else 'false'}\n\n[sandbox]\nenabled = false\n", encoding="utf-8")
    git(repo, "add", "ralph.toml")
    git(repo, "commit", "-q", "-m", "loop config")
    refs = git(remote, "for-each-ref")
    turns = [tool_use("Skill", {"skill": "publish"}, id="t_skill"), *story_session(repo, "US-001", "greeting.txt", "hello\n")]
    result = harness.run_with_server([loop_executable(), "--max-iterations", "1"], repo, sessions=[turns], timeout=240)
    assert result.error is None and not result.timed_out, result.describe()
    told = "\n".join(result.request_text(i) for i in range(len(result.main_requests)))
    return git(remote, "for-each-ref") != refs, told, result


def test_the_loop_turns_skills_shell_lines_off(tmp_path, claude_bin):
    pushed, told, result = loop_run(tmp_path, claude_bin, skill_shell=False)
    assert not pushed, result.describe()
    assert "Published: " in told and "exit=" not in told, told[-3000:]


def test_the_loop_with_skill_shell_true_runs_them(tmp_path, claude_bin):
    """The control: the same run with [loop] skill_shell = true (and, here, no hook) pushes."""
    pushed, told, result = loop_run(tmp_path, claude_bin, skill_shell=True)
    assert pushed and "exit=0" in told, result.describe()
