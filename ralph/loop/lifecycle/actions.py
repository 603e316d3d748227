"""The contract between the engine and its action types.

`ACTIONS` maps a hook's `type` to what the engine knows of it without
importing anything: the module that declares it, the module that runs it
(the same one, unless running needs imports validating must not pay for:
`ralph-loop --dry-run` validates every hook), and the environment names its
runs export (known to `when` and templates of every hook, whatever types
are configured). The declaring module provides

    KEYS: dict[str, Key]                              # its own keys (ralph.config.schema.Key)
    validate(table: dict, where: Where) -> list[str]  # every config error, "file:line: ..."

(a built-in type's KEYS are declared in ralph.config.tables.hooks, with the
Table the configuration reference lists), and the running module

    run(action: HookSpec, ctx: RunContext) -> ActionResult

Both are imported by name, at one site (load()), the first time they are needed.
The engine owns what every type shares (when, enabled, on_failure, retries,
retry_delay, await, timeout, pipe_output: COMMON_KEYS, in
ralph.config.tables.hooks), so a new type only runs its action once and
reports what happened.
"""
from __future__ import annotations

import sys


class ActionType:
    __slots__ = ("declared_in", "run_in", "exports")

    def __init__(self, declared_in: str, run_in: str | None = None, exports: tuple[str, ...] = ()) -> None:
        self.declared_in = declared_in  # module with KEYS and validate()
        self.run_in = run_in or declared_in  # module with run()
        self.exports = exports  # environment names its ActionResult.exports sets

    def __repr__(self) -> str:
        return f"ActionType({self.declared_in!r}, {self.run_in!r}, {self.exports!r})"


ACTIONS: dict[str, ActionType] = {
    "shell": ActionType("ralph.loop.lifecycle.shell", "ralph.loop.lifecycle.shell_run"),
    "webhook": ActionType("ralph.loop.lifecycle.webhook", "ralph.loop.lifecycle.webhook_send",
                          ("RALPH_HOOK_RESPONSE", "RALPH_HOOK_ACTION", "RALPH_HOOK_MESSAGE")),
    "spawn": ActionType("ralph.loop.lifecycle.spawn", "ralph.loop.lifecycle.spawn_run", ("RALPH_SPAWN_OUTPUT",)),
}

SUCCESS = "success"
FAILED = "failed"
TIMEOUT = "timeout"


class ActionResult:
    """What one action run did."""

    __slots__ = ("status", "exit", "duration", "output", "output_bytes", "abort", "skip", "exports",
                 "message", "command", "attempts")

    def __init__(self, status: str, exit: int | None = None, duration: float = 0.0, output: str = "",
                 output_bytes: int = 0, abort: str | None = None, skip: bool = False,
                 exports: dict[str, str] | None = None, message: str = "", command: str = "") -> None:
        self.status = status  # SUCCESS | FAILED | TIMEOUT
        self.exit = exit  # exit code; None when it never ran or was killed
        self.duration = duration  # seconds
        self.output = output  # stdout+stderr, bounded, ANSI stripped
        self.output_bytes = output_bytes  # how much it really wrote
        self.abort = abort  # a reason: ends the loop with finish type hook_abort
        self.skip = skip  # pre_iteration only: skip this iteration's agent run
        self.exports = exports or {}  # env vars the later actions of this fire see
        self.message = message  # one line for people (why it failed, what was killed)
        self.command = command  # what ran, after substitution (for traces and `ralph hooks test`)
        self.attempts = 1  # runs, with on_failure = "retry" (set by the engine)

    @property
    def ok(self) -> bool:
        return self.status == SUCCESS

    def __repr__(self) -> str:
        return f"ActionResult({self.status!r}, exit={self.exit!r}, abort={self.abort!r})"


class RunContext:
    """Everything an action needs to run once at one point."""

    __slots__ = ("point", "env", "values", "stdin", "root", "state_dir", "log_dir", "background", "stopping")

    def __init__(self, point: str, env: dict[str, str], values: dict[str, str], stdin: bytes, root: str,
                 state_dir: str, log_dir: str, background: object, stopping: object = None) -> None:
        self.point = point
        self.env = env  # the process environment for the action: os.environ + context + exports
        self.values = values  # variable name (ITERATION, STORY_ID, ...) -> text, for templates
        self.stdin = stdin  # the context as one JSON object
        self.root = root
        self.state_dir = state_dir
        self.log_dir = log_dir  # .ralph/logs/<run>/ for files an action keeps
        self.background = background  # Background: where await=false work is registered
        self.stopping = stopping or (lambda: False)  # callable: True once the loop is being stopped


def load(name: str) -> object:
    __import__(name)  # not importlib.import_module: importing importlib (and warnings) costs the dry run
    return sys.modules[name]


def action_module(type_name: str) -> object | None:
    """The module declaring the type (KEYS, validate); None for an unknown type."""
    action = ACTIONS.get(type_name)
    return load(action.declared_in) if action else None


def run_module(type_name: str) -> object:
    """The module whose run() runs the type."""
    return load(ACTIONS[type_name].run_in)
