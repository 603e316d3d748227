"""Users' own commands on Claude Code events: `[[hooks.event]]` in ralph.toml.

The dispatcher (ralph/claude/dispatch.py) asks `select()` which hooks match
after ralph's own rule has answered, and only when ralph.toml can declare
such hooks: a project without them never imports this module. The matching
hooks run in order (ralph.claude.event_command_run) with the event's context
in its environment and the event JSON on stdin:

- PreToolUse: a hook that exits non-zero, prints `{"decision": "deny", ...}`,
  times out or cannot start denies the tool call (its output is the reason
  the model reads); the first denial stops the chain. A ralph deny comes
  first and is final: no user hook runs after it.
- Other events: failures are logged; `pipe_output = true` sends the hook's
  output to the model as `additionalContext` where the event carries it.

The whole chain fits a per-event budget inside the client's own timeout, a
hook's process group is killed at its timeout (and when it exits, so nothing
it forked holds our pipes), its output is read in bounded buffers, and a
depth counter in the environment stops hooks that fire ralph's hooks again.
"""
from __future__ import annotations

import os

from ralph.claude.protocol import CLIENT_EVENTS, HookCall, Outcome, deny
from ralph.config.locate import Locator
from ralph.config.reading import CACHE_FILE, cached_parse
from ralph.config.schema import ConfigError, ValueProblem, check_table
from ralph.config.tables.hooks import EVENT_KEYS

DEPTH_VAR = "RALPH_EVENT_HOOK_DEPTH"
# A hook may start something that fires ralph's hooks once more (a nested
# `claude -p`); at this depth user hooks are skipped, so a hook that triggers
# itself stops instead of recursing until the client gives up.
MAX_DEPTH = 2
OUTPUT_CAP = 64 * 1024  # bytes kept per stream; the rest is read and dropped
ENV_VALUE_CAP = 64 * 1024  # Linux refuses a single env string over 128 KiB
KILL_GRACE = 0.2  # after SIGTERM, and after the hook exits: then its group is killed
# the global hooks.toml's parse, kept apart from the project's (each call reads both)
GLOBAL_CACHE_FILE = os.path.join(os.path.dirname(CACHE_FILE), "global-hooks.json")
# of the keys ralph.config.tables.hooks declares (EVENT_KEYS), the ones a table must set
REQUIRED = ("match", "command")

# Seconds all user hooks of one call may take together. The client's timeout
# for ralph is 30 s on PreToolUse (and ralph's own deadline 20 s), 10 s on
# UserPromptSubmit, 120 s on PostToolUse(Failure), 30 s on Stop
# (settings.example.json); the rest of the budget is ralph's own work.
EVENT_BUDGET = {
    "PreToolUse": 15.0,
    "UserPromptSubmit": 7.0,
    "PostToolUse": 60.0,
    "PostToolUseFailure": 60.0,
    "Stop": 20.0,
    "SessionEnd": 20.0,
}
DEFAULT_BUDGET = 20.0

# The code-forge names, accepted as aliases of Claude Code's events.
ALIASES = {
    "tool:pre_execute": "PreToolUse",
    "tool:post_execute": "PostToolUse",
    "tool:error": "PostToolUseFailure",
    "session:start": "SessionStart",
    "session:end": "SessionEnd",
    "user:prompt_submit": "UserPromptSubmit",
}
EVENT_ALIAS = {event: alias for alias, event in ALIASES.items()}
EVENTS = CLIENT_EVENTS  # Claude Code 2.1.330's events
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied")
# Events whose answer carries hookSpecificOutput.additionalContext to the model.
# (Stop takes it too, but there it makes the model go on: never from a pipe.)
CONTEXT_EVENTS = (
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SessionStart", "PostToolBatch",
    "SubagentStart", "Notification", "Setup",
)


class EventHook:
    __slots__ = ("number", "line", "patterns", "match", "command", "working_dir", "timeout", "env", "enabled",
                 "description", "pipe_output")

    def __init__(self, number: int, line: str, values: dict) -> None:
        self.number = number  # 1-based position among the [[hooks.event]] tables
        self.line = line  # "ralph.toml:12": where the table starts, for messages
        self.match = values["match"]
        self.patterns = split_patterns(values["match"])
        self.command = values["command"]
        self.working_dir = values["working_dir"]
        self.timeout = float(values["timeout"])
        self.env = values["env"]
        self.enabled = values["enabled"]
        self.description = values["description"] or ""
        self.pipe_output = values["pipe_output"]

    @property
    def name(self) -> str:
        name = self.description or (self.command if isinstance(self.command, str) else " ".join(self.command))
        return name if len(name) <= 80 else name[:77] + "..."

    @property
    def label(self) -> str:
        return f'hook "{self.name}" ({self.line})'


# ---- patterns ----


def split_patterns(match: str) -> list[str]:
    return [p.strip() for p in match.split(",") if p.strip()]


