"""PostToolUse and PostToolUseFailure on Bash: a command that ran tests is
judged as a test run; any other command costs the look at its words, and a
plain one of a program that runs no tests (`ls -la src`, `git status`) not
even the parse.

A command that exited 0 arrives on PostToolUse (a failure may still hide
behind `| tail`, `|| true`, ...); one that exited non-zero arrives on
PostToolUseFailure, with `error: "Exit code N\\n<output>"`."""
from ralph.claude.protocol import HookCall, Outcome, allow, bash_output, exit_code_from_failure, judged_command
from ralph.plugins import load
from ralph.rules.outcome.fast_path import runs_no_tests
from ralph.state.locations import config_path

# what the command needs -> the module that answers: "shape" finds whether
# and how it ran tests (`test_shape(call, command, config_path)`: the
# project's [tests] and command_shape, which parses bash), "test run" judges
# the result of one (`judge(call, command, exit_code, output, tests_config,
# shape)`). Each is imported only for a command that needs it: most Bash
# calls need neither.
JUDGES = {"shape": "ralph.claude.project_tests", "test run": "ralph.claude.bash_results"}


def handle(call: HookCall) -> Outcome:
    command = call.tool_input.get("command")
    if not isinstance(command, str):
        return allow()
    command = judged_command(call, command)
    path = config_path(call.root, call.environ)
    if path is None and runs_no_tests(command):
        call.log_extra["tests"] = "plain command"
        return allow()  # (a ralph.toml's [tests] may declare any command a test run)
    tests_config, shape = load(JUDGES["shape"]).test_shape(call, command, path)
    if shape.kind is None:
        return allow()  # not a test run: its output (perhaps a large persisted file) is not read
    if call.event == "PostToolUseFailure":
        error = call.payload.get("error")
        if call.payload.get("is_interrupt") is True or not isinstance(error, str):
            return allow()
        exit_code, output = exit_code_from_failure(error)
    else:
        exit_code, output = 0, bash_output(call.payload.get("tool_response"))
    return load(JUDGES["test run"]).judge(call, command, exit_code, output, tests_config, shape) or allow()
