"""Users' own [[hooks.event]] commands (ralph/claude/event_command_select.py), run by our
dispatcher inside the real Claude Code CLI, wired as settings.example.json
wires it. Each scenario checks what the user's hook did, what our handler
answered, and what the model was told afterwards."""
from __future__ import annotations

import json

import pytest

from . import harness
from .harness import assert_hooks_answered_cleanly, bash, edit, make_repo, read, run_scenario, text

pytestmark = pytest.mark.e2e

NO_RM_RF = """\
[[hooks.event]]
match = "PreToolUse:Bash"
description = "no rm -rf"
command = '''
case "$RALPH_TOOL_ARGS" in
  *"rm -rf"*|*"rm -fr"*) echo "rm -rf is not allowed in this repository: delete the files you mean one by one" >&2; exit 1;;
esac
'''
"""

LINT_AFTER_EDIT = """\
[[hooks.event]]
match = "PostToolUse:Edit"
description = "lint"
pipe_output = true
command = '''python3 -c "import json, sys; e = json.load(sys.stdin); p = e['tool_input']['file_path']; print('lint: ' + p.rsplit('/', 1)[-1] + ': line 2: use double quotes')"'''
"""


def test_a_users_pre_tool_use_hook_denies_rm_rf_and_the_model_reads_why(tmp_path, claude_bin):
    repo = make_repo(tmp_path, files={"ralph.toml": NO_RM_RF, "build/out.txt": "artifact\n"})
    turns = [bash("rm -rf build", "Clean the build", id="t_rm"), bash("ls build", "List", id="t_ls"), text("I left build/ alone.")]
    result = run_scenario(repo, turns, prompt="Clean up the build directory.")

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert_hooks_answered_cleanly(result)
    # the command never ran; the harmless one did
    assert result.read("build/out.txt") == "artifact\n"
    listed = result.tool_result("t_ls")
    assert not listed["is_error"] and "out.txt" in listed["content"], listed
    # our answer: a deny carrying the user's hook output as the reason
    outputs = [o for o in result.hook_outputs("PreToolUse") if o]
    assert len(outputs) == 1, result.describe()
    reason = outputs[0]["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason == ('Blocked by your hook "no rm -rf" (ralph.toml:1), exit 1: '
                      "rm -rf is not allowed in this repository: delete the files you mean one by one")
    entries = [e for e in result.hooks_log() if e.get("event") == "PreToolUse"]
    assert [e["decision"] for e in entries] == ["deny", "allow"], result.describe()
    assert [h["result"] for e in entries for h in e["event_hooks"]] == ["failed", "success"]
    # the model's side: the error tool_result is the reason, word for word
    assert result.tool_result("t_rm") == {"content": f"PreToolUse:Bash hook error: {reason}", "is_error": True, "request": 1}


def test_a_users_post_tool_use_edit_hook_output_reaches_the_model(tmp_path, claude_bin):
    repo = make_repo(tmp_path, files={"ralph.toml": LINT_AFTER_EDIT, "app.py": "x = 1\ny = 'two'\n"})
    target = f"{repo}/app.py"
    turns = [read(target, id="t_read"), edit(target, "x = 1", "x = 2", id="t_edit"), text("Edited.")]
    result = run_scenario(repo, turns, prompt="Set x to 2.")

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert_hooks_answered_cleanly(result)
    assert result.read("app.py") == "x = 2\ny = 'two'\n"
    outputs = [o for o in result.hook_outputs("PostToolUse") if o]
    assert len(outputs) == 1, result.describe()  # only after the Edit, not after the Read
    context = outputs[0]["hookSpecificOutput"]["additionalContext"]
    assert context == '[output of your hook "lint"]\nlint: app.py: line 2: use double quotes'
    edit_entries = [e for e in result.hooks_log() if e.get("event") == "PostToolUse" and e.get("tool") == "Edit"]
    assert edit_entries[0]["decision"] == "context" and edit_entries[0]["event_hooks"][0]["result"] == "success"
    # the model's side: the request after the edit carries it, as the client words it
    assert f"PostToolUse:Edit hook additional context: {context}" in result.new_text(2), result.new_text(2)[-3000:]


def test_a_hanging_user_hook_still_gets_one_json_answer_inside_the_clients_timeout(tmp_path, claude_bin):
    config = """\
[[hooks.event]]
match = "PreToolUse:Bash"
description = "hangs"
timeout = 1
command = "sleep 300"
"""
    repo = make_repo(tmp_path, files={"ralph.toml": config})
    result = run_scenario(repo, [bash("echo hi", id="t_echo"), text("Done.")], prompt="Say hi.")

    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert_hooks_answered_cleanly(result)
    reason = json.loads(result.hook_responses("PreToolUse")[0]["stdout"])["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith('Blocked: your hook "hangs" (ralph.toml:1) gave no answer within'), reason
    assert result.tool_result("t_echo")["is_error"], harness.flatten_text(result.tool_results())
