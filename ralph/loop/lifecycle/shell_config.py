"""The shell action (`type = "shell"`, the default), as declared: the checks
of its keys (declared in ralph.config.tables.hooks; running it:
ralph.loop.lifecycle.shell_run). A command run by /bin/sh (a string) or as
is (a list), in its own process group, with the context in the environment
and as JSON on stdin. Template variables are never pasted into shell text:
see ralph.loop.lifecycle.template."""
from __future__ import annotations

from ralph.config.tables.hooks import SHELL_KEYS as KEYS  # KEYS: the action contract (ralph.loop.lifecycle.actions)
from ralph.config.schema import check_keys
from ralph.loop.lifecycle import template


def validate(table: dict, where: object, exports: dict[str, str]) -> list[str]:
    errors = []
    name = getattr(where, "table", "hooks")
    if "command" not in table:
        return [f"{where}: [{name}] a shell hook needs command = \"...\" (run by /bin/sh) or a list (run as is)"]
    errors += check_keys({k: v for k, v in table.items() if k in ("command", "working_dir")}, KEYS, where, name)  # type: ignore[arg-type]
    command = table.get("command")
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
