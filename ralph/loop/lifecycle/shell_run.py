"""Running the shell action (declared in ralph.loop.lifecycle.shell_config): its
command through the lifecycle process runner, with template variables passed
as quoted references to the environment, never pasted into shell text."""
import os
import shlex

from ralph.loop.lifecycle import process, template
from ralph.loop.lifecycle.actions import FAILED, SUCCESS, TIMEOUT, ActionResult, RunContext


def prepare(action: object, ctx: RunContext) -> tuple[list[str], str, str, dict[str, str]]:
    """(argv, command for people, cwd, env) for one run."""
    exports = ctx.exports  # ${HOOK_RESPONSE}-style names set by earlier actions
    command = action["command"]  # type: ignore[index]
    if isinstance(command, str):
        argv = ["/bin/sh", "-c", template.for_shell(command, exports)]
        shown = template.for_people(command, ctx.values, exports)
    else:  # a list runs without a shell: plain values are safe
        argv = [template.json_value(part, ctx.values, exports) for part in command]
        shown = shlex.join(argv)
    cwd = action.get("working_dir") or ctx.root  # type: ignore[attr-defined]
    if not os.path.isabs(cwd):
        cwd = os.path.join(ctx.root, cwd)
    env = dict(ctx.env)
    for key, value in (action.get("env") or {}).items():  # type: ignore[attr-defined]
        env[key] = template.json_value(value, ctx.values, exports)
    env.update({k: v for k, v in ctx.env.items() if k.startswith("RALPH_")})  # the context wins
    return argv, shown, cwd, env


def run(action: object, ctx: RunContext) -> ActionResult:
    argv, shown, cwd, env = prepare(action, ctx)
    timeout = float(action["timeout"])  # type: ignore[index]
    if not action["await"]:  # type: ignore[index]
        try:
            job = ctx.background.start(action, argv, cwd=cwd, env=env, stdin_data=ctx.stdin, timeout=timeout)  # type: ignore[attr-defined]
        except OSError as e:
            return ActionResult(FAILED, message=f"cannot start {argv[0]!r}: {e.strerror or e}", command=shown)
        return ActionResult(SUCCESS, message=f"started in the background (pid {job.pid})", command=shown)
    outcome = process.run(argv, cwd=cwd, env=env, stdin_data=ctx.stdin, timeout=timeout, stopping=ctx.stopping)
    return result_of(outcome, timeout, shown)


def result_of(outcome: object, timeout: float, shown: str) -> ActionResult:
    o = outcome
    if o.error:  # type: ignore[attr-defined]
        return ActionResult(FAILED, duration=o.duration, message=o.error, command=shown)  # type: ignore[attr-defined]
    exit_code = o.exit_code  # type: ignore[attr-defined]
    if o.timed_out:  # type: ignore[attr-defined]
        status, message = TIMEOUT, f"timed out after {timeout:g}s: its process group was killed"
        exit_code = 124
    elif o.stopped:  # type: ignore[attr-defined]
        status, message = FAILED, "stopped: the loop is being interrupted"
    elif exit_code == 0:
        status, message = SUCCESS, ""
    elif exit_code is not None and exit_code < 0:
        status, message = FAILED, f"killed by signal {-exit_code}"
    else:
        status, message = FAILED, f"exit {exit_code}"
    return ActionResult(status, exit=exit_code, duration=o.duration, output=o.output.rstrip("\n"),  # type: ignore[attr-defined]
                        output_bytes=o.output_bytes, message=message, command=shown)  # type: ignore[attr-defined]
