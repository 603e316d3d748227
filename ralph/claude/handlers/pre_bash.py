"""PreToolUse on Bash: the push/merge guard. A command too plain to push or
merge (`ls -la`, `cat notes.txt`) is allowed at once; any other is judged by the
guard, which is loaded only then. `guard` also judges skills' shell lines
(handlers.skill_shell). While a rollback or restore resets the tree, only
plainly read-only commands run (ralph.state.rollback_lock)."""
from ralph.claude.protocol import MAX_JUDGED_COMMAND, HookCall, Outcome, allow, deny
from ralph.plugins import load
from ralph.state.rollback_lock import busy_reason
from ralph.rules.guard.programs.fast_path import obviously_harmless, plainly_read_only
from ralph.state.locations import config_path, git_dir

# what the command needs -> the module that judges it (`judge(call, command,
# config_path)`): the guard parses bash, and most commands never need it.
JUDGES = {"shell": "ralph.claude.bash_guard"}


def handle(call: HookCall) -> Outcome:
    command = call.tool_input.get("command")
    if not isinstance(command, str):
        # The client rejects such input before running anything.
        return allow()
    return guard(call, command)


def guard(call: HookCall, command: str) -> Outcome:
    """The guard's answer on `command`, run in the shell of this call."""
    if len(command) > MAX_JUDGED_COMMAND:
        # Bounded work per call; what lies past any cut could be a push, so fail closed.
        call.log_extra["command_chars"] = len(command)
        return deny(
            f"ralph-hooks did not run this command: it is {len(command)} characters long and the push/merge guard "
            f"checks at most {MAX_JUDGED_COMMAND}. Write long content to a file with the Write tool, then run a short command."
        )
    if not plainly_read_only(command):
        busy = busy_reason(git_dir(call.root), "this command")
        if busy:
            call.log_extra["guard"] = "rollback in flight"
            return deny(busy)
    path = config_path(call.root, call.environ)
    if path is None:
        # A ralph.toml [guard] table may block more programs: no fast path then.
        if obviously_harmless(command):
            call.log_extra["guard"] = "plain command"
            return allow()
    return load(JUDGES["shell"]).judge(call, command, path)
