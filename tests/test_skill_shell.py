"""PreSkillShellCommand: a skill's or slash command's inline shell line
(!`cmd`), judged by the Bash guard (ralph.claude.handlers.skill_shell).

The payload is a real one (ralph/data/payloads/PreSkillShellCommand_Bash.json,
captured through Claude Code 2.1.332 from a project skill the model invoked
with the Skill tool). The client on Linux sends tool_name "Bash" even for a
skill whose frontmatter says `shell: powershell` (seen in the same capture
run), so the PowerShell cases set tool_name by hand: the client's schema
names "Bash" and "PowerShell" as its values, and PowerShell is not installed
here (see tests/test_guard_powershell.py for how those labels are made)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from ralph.claude.protocol import GUARD_EVENTS, HOOK_ENTRIES, SUBCOMMANDS, events_of
from ralph.commands.install import python_of, wanted_hooks

from .conftest import RALPH, hook_state_dir, load_payload, run_hook

EVENT = "PreSkillShellCommand"


def line(repo: str, command: str, tool: str = "Bash") -> dict:
    payload = load_payload("PreSkillShellCommand_Bash", repo)
    payload["tool_input"] = {"command": command}
    payload["tool_name"] = tool
    return payload


def hook_log(repo: str) -> list[dict]:
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl"), encoding="utf-8") as f:
        return [json.loads(row) for row in f]


def test_the_captured_push_line_is_denied_in_this_events_form(repo: str) -> None:
    payload = load_payload("PreSkillShellCommand_Bash", repo)
    assert payload["tool_input"] == {"command": "git push origin main"} and payload["hook_event_name"] == EVENT
    result = run_hook("skill-shell", payload, repo)
    specific = result.output["hookSpecificOutput"]
    # the client wants the event's own name here; PreToolUse's would be a wrong answer
    assert specific["hookEventName"] == EVENT and specific["permissionDecision"] == "deny"
    assert "git push" in specific["permissionDecisionReason"]
    entry = hook_log(repo)[-1]
    assert entry["event"] == EVENT and entry["tool"] == "Bash" and entry["decision"] == "deny"
    assert entry["rule_id"] == "git.push" and entry["skill"] == "pushit" and entry["invoked_by"] == "claude"


def test_a_plain_line_runs(repo: str) -> None:
    for command in ("ls", "git status --porcelain", "cat README.md | wc -l"):
        assert run_hook("skill-shell", line(repo, command), repo).output == {}


def test_the_same_decisions_as_the_bash_tool(repo: str) -> None:
    """Every command of the Bash tool's hook gets the same decision as a skill's line."""
    bash = load_payload("PreToolUse_Bash", repo)
    for command in ("git push origin main", "ls -la", "bash -c 'git push'", "git merge feature", "npm test",
                    "python3 -c \"import os; os.system('git push')\"", "git log --oneline -3"):
        bash["tool_input"] = {"command": command}
        as_tool = run_hook("pre-tool", bash, repo)
        as_line = run_hook("skill-shell", line(repo, command), repo)
        assert as_line.denied == as_tool.denied, command
        assert as_line.reason == as_tool.reason, command


def test_powershell_lines_are_judged_as_powershell(repo: str) -> None:
    for command in ("git push origin main", "git push; Get-Date", "Invoke-Expression 'git push'"):
        result = run_hook("skill-shell", line(repo, command, "PowerShell"), repo)
        assert result.denied and result.output["hookSpecificOutput"]["hookEventName"] == EVENT, command
    for command in ("Get-ChildItem", "git status", "Write-Output 'it''s fine'"):
        assert run_hook("skill-shell", line(repo, command, "PowerShell"), repo).output == {}, command


def test_a_destructive_line_is_saved_first_and_the_note_is_a_system_message(repo: str) -> None:
    with open(os.path.join(repo, "notes.txt"), "w") as f:
        f.write("unsaved work\n")
    result = run_hook("skill-shell", line(repo, "rm -f notes.txt README.md"), repo)
    # PreSkillShellCommand's hookSpecificOutput has no additionalContext: the note goes where the client shows it
    assert "hookSpecificOutput" not in result.output
    assert "ralph rollbacks restore" in result.output["systemMessage"]


def test_a_denial_in_a_loop_run_is_recorded_as_the_bash_tools_are(repo: str) -> None:
    env = {"RALPH_RUN_ID": "run-7", "RALPH_ITERATION": "2", "RALPH_MAX_DENIALS": "2", "RALPH_STORY": "US-001"}
    first = run_hook("skill-shell", line(repo, "git push origin main"), repo, env)
    assert first.denied and "continue" not in first.output
    second = run_hook("skill-shell", line(repo, "git push --force origin main"), repo, env)
    assert second.denied and second.output["continue"] is False  # the loop's limit of denials per iteration
    with open(os.path.join(hook_state_dir(repo), "protected", "denials.jsonl"), encoding="utf-8") as f:
        records = [json.loads(row) for row in f]
    assert [r["command"] for r in records] == ["git push origin main", "git push --force origin main"]
    assert {r["run_id"] for r in records} == {"run-7"} and {r["iteration"] for r in records} == {2}


def test_unreadable_input_fails_closed_with_this_events_name(repo: str) -> None:
    for raw in ("{not json", "", "[]", json.dumps({"hook_event_name": EVENT, "cwd": repo, "tool_name": "Bash", "tool_input": "x"})):
        result = run_hook("skill-shell", raw, repo)
        if raw.startswith('{"hook'):
            assert result.output == {}  # no command: the client's schema never sends this, nothing runs
            continue
        assert result.denied and result.output["hookSpecificOutput"]["hookEventName"] == EVENT, raw
    # `ralph hook` (the event from the payload) answers it too
    assert run_hook("hook", line(repo, "git push"), repo).denied


def test_the_launcher_fails_closed_for_this_event_too(repo: str) -> None:
    launcher = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ralph", "data", "ralph-hook")
    done = subprocess.run([launcher, "skill-shell"], input=json.dumps(line(repo, "git push")), capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": repo, "RALPH": "/nowhere/ralph"}, cwd=repo)
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == EVENT and answer["permissionDecision"] == "deny" and "not installed" in answer["permissionDecisionReason"]


def test_install_writes_the_event_only_for_clients_that_know_it() -> None:
    assert SUBCOMMANDS["skill-shell"] == EVENT and EVENT in GUARD_EVENTS
    assert HOOK_ENTRIES[EVENT] == ("Bash|PowerShell", "skill-shell", 30, "block")
    assert EVENT in wanted_hooks("/x/ralph", events_of((2, 1, 332)))
    assert EVENT not in wanted_hooks("/x/ralph", events_of((2, 1, 331)))
    assert EVENT not in wanted_hooks("/x/ralph", events_of((2, 1, 330)))
    entry = wanted_hooks("/x/ralph", events_of(None))[EVENT][0]
    assert entry["matcher"] == "Bash|PowerShell" and entry["hooks"][0]["onFailure"] == "block"
    assert entry["hooks"][0]["command"].endswith(" skill-shell")


def test_the_handler_loads_only_what_a_plain_line_needs(repo: str) -> None:
    payload = json.dumps(line(repo, "ls -la"))
    done = subprocess.run([python_of(RALPH) or sys.executable, "-X", "importtime", "-IS", RALPH, "skill-shell"], input=payload, capture_output=True,
                          text=True, cwd=repo)
    imported = {row.rsplit("|", 1)[-1].strip() for row in done.stderr.splitlines() if row.startswith("import time:")}
    assert json.loads(done.stdout) == {}
    assert "ralph.claude.handlers.skill_shell" in imported
    assert not imported & {"re", "argparse", "shlex", "ralph.rules.guard.judge", "ralph.config", "ralph.cli"}, sorted(imported)


def test_explain_names_the_event_and_the_rule(repo: str) -> None:
    def explain(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([RALPH, "explain", *args], capture_output=True, text=True, cwd=repo)

    done = explain("--skill-line", "git push origin main")
    assert done.returncode == 1 and "decision: BLOCK (PreSkillShellCommand deny)" in done.stdout and "rule:     git.push" in done.stdout
    verdict = json.loads(explain("--json", "--skill-line", "--powershell", "git push; Get-Date").stdout)
    assert verdict["event"] == EVENT and verdict["blocked"] and verdict["rule_id"] == "git.push"
    # the hook's own answer and log say the same
    run_hook("skill-shell", line(repo, "git push; Get-Date", "PowerShell"), repo)
    assert hook_log(repo)[-1]["rule_id"] == "git.push"
    assert explain("--skill-line", "ls -la").returncode == 0
    assert explain("--powershell", "ls").returncode == 2  # PowerShell only for a skill's line
