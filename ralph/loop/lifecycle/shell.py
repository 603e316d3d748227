"""The shell action (`type = "shell"`, the default): a command run by /bin/sh
(a string) or as is (a list), in its own process group, with the context in
the environment and as JSON on stdin. Template variables are never pasted
into shell text: see ralph.loop.lifecycle.template."""
from __future__ import annotations

import os

from ralph.loop.lifecycle import template
from ralph.loop.lifecycle.actions import FAILED, SUCCESS, TIMEOUT, ActionResult, RunContext
from ralph.loop.lifecycle.config import check_keys, exported_names

KEYS: dict[str, tuple[object, str, float | None]] = {
    "command": (None, "command", None),
    "working_dir": (None, "path?", None),
    "env": ({}, "table", None),
}
EXPORTS: tuple[str, ...] = ()


def validate(table: dict, where: object) -> list[str]:
    errors = []
    name = getattr(where, "table", "hooks")
    if "command" not in table:
        return [f"{where}: [{name}] a shell hook needs command = \"...\" (run by /bin/sh) or a list (run as is)"]
    errors += check_keys({k: v for k, v in table.items() if k in ("command", "working_dir")}, KEYS, where, name)  # type: ignore[arg-type]
    command = table.get("command")
    exports = exported_names()
    texts = [command] if isinstance(command, str) else command if isinstance(command, list) else []
    for text in texts:
        if isinstance(text, str):
            errors += [f"{where.key('command')}: [{name}] command: {p}" for p in template.check(text, exports)]  # type: ignore[attr-defined]
    env = table.get("env", {})
    if not isinstance(env, dict):
        errors.append(f"{where.key('env')}: [{name}] env must be a table of NAME = \"value\", got {env!r}")  # type: ignore[attr-defined]
    else:
        for key, value in env.items():
            if not isinstance(value, str):
                errors.append(f"{where.key('env')}: [{name}] env.{key} must be a string, got {value!r}")  # type: ignore[attr-defined]
            elif key.upper().startswith("RALPH_"):
                errors.append(f"{where.key('env')}: [{name}] env.{key}: RALPH_* names carry the hook context and cannot be set here; pick another name")  # type: ignore[attr-defined]
            else:
                errors += [f"{where.key('env')}: [{name}] env.{key}: {p}" for p in template.check(value, exports)]  # type: ignore[attr-defined]
    return errors


def prepare(action: object, ctx: RunContext) -> tuple[list[str], str, str, dict[str, str]]:
    """(argv, command for people, cwd, env) for one run."""
    exports = exported_names()  # ${HOOK_RESPONSE}-style names set by earlier actions
    command = action["command"]  # type: ignore[index]
    if isinstance(command, str):
        argv = ["/bin/sh", "-c", template.for_shell(command, exports)]
        shown = template.for_people(command, ctx.values, exports)
    else:  # a list runs without a shell: plain values are safe
        argv = [template.json_value(part, ctx.values, exports) for part in command]
        import shlex

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
    # the process runner (subprocess) here, not at the top: `ralph-loop
    # --dry-run` validates shell hooks (importing this module) without running them
    from ralph.loop.lifecycle import process

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
