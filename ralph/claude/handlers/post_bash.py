"""PostToolUse and PostToolUseFailure on Bash: a command that ran tests is
judged as a test run; any other command costs the look at its words.

A command that exited 0 arrives on PostToolUse (a failure may still hide
behind `| tail`, `|| true`, ...); one that exited non-zero arrives on
PostToolUseFailure, with `error: "Exit code N\\n<output>"`."""
import sys

from ralph.claude.project_tests import load_tests_config
from ralph.claude.protocol import HookCall, Outcome, allow, bash_output, exit_code_from_failure, judged_command
from ralph.rules.outcome.command_shape import command_shape

# what the command is -> the module that judges its result (`judge(call,
# command, exit_code, output, tests_config, shape)`), imported only for a
# command of that kind: most Bash calls run no tests and load none of it.
JUDGES = {"test run": "ralph.claude.bash_results"}


def handle(call: HookCall) -> Outcome:
    command = call.tool_input.get("command")
    if not isinstance(command, str):
        return allow()
    command = judged_command(call, command)
    tests_config = load_tests_config(call)
    shape = command_shape(command, tuple(getattr(tests_config, "commands", ()) or ()))
    if shape.kind is None:
        return allow()  # not a test run: its output (perhaps a large persisted file) is not read
    if call.event == "PostToolUseFailure":
        error = call.payload.get("error")
        if call.payload.get("is_interrupt") is True or not isinstance(error, str):
            return allow()
        exit_code, output = exit_code_from_failure(error)
    else:
        exit_code, output = 0, bash_output(call.payload.get("tool_response"))
    name = JUDGES["test run"]
    __import__(name)
    return sys.modules[name].judge(call, command, exit_code, output, tests_config, shape) or allow()
