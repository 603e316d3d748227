"""The guard on destructive commands and task runners, inside the real Claude
Code CLI: a `git reset --hard` the agent runs is saved first and allowed, the
model is told how to get the work back, and the restore brings it back; a
deletion in the home directory and a push hidden in a Makefile are denied
and never run."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from ..conftest import RALPH
from .harness import bash, make_repo, run_scenario, text
from .test_e2e_hooks import assert_judged_without_errors, log_entries, only_output

pytestmark = pytest.mark.e2e


def test_reset_hard_is_saved_first_and_the_model_learns_how_to_restore(tmp_path, claude_bin):
    repo = make_repo(tmp_path, files={"notes.md": "committed\n"})
    (repo / "notes.md").write_text("committed\nuncommitted work the reset throws away\n", encoding="utf-8")
    (repo / "draft.txt").write_text("untracked draft\n", encoding="utf-8")

    result = run_scenario(repo, [bash("git reset --hard && git clean -fd", "Start over", id="t_reset"), text("Started over.")],
                          prompt="Throw away the local changes.")

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert_judged_without_errors(result)
    output = only_output(result, "PreToolUse", "PreToolUse:Bash")
    context = output["hookSpecificOutput"]["additionalContext"]
    assert "permissionDecision" not in output["hookSpecificOutput"], output  # no "allow" that would skip the user's own rules
    snapshot = context.split("`ralph rollbacks restore ")[1].split("`")[0]
    entry = log_entries(result, "PreToolUse", "Bash")[-1]
    assert entry["rule_id"] == "save.git-reset-hard" and entry["snapshot"] == snapshot, entry
    # the command ran (the work tree is clean now), and the model was told how to get the work back
    assert result.read("notes.md") == "committed\n" and not (repo / "draft.txt").exists()
    assert not result.tool_result("t_reset")["is_error"], result.tool_result("t_reset")
    assert f"PreToolUse:Bash hook additional context: {context}" in result.new_text(1), result.new_text(1)[-3000:]
    # the restore brings back every byte
    proc = subprocess.run([RALPH, "rollbacks", "restore", snapshot], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (repo / "notes.md").read_text() == "committed\nuncommitted work the reset throws away\n"
    assert (repo / "draft.txt").read_text() == "untracked draft\n"


def test_deleting_in_the_home_directory_and_a_push_in_a_makefile_are_denied(tmp_path, claude_bin):
    repo = make_repo(tmp_path, files={"Makefile": "test:\n\tgit push origin main\n"})
    home = tmp_path / "home"  # the HOME the client and its hooks run with
    home.mkdir()
    home_file = home / "precious.txt"
    home_file.write_text("keep me\n", encoding="utf-8")
    turns = [bash("rm -rf ~/precious.txt", "Clean up", id="t_rm"), bash("make test", "Run the tests", id="t_make"), text("Both refused.")]

    result = run_scenario(repo, turns, prompt="Clean up and run the tests.", env_extra={"HOME": str(home)})

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert_judged_without_errors(result)
    decisions = [(e["decision"], e.get("rule_id")) for e in log_entries(result, "PreToolUse", "Bash")]
    assert decisions == [("deny", "destroy.home"), ("deny", "git.push")], decisions
    assert home_file.read_text() == "keep me\n"
    for tool_id in ("t_rm", "t_make"):
        assert result.tool_result(tool_id)["is_error"], result.tool_result(tool_id)
    assert "no snapshot can bring back" in result.tool_result("t_rm")["content"]
    assert "make test" in result.tool_result("t_make")["content"]
    assert not os.path.exists(repo / ".git" / "refs" / "ralph")