def subjects(event: str, tool_name: str) -> list[str]:
    """Every name a pattern may use for this call: the event and its alias,
    each alone and with `:<tool>`. Compared case-insensitively."""
    names = [event]
    alias = EVENT_ALIAS.get(event)
    if alias:
        names.append(alias)
    result = [n.lower() for n in names]
    if tool_name:
        result.extend(f"{n}:{tool_name}".lower() for n in names)
    return result


def glob_match(pattern: str, text: str) -> bool:
    """`*` matches any run of characters (colons too), `?` one character."""
    p = t = 0
    star = -1
    mark = 0
    while t < len(text):
        if p < len(pattern) and (pattern[p] == "?" or pattern[p] == text[t]):
            p += 1
            t += 1
        elif p < len(pattern) and pattern[p] == "*":
            star = p
            mark = t
            p += 1
        elif star >= 0:
            p = star + 1
            mark += 1
            t = mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


def matches(hook_patterns: list[str], event: str, tool_name: str) -> bool:
    names = subjects(event, tool_name)
    return any(glob_match(pattern.lower(), name) for pattern in hook_patterns for name in names)


def pattern_problem(pattern: str) -> str | None:
    """Why a pattern can never match a Claude Code event, or None.

    A pattern can match when it glob-matches an event name (or alias), or
    `<tool event>:<tool>` for a tool shaped like the pattern's own last part."""
    lowered = pattern.lower()
    tail = lowered.rsplit(":", 1)[-1].replace("*", "x").replace("?", "x") or "x"
    names = [e.lower() for e in EVENTS] + list(ALIASES)
    tool_names = [e.lower() for e in TOOL_EVENTS] + [a for a, e in ALIASES.items() if e in TOOL_EVENTS]
    if any(glob_match(lowered, n) for n in names) or any(glob_match(lowered, f"{n}:{tail}") for n in tool_names):
        return None
    head = lowered.rsplit(":", 1)[0]
    if ":" in lowered and head in names:
        canonical = ALIASES.get(head) or next(e for e in EVENTS if e.lower() == head)
        return (f"pattern {pattern!r}: {canonical} has no tool name to match "
                f"(tool names go with {', '.join(TOOL_EVENTS)})")
    return (f"pattern {pattern!r} matches no Claude Code event; use an event "
            f"(PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SessionStart, ...) "
            f"or an alias ({', '.join(ALIASES)}), optionally with :ToolName, a glob (*), or a comma list")


# ---- config ----


def pattern_value(value: object, limits: object, key: str) -> object:
    """The "pattern" kind of `match`: patterns that can match a Claude Code event."""
    if not isinstance(value, str) or not split_patterns(value):
        raise ValueProblem(f"must be an event pattern string like \"PreToolUse:Bash\", got {value!r}")
    for pattern in split_patterns(value):
        problem = pattern_problem(pattern)
        if problem:
            raise ValueProblem(problem)
    return value


# the kinds of [[hooks.event]] that only this module can check (EVENT_TABLE.kinds)
KINDS = {"pattern": pattern_value}


def parse_event_hooks(config: dict, path: str, text: str = "") -> tuple[list[EventHook], list[str]]:
    """The `[[hooks.event]]` tables of a parsed ralph.toml: (hooks, errors).
    Each error reads `<file>:<line>: [[hooks.event]] #N key: what is wrong; how to fix`;
    a table with an error is left out of the hooks."""
    hooks_table = config.get("hooks")
    if hooks_table is None:
        return [], []
    if not isinstance(hooks_table, dict):
        return [], [f"{path}: [hooks] must be a table, got {type(hooks_table).__name__}"]
    tables = hooks_table.get("event")
    if tables is None:
        return [], []
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        return [], [f"{path}: hooks.event must be [[hooks.event]] tables"]
    found = Locator(path, text).tables.get("hooks.event", []) if text else []
    hooks: list[EventHook] = []
    errors: list[str] = []
    for index, table in enumerate(tables):
        header, key_lines = found[index] if index < len(found) else (None, {})
        where_table = f"{path}:{header}" if header else path

        def where(key: str) -> str:
            return f"{path}:{key_lines.get(key, header) or '?'}"

        problems = [f"{where(key)}: [[hooks.event]] #{index + 1}: unknown key {key!r}; known keys: {', '.join(EVENT_KEYS)}"
                    for key in table if key not in EVENT_KEYS]
        problems += [f"{where_table}: [[hooks.event]] #{index + 1}: {key} is required; add {key} = ..."
                     for key in REQUIRED if key not in table]
        in_order = {key: table[key] for key in EVENT_KEYS if key in table}
        check_table(in_order, EVENT_KEYS, where, f"[[hooks.event]] #{index + 1}", problems, KINDS)
        if problems:
            errors.extend(problems)
            continue
        values = {key: table.get(key, declared.default) for key, declared in EVENT_KEYS.items()}
        shown = os.path.basename(path) + (f":{header}" if header else "")
        hooks.append(EventHook(index + 1, shown, values))
    return hooks, errors


