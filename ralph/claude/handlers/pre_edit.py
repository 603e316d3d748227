"""PreToolUse on the edit tools (Edit, MultiEdit, Write, NotebookEdit):
read-before-edit; and no edit while a rollback or restore resets the tree
(ralph.state.rollback_lock)."""
from ralph.claude.protocol import HookCall, Outcome, allow, deny
from ralph.state.rollback_lock import busy_reason
from ralph.rules.read_before_edit import edit_target, judge_edit
from ralph.state import reads
from ralph.state.locations import git_dir


def handle(call: HookCall) -> Outcome:
    busy = busy_reason(git_dir(call.root), "this edit")
    if busy:
        call.log_extra["guard"] = "rollback in flight"
        return deny(busy)
    target_path = edit_target(call.tool_name, call.tool_input)
    if target_path is None:
        return allow()  # the client rejects an edit without a path
    target = reads.identify(target_path, call.cwd)
    known = reads.known_files(call.state_dir, call.session_id, call.problems) if target.exists else []
    if target.needs_birth(known):  # an inode read under another name: is it still that file?
        target.birth = reads.birth_time_ns(target.path)
    decision = judge_edit(call.tool_name, target_path, target, known)
    if not decision.allowed and target.exists and reads.case_insensitive_dir(call.root):
        # Only a file replaced by rename lands here on a case-folding filesystem.
        target.case_insensitive = True
        decision = judge_edit(call.tool_name, target_path, target, known)
    return allow() if decision.allowed else deny(decision.reason)
