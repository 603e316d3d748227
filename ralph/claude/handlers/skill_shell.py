"""PreSkillShellCommand: a skill's or slash command's inline shell line
(!`cmd`), which the client runs itself and never shows to PreToolUse. The
line is judged by the Bash guard exactly as a Bash tool call is (pre_bash:
the same decisions, the same log line and, in a loop run, the same denial
record); a line the client runs in PowerShell is judged as what it is,
`pwsh -Command <line>`.

The client reads the answer from hookSpecificOutput, whose hookEventName must
name this event, and which holds no additionalContext here: a note for the
model (what a destructive line saved first) goes out as a systemMessage."""
from ralph.claude.handlers import pre_bash
from ralph.claude.protocol import HookCall, Outcome, allow

EVENT = "PreSkillShellCommand"
POWERSHELL = "PowerShell"  # the other value of tool_name: "Bash" or "PowerShell"


def handle(call: HookCall) -> Outcome:
    command = call.tool_input.get("command")
    if not isinstance(command, str):
        # the client's schema makes it a string; there is nothing to run otherwise
        return allow()
    for name in ("command_name", "invoked_by"):
        value = call.payload.get(name)
        if isinstance(value, str):
            call.log_extra["skill" if name == "command_name" else name] = value[:200]
    if call.tool_name == POWERSHELL:
        command = "pwsh -NoProfile -Command " + single_quoted(command)
    return for_this_event(pre_bash.guard(call, command))


def single_quoted(text: str) -> str:
    """`text` as one bash word (no shlex: it imports re on the hot path)."""
    return "'" + text.replace("'", "'\\''") + "'"


def for_this_event(outcome: Outcome) -> Outcome:
    """The guard's answer (written for PreToolUse) in this event's form."""
    specific = outcome.output.get("hookSpecificOutput")
    if isinstance(specific, dict):
        note = specific.pop("additionalContext", None)
        specific["hookEventName"] = EVENT
        if note:
            outcome.output["systemMessage"] = note
        if len(specific) == 1:
            del outcome.output["hookSpecificOutput"]
    return outcome
