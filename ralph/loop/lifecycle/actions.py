"""The contract between the engine and its action types: what every type's
modules build on (ralph.loop.lifecycle.action_types is the table of types).

The module that declares a type provides

    KEYS: dict[str, Key]                              # its own keys (ralph.config.schema.Key)
    validate(table: dict, where: Where, exports: dict[str, str]) -> list[str]
                                                      # every config error, "file:line: ..."; exports:
                                                      # the names earlier actions may set (key -> env name)

(a built-in type's KEYS are declared in ralph.config.tables.hooks, with the
Table the configuration reference lists), and the running module

    run(action: HookSpec, ctx: RunContext) -> ActionResult

A type's modules import this one, never the table that loads them. The
engine owns what every type shares (when, enabled, on_failure, retries,
retry_delay, await, timeout, pipe_output: COMMON_KEYS, in
ralph.config.tables.hooks), so a new type only runs its action once and
reports what happened.
"""
from __future__ import annotations




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

    __slots__ = ("point", "env", "values", "stdin", "root", "state_dir", "log_dir", "background", "stopping", "exports")

    def __init__(self, point: str, env: dict[str, str], values: dict[str, str], stdin: bytes, root: str,
                 state_dir: str, log_dir: str, background: object, stopping: object = None,
                 exports: dict[str, str] | None = None) -> None:
        self.point = point
        self.exports = exports or {}  # names earlier actions may set (key -> env name), for templates
        self.env = env  # the process environment for the action: os.environ + context + exports
        self.values = values  # variable name (ITERATION, STORY_ID, ...) -> text, for templates
        self.stdin = stdin  # the context as one JSON object
        self.root = root
        self.state_dir = state_dir
        self.log_dir = log_dir  # .ralph/logs/<run>/ for files an action keeps
        self.background = background  # Background: where await=false work is registered
        self.stopping = stopping or (lambda: False)  # callable: True once the loop is being stopped
