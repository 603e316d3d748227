"""PowerShell (pwsh, powershell) in the guard: a shell whose -Command text,
-File script and script on stdin are commands (ralph.rules.guard.programs.shells.run_powershell).

PowerShell is not installed on this machine (no Debian, PyPI or npm package
has it), so these cases are not labelled by running them in the corpus
sandbox: their labels follow PowerShell's documented command line
(about_Pwsh: -Command takes the rest of the line, -File and pwsh's first
word name a script, parameters match by alias or unambiguous prefix,
-EncodedCommand is base64 of UTF-16LE). The guard once allowed every one of
the blocked cases: it took PowerShell for an interpreter of string literals."""
from __future__ import annotations

import os

import pytest

from ralph.claude.bash_guard import surroundings
from ralph.rules.guard.judge import judge_command
from ralph.rules.guard.policy import DEFAULT_POLICY

from .conftest import load_payload, run_hook

PUSHING_SCRIPT = "git push origin main\n"
# command -> the rule id of the guard's verdict
CASES = {
    # -Command: the rest of the line, as a shell's commands
    'pwsh -c "git push origin main"': "git.push",
    'powershell -Command "git push origin main"': "git.push",
    "pwsh -NoProfile -Command git push origin main": "git.push",
    'pwsh -v -c "git push"': "git.push",  # -v takes no value here: the next word is a parameter
    'pwsh -cwa "git push"': "git.push",
    "powershell git push origin main": "git.push",  # Windows PowerShell's first word starts -Command
    # what bash cannot follow, in text that mentions a push
    'pwsh -c "Invoke-Expression \'git push\'"': "fail-closed.powershell-code",
    # -File, pwsh's first word, a .ps1 anywhere, and the values that come before them
    "pwsh -File deploy.ps1": "git.push",
    "pwsh deploy.ps1": "git.push",
    "pwsh -ExecutionPolicy Bypass -File deploy.ps1": "git.push",
    "pwsh -ep Bypass -File deploy.ps1": "git.push",
    "pwsh -ex Bypass deploy.ps1": "git.push",
    "powershell -NoProfile deploy.ps1": "git.push",
    # a script on stdin
    "echo 'git push' | pwsh": "git.push",
    "echo 'git push' | pwsh -Command -": "git.push",
    # base64 the guard does not decode
    "pwsh -enc ZwBpAHQAIABwAHUAcwBoAA==": "fail-closed.powershell-encoded",
    "pwsh -EncodedCommand ZwBpAHQAIABwAHUAcwBoAA==": "fail-closed.powershell-encoded",
    # ordinary work
    'pwsh -c "Get-ChildItem"': "allow.nothing-pushes",
    'pwsh -c "git status"': "allow.nothing-pushes",
    'pwsh -c "git log --oneline -3"': "allow.nothing-pushes",
    'pwsh -NoLogo -NoProfile -Command "Write-Output hello"': "allow.nothing-pushes",
    "pwsh -wd src -c ls": "allow.nothing-pushes",
    "pwsh -File build.ps1": "allow.nothing-pushes",
    "pwsh -v": "allow.nothing-pushes",
    "powershell Get-Date": "allow.nothing-pushes",
}


@pytest.fixture
def project(tmp_path) -> str:
    (tmp_path / "deploy.ps1").write_text(PUSHING_SCRIPT)
    (tmp_path / "build.ps1").write_text("Write-Output building\n")
    (tmp_path / "src").mkdir()
    return str(tmp_path)


@pytest.mark.parametrize("command", sorted(CASES))
def test_powershell(project: str, command: str) -> None:
    around = surroundings(project, project, {"HOME": os.path.join(project, "home")})
    verdict = judge_command(command, DEFAULT_POLICY, cwd=project, around=around)
    assert verdict.rule_id == CASES[command], (command, verdict.rule_id, verdict.reason)
    assert verdict.blocked == (not CASES[command].startswith("allow.")), command


def test_a_powershell_push_is_denied_through_the_entry_point(repo: str) -> None:
    with open(os.path.join(repo, "deploy.ps1"), "w") as f:
        f.write(PUSHING_SCRIPT)
    for command in ('pwsh -c "git push origin main"', "pwsh deploy.ps1"):
        payload = load_payload("PreToolUse_Bash", repo)
        payload["tool_input"]["command"] = command
        answer = run_hook("pre-tool", payload, repo)
        assert answer.denied, command
