"""The action types a lifecycle hook may have: `type` -> the module that
declares it, the module that runs it (the same one, unless running needs
imports validating must not pay for: `ralph-loop --dry-run` validates every
hook), and the environment names its runs export (known to `when` and the
templates of every hook, whatever types are configured). Each module is
imported by name (ralph.plugins.load) the first time it is needed; the
contract they implement is ralph.loop.lifecycle.actions.
"""
from __future__ import annotations

from ralph.loop.lifecycle.context import export_key
from ralph.plugins import load


class ActionType:
    __slots__ = ("declared_in", "run_in", "exports")

    def __init__(self, declared_in: str, run_in: str | None = None, exports: tuple[str, ...] = ()) -> None:
        self.declared_in = declared_in  # module with KEYS and validate()
        self.run_in = run_in or declared_in  # module with run()
        self.exports = exports  # environment names its ActionResult.exports sets

    def __repr__(self) -> str:
        return f"ActionType({self.declared_in!r}, {self.run_in!r}, {self.exports!r})"


ACTIONS: dict[str, ActionType] = {
    "shell": ActionType("ralph.loop.lifecycle.shell_config", "ralph.loop.lifecycle.shell_run"),
    "webhook": ActionType("ralph.loop.lifecycle.webhook_config", "ralph.loop.lifecycle.webhook_run",
                          ("RALPH_HOOK_RESPONSE", "RALPH_HOOK_ACTION", "RALPH_HOOK_MESSAGE")),
    "spawn": ActionType("ralph.loop.lifecycle.spawn_config", "ralph.loop.lifecycle.spawn_run", ("RALPH_SPAWN_OUTPUT",)),
}


def action_module(type_name: str) -> object | None:
    """The module declaring the type (KEYS, validate); None for an unknown type."""
    action = ACTIONS.get(type_name)
    return load(action.declared_in) if action else None


def run_module(type_name: str) -> object:
    """The module whose run() runs the type."""
    return load(ACTIONS[type_name].run_in)


def exported_names() -> dict[str, str]:
    """Names actions export (RALPH_HOOK_RESPONSE, ...): usable in templates and `when`."""
    names: dict[str, str] = {}
    for action in ACTIONS.values():
        for env in action.exports:
            names[export_key(env)] = env
    return names
