"""PreToolUse: the push/merge guard on Bash, read-before-edit on edit tools."""
from __future__ import annotations

from ralph.hook import HookCall, Outcome, allow, deny
from ralph.rules.read_before_edit import EDIT_TOOLS


def handle(call: HookCall) -> Outcome:
    if call.tool_name == "Bash":
        return check_bash(call)
    if call.tool_name in EDIT_TOOLS:
        return check_edit(call)
    return allow()


def load_guard_policy(call: HookCall) -> object | None:
    """The [guard] table of ralph.toml, or None (defaults). A broken config is
    logged and the defaults apply: they block every push and merge."""
    from ralph.config import config_path

    path = config_path(call.root, call.environ)
    if path is None:
        return None
    from ralph.config import ConfigError, load_config, section
    from ralph.rules.guard import GuardPolicy

    try:
        return GuardPolicy.from_config(section(load_config(call.root, call.environ), "guard", path), path)
    except ConfigError as e:
        call.problems.append(f"config ignored: {e}")
        return None


def check_bash(call: HookCall) -> Outcome:
    command = call.tool_input.get("command")
    if not isinstance(command, str):
        # The client rejects such input before running anything.
        return allow()
    from ralph.rules.guard import judge_command

    verdict = judge_command(command, load_guard_policy(call))
    if verdict.blocked:
        call.log_extra["evidence"] = verdict.evidence[:10]
        return deny(verdict.reason)
    return allow()


def check_edit(call: HookCall) -> Outcome:
    from ralph.rules.read_before_edit import edit_target, judge_edit

    target_path = edit_target(call.tool_name, call.tool_input)
    if target_path is None:
        return allow()  # the client rejects an edit without a path
    from ralph import reads

    target = reads.identify(target_path, call.cwd)
    known = reads.known_files(call.state_dir, call.session_id, call.problems) if target.exists else []
    decision = judge_edit(call.tool_name, target_path, target, known)
    if not decision.allowed and reads.case_insensitive_dir(call.root):
        # Only a file replaced by rename lands here on a case-folding filesystem.
        target.case_insensitive = True
        decision = judge_edit(call.tool_name, target_path, target, known)
    if decision.allowed:
        return allow()
    return deny(decision.reason)
