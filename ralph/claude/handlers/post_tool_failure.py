"""PostToolUseFailure: a Bash command that exited non-zero arrives here (not on
PostToolUse), with `error: "Exit code N\\n<output>"`. Judge it as a test run."""
from __future__ import annotations

from ralph.claude.protocol import HookCall, Outcome, allow, judged_command


def handle(call: HookCall) -> Outcome:
    if call.tool_name != "Bash" or call.payload.get("is_interrupt") is True:
        return allow()
    command = call.tool_input.get("command")
    error = call.payload.get("error")
    if not isinstance(command, str) or not isinstance(error, str):
        return allow()
    from ralph.claude.bash_results import on_bash_result
    from ralph.rules.outcome.verdict import exit_code_from_failure

    exit_code, output = exit_code_from_failure(error)
    return on_bash_result(call, judged_command(call, command), exit_code, output) or allow()