def validate(config: dict, path: str, text: str = "") -> list[str]:
    """Config errors of every [[hooks.event]] table (for `ralph hooks list`, --dry-run, doctor)."""
    return parse_event_hooks(config, path, text)[1]


# ---- context ----


# ---- the chain ----


def summary(errors: list[str]) -> str:
    return "; ".join(errors[:3]) + (f" (and {len(errors) - 3} more)" if len(errors) > 3 else "")


def _fail_config(call: HookCall, outcome: Outcome, errors: list[str]) -> Outcome:
    """A hooks file that cannot be read or parsed (no hook in it is known):
    on PreToolUse the call is denied (a check that cannot be read is a check
    that did not pass); elsewhere it is logged and shown to the person."""
    message = summary(errors)
    call.problems.append(f"event hooks: {message}")
    if call.event == "PreToolUse":
        return deny(f"ralph-hooks could not read your event hooks, so this tool call was not checked and did not run: "
                    f"{message}. Fix the file (see docs/event-hooks.md).")
    return with_message(outcome, f"ralph-hooks: your [[hooks.event]] hooks did not run: {message}")


def _warn_skipped(call: HookCall, outcome: Outcome, errors: list[str]) -> Outcome:
    """Invalid [[hooks.event]] tables in a file that was read: each is left
    out with a warning naming its file and line, and the valid ones run (an
    invalid hook never takes the others down)."""
    message = summary(errors)
    call.problems.append(f"event hooks: skipped invalid tables: {message}")
    return with_message(outcome, f"ralph-hooks: skipped invalid [[hooks.event]] table(s), the others run: {message}")


def with_message(outcome: Outcome, text: str) -> Outcome:
    output = dict(outcome.output)
    output["systemMessage"] = text
    return Outcome(output, outcome.decision, outcome.reason)


def read_source(call: HookCall, path: str, data: bytes | None, cache_file: str) -> tuple[dict | None, str, str]:
    """(parsed config, text, "") of one hooks file, or (None, "", why not)."""
    if data is None:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            return None, "", f"{path}: cannot read: {e.strerror or e}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, "", f"{path}: not UTF-8 text ({e.reason} at byte {e.start})"
    try:
        return cached_parse(call.root, text, path, cache_file), text, ""
    except ConfigError as e:
        return None, "", str(e)


def globals_disabled(config: dict | None) -> bool:
    section = config.get("hooks") if config else None
    return isinstance(section, dict) and section.get("disable_global_hooks") is True


def load(call: HookCall, sources: list[tuple[str, bytes | None, str]]) -> tuple[list[EventHook], list[str], list[str]]:
    """(hooks, table errors, file errors) of the sources: the global
    hooks.toml's first, then the project's (the order lifecycle hooks run in);
    the global file is left out when the project sets disable_global_hooks."""
    parsed: dict[str, tuple[str, dict | None, str, str]] = {}
    for path, data, origin in sources:
        cache = GLOBAL_CACHE_FILE if origin == "global" else CACHE_FILE
        config, text, error = read_source(call, path, data, cache)
        parsed[origin] = (path, config, text, error)
    if "project" in parsed and globals_disabled(parsed["project"][1]):
        parsed.pop("global", None)
    hooks: list[EventHook] = []
    errors: list[str] = []
    broken: list[str] = []
    for origin in ("global", "project"):
        if origin not in parsed:
            continue
        path, config, text, error = parsed[origin]
        if config is None:
            broken.append(error)
            continue
        found, problems = parse_event_hooks(config, path, text)
        hooks += found
        errors += problems
    return hooks, errors, broken


def hooks_disabled(environ: object) -> bool:
    return str(environ.get("RALPH_HOOKS_ENABLED", "")).strip().lower() in ("0", "false", "no", "off")  # type: ignore[attr-defined]


def select(call: HookCall, outcome: Outcome, sources: list[tuple[str, bytes | None, str]]) -> tuple[list[EventHook], Outcome]:
    """The user's hooks that match this call, and ralph's `outcome` (with a
    warning for invalid tables, which are skipped; replaced by the answer to a
    file that cannot be read or parsed, which runs none)."""
    if call.event == "PreToolUse" and outcome.decision == "deny":
        return [], outcome  # the first block stops the chain; a ralph deny is final
    if hooks_disabled(call.environ):
        return [], outcome
    hooks, errors, broken = load(call, sources)
    if broken:
        return [], _fail_config(call, outcome, broken + errors)
    if errors:
        outcome = _warn_skipped(call, outcome, errors)
    return [h for h in hooks if h.enabled and matches(h.patterns, call.event, call.tool_name)], outcome
