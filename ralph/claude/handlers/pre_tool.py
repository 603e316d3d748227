"""PreToolUse: the push/merge guard on Bash, read-before-edit on edit tools."""
from ralph.claude.protocol import MAX_JUDGED_COMMAND, HookCall, Outcome, allow, deny
from ralph.state import denials
from ralph.state.locations import config_path


def handle(call: HookCall) -> Outcome:
    check = TOOL_CHECKS.get(call.tool_name)
    return check(call) if check is not None else allow()


def load_guard_policy(call: HookCall) -> object:
    """The [guard] table of ralph.toml. A broken config is logged and the
    defaults apply: they block every push and merge."""
    from ralph.config import section_or_defaults
    from ralph.rules.guard.policy import GuardPolicy

    values, problem = section_or_defaults(call.root, "guard", call.environ)
    if problem:
        call.problems.append(problem)
    return GuardPolicy.from_values(values)


def check_bash(call: HookCall) -> Outcome:
    command = call.tool_input.get("command")
    if not isinstance(command, str):
        # The client rejects such input before running anything.
        return allow()
    if len(command) > MAX_JUDGED_COMMAND:
        # Bounded work per call; what lies past any cut could be a push, so fail closed.
        call.log_extra["command_chars"] = len(command)
        return deny(
            f"ralph-hooks did not run this command: it is {len(command)} characters long and the push/merge guard "
            f"checks at most {MAX_JUDGED_COMMAND}. Write long content to a file with the Write tool, then run a short command."
        )
    path = config_path(call.root, call.environ)
    if path is None:
        # A ralph.toml [guard] table may block more programs: no fast path then.
        from ralph.rules.guard.programs.fast_path import obviously_harmless

        if obviously_harmless(command):
            call.log_extra["guard"] = "plain command"
            return allow()
    from ralph.rules.guard.judge import judge_command

    verdict = judge_command(command, load_guard_policy(call) if path else None, cwd=call.cwd,
                            remotes=lambda: _local_remotes(call.root))
    if verdict.blocked:
        call.log_extra["evidence"] = verdict.evidence[:10]
        call.log_extra["rule_id"] = verdict.rule_id
        outcome = deny(verdict.reason)
        if call.environ.get(denials.ENV_RUN_ID):
            record_denial(call, command, verdict.reason, outcome)
        return outcome
    return allow()


def record_denial(call: HookCall, command: str, reason: str, outcome: Outcome) -> None:
    """During a ralph-loop run: log the denial where the loop reads it, and
    end the session at the loop's limit of denials per iteration (the deny
    still stands: the command never runs)."""
    from ralph.rules.redact import redact

    environ = call.environ
    try:
        iteration = int(environ.get(denials.ENV_ITERATION, "0"))
        limit = int(environ.get(denials.ENV_MAX_DENIALS, "0"))
    except ValueError:
        iteration, limit = 0, 0
    try:
        count = denials.append_denial(call.state_dir, environ.get(denials.ENV_RUN_ID, ""), iteration, environ.get(denials.ENV_STORY),
                                      call.session_id, redact(command), redact(reason))
    except OSError as e:
        call.problems.append(f"could not record the denial: {e}")
        return
    call.log_extra["denials_this_iteration"] = count
    if limit and count >= limit:
        outcome.output["continue"] = False
        outcome.output["stopReason"] = (
            f"ralph-loop: {count} commands denied by the push/merge guard in this iteration (limit {limit}); "
            "the loop ends the iteration and tells the next one why"
        )


def _local_remotes(root: str) -> tuple[str, ...]:
    # asked for by the guard only when a command writes somewhere with git
    from ralph.claude.local_remotes import local_remotes

    return local_remotes(root)


def check_edit(call: HookCall) -> Outcome:
    from ralph.state import reads
    from ralph.rules.read_before_edit import edit_target, judge_edit

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


# tool -> check; the edit tools are ralph.rules.read_before_edit.EDIT_TOOLS
# (a test keeps the two in step; importing that module here would cost every
# Bash call)
TOOL_CHECKS = {
    "Bash": check_bash,
    "Edit": check_edit,
    "MultiEdit": check_edit,
    "Write": check_edit,
    "NotebookEdit": check_edit,
}
