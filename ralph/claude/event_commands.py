"""Users' own commands on Claude Code events: `[[hooks.event]]` in ralph.toml.

The dispatcher (ralph/claude/dispatch.py) calls `run()` after ralph's own rule has
answered, and only when ralph.toml can declare such hooks: a project without
them never imports this module. Each matching hook runs in order with the
event's context in its environment and the event JSON on stdin:

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
import time

from ralph import fastjson
from ralph.claude.protocol import CLIENT_EVENTS, MAX_CONTEXT, HookCall, Outcome, deny

TABLE = "hooks.event"
DEPTH_VAR = "RALPH_EVENT_HOOK_DEPTH"
# A hook may start something that fires ralph's hooks once more (a nested
# `claude -p`); at this depth user hooks are skipped, so a hook that triggers
# itself stops instead of recursing until the client gives up.
MAX_DEPTH = 2
OUTPUT_CAP = 64 * 1024  # bytes kept per stream; the rest is read and dropped
ENV_VALUE_CAP = 64 * 1024  # Linux refuses a single env string over 128 KiB
KILL_GRACE = 0.2  # after SIGTERM, and after the hook exits: then its group is killed

# key -> (default, kind, minimum), the shape of LOOP_KEYS in ralph/loop/settings.py
EVENT_KEYS: dict[str, tuple[object, str, float | None]] = {
    "match": (None, "pattern", None),
    "command": (None, "command", None),
    "working_dir": (None, "path?", None),
    "timeout": (10, "number", 0.1),
    "env": ({}, "env", None),
    "enabled": (True, "bool", None),
    "description": ("", "str?", None),
    "pipe_output": (False, "bool", None),
}
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


def table_lines(text: str) -> list[int]:
    """Line numbers of the `[[hooks.event]]` headers, in order."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.split("#", 1)[0].replace(" ", "").replace("\t", "")
        if stripped in ("[[hooks.event]]", '[["hooks"."event"]]', "[[hooks.'event']]"):
            found.append(number)
    return found


def key_line(text: str, header: int | None, key: str) -> int | None:
    """The line of `key = ...` inside the table that starts at `header`."""
    if header is None:
        return None
    lines = text.splitlines()
    for number in range(header + 1, len(lines) + 1):
        line = lines[number - 1].strip()
        if line.startswith("["):
            break
        name = line.split("=", 1)[0].strip().strip("\"'")
        if "=" in line and name == key:
            return number
    return header


def _check(value: object, kind: str, minimum: float | None, key: str) -> str | None:
    """What is wrong with one value, or None: ralph.config's kinds, and the
    event hooks' own "pattern", "env" and "str" (which may be empty)."""
    base = kind.rstrip("?")
    if value is None and kind.endswith("?"):
        return None
    if base == "pattern":
        if not isinstance(value, str) or not split_patterns(value):
            return f"must be an event pattern string like \"PreToolUse:Bash\", got {value!r}"
        for pattern in split_patterns(value):
            problem = pattern_problem(pattern)
            if problem:
                return problem
        return None
    if base == "env":
        if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, (str, int, float, bool)) for k, v in value.items()):
            bad = [k for k in value if not k or "=" in k or "\0" in k]
            return f"has invalid variable names {bad!r}" if bad else None
        return f"must be a table of NAME = \"value\", got {value!r}"
    if base == "str":
        return None if isinstance(value, str) else f"must be a string, got {value!r}"
    from ralph.config import ValueProblem, checked_value

    try:
        checked_value(value, kind, minimum, key)
    except ValueProblem as e:
        return str(e)
    return None


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
    headers = table_lines(text) if text else []
    hooks: list[EventHook] = []
    errors: list[str] = []
    for index, table in enumerate(tables):
        header = headers[index] if index < len(headers) else None
        where_table = f"{path}:{header}" if header else path
        problems = []
        for key in table:
            if key not in EVENT_KEYS:
                line = key_line(text, header, key)
                problems.append(f"{path}:{line or '?'}: [[hooks.event]] #{index + 1}: unknown key {key!r}; "
                                f"known keys: {', '.join(EVENT_KEYS)}")
        for key in REQUIRED:
            if key not in table:
                problems.append(f"{where_table}: [[hooks.event]] #{index + 1}: {key} is required; add {key} = ...")
        values = {}
        for key, (default, kind, minimum) in EVENT_KEYS.items():
            if key not in table:
                values[key] = default
                continue
            problem = _check(table[key], kind, minimum, key)
            if problem:
                line = key_line(text, header, key)
                problems.append(f"{path}:{line or '?'}: [[hooks.event]] #{index + 1} {key}: {problem}")
            values[key] = table[key]
        if problems:
            errors.extend(problems)
            continue
        shown = os.path.basename(path) + (f":{header}" if header else "")
        hooks.append(EventHook(index + 1, shown, values))
    return hooks, errors


def validate(config: dict, path: str, text: str = "") -> list[str]:
    """Config errors of every [[hooks.event]] table (for `ralph hooks list`, --dry-run, doctor)."""
    return parse_event_hooks(config, path, text)[1]


# ---- context ----


def env_safe(text: str) -> str:
    """A value the OS accepts in the environment (no NUL, no lone surrogate)."""
    if "\0" in text:
        text = text.replace("\0", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def bounded_json(value: object, limit: int = ENV_VALUE_CAP) -> tuple[str, bool]:
    """JSON of `value`, still valid JSON when long strings had to be cut.
    Returns (text, truncated)."""
    text = fastjson.dumps(value)
    if len(text) <= limit // 4 or len(text.encode("utf-8", "surrogatepass")) <= limit:
        return text, False
    keep = max(limit // 16, 256)
    while keep >= 16:
        text = fastjson.dumps(_cut_strings(value, keep))
        if len(text.encode("utf-8", "surrogatepass")) <= limit:
            return text, True
        keep //= 2
    return fastjson.dumps({"truncated": True}), True


def _cut_strings(value: object, keep: int) -> object:
    if isinstance(value, str):
        return value if len(value) <= keep else value[:keep] + f"…[{len(value) - keep} chars cut]"
    if isinstance(value, dict):
        return {k: _cut_strings(v, keep) for k, v in value.items()}
    if isinstance(value, list):
        cut = [_cut_strings(v, keep) for v in value[:200]]
        return cut + ([f"…[{len(value) - 200} items cut]"] if len(value) > 200 else [])
    return value


def context_env(call: HookCall, depth: int) -> dict[str, str]:
    """The RALPH_* variables a user hook sees (besides the client's environment)."""
    env = {
        "RALPH_EVENT": call.event,
        "RALPH_EVENT_ALIAS": EVENT_ALIAS.get(call.event, ""),
        "RALPH_SESSION_ID": call.session_id,
        "RALPH_WORKING_DIR": call.cwd,
        "RALPH_PROJECT_DIR": call.root,
        "RALPH_TOOL_NAME": call.tool_name,
        DEPTH_VAR: str(depth + 1),
    }
    truncated = []
    if call.event in TOOL_EVENTS:
        env["RALPH_TOOL_ARGS"], cut = bounded_json(call.tool_input)
        if cut:
            truncated.append("RALPH_TOOL_ARGS")
    if call.event == "PostToolUse":
        env["RALPH_TOOL_RESULT"], cut = bounded_json(call.payload.get("tool_response"))
        if cut:
            truncated.append("RALPH_TOOL_RESULT")
    elif call.event == "PostToolUseFailure":
        error = call.payload.get("error")
        env["RALPH_TOOL_RESULT"], cut = bounded_json({"error": error if isinstance(error, str) else ""})
        if cut:
            truncated.append("RALPH_TOOL_RESULT")
    prompt = call.payload.get("prompt")
    if isinstance(prompt, str):
        env["RALPH_PROMPT"] = prompt[:ENV_VALUE_CAP // 4]  # characters: up to 4 bytes each
        if len(prompt) > ENV_VALUE_CAP // 4:
            truncated.append("RALPH_PROMPT")
    if truncated:
        env["RALPH_TRUNCATED"] = ",".join(truncated)  # the full event is on stdin
    return {k: env_safe(v) for k, v in env.items()}


# ---- running one hook ----


class HookRun:
    __slots__ = ("exit_code", "timed_out", "error", "stdout", "stderr", "bytes", "seconds")

    def __init__(self) -> None:
        self.exit_code: int | None = None
        self.timed_out = False
        self.error = ""  # could not start
        self.stdout = b""
        self.stderr = b""
        self.bytes = 0  # all output, kept or not
        self.seconds = 0.0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.error

    def status(self) -> str:
        if self.error:
            return "error"
        if self.timed_out:
            return "timeout"
        return "success" if self.exit_code == 0 else "failed"


def run_command(command: str | list[str], cwd: str, env: dict[str, str], stdin_data: bytes, timeout: float) -> HookRun:
    """Run one hook (ralph.process.run) in a session of its own: stdin fed,
    stdout and stderr read apart, at most OUTPUT_CAP bytes of each kept, the
    group killed at `timeout` and as soon as the hook itself has exited."""
    # Here, not at the top: the runner's imports (subprocess, signal, ctypes)
    # cost about as much as a whole hook call, and this module is loaded on
    # every call in a project that declares event hooks, most of which run none.
    from ralph import process

    result = HookRun()
    ran = process.run(process.argv_for(command), cwd=cwd, env=env, stdin=stdin_data, timeout=timeout, max_bytes=OUTPUT_CAP,
                      head_bytes=OUTPUT_CAP, merge_stderr=False, kill_grace=KILL_GRACE, drain=KILL_GRACE,
                      new_session=True)
    if ran.error:
        result.error = f"could not start: {ran.error}"
        return result
    assert ran.errors is not None
    result.exit_code = ran.exit_code
    result.timed_out = ran.timed_out
    result.stdout = bytes(ran.output.head)
    result.stderr = bytes(ran.errors.head)
    result.bytes = ran.output.total + ran.errors.total
    result.seconds = ran.duration
    return result


# ---- output ----


def clean_text(data: bytes) -> str:
    """Decoded output without ANSI escapes or stray control characters."""
    import re

    text = data.decode("utf-8", "replace")
    text = re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]", "", text)
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", text.replace("\r\n", "\n")).strip()


def hook_output(run: HookRun) -> str:
    """stdout, then stderr, as text; notes a cut."""
    parts = [clean_text(run.stdout), clean_text(run.stderr)]
    text = "\n".join(p for p in parts if p)
    if run.bytes > len(run.stdout) + len(run.stderr):
        text += f"\n…[{run.bytes - len(run.stdout) - len(run.stderr)} more bytes of output dropped]"
    return text


def denial(hook: EventHook, run: HookRun) -> str | None:
    """The reason a PreToolUse hook denies the call, or None when it allows it."""
    if run.error:
        return f"Blocked: your {hook.label} {run.error} (a check that cannot run denies). Fix it in ralph.toml."
    if run.timed_out:
        return (f"Blocked: your {hook.label} gave no answer within {hook_timeout_text(run)} and was stopped "
                "(a check that cannot finish denies). Retry, or make the hook faster in ralph.toml.")
    if run.exit_code != 0:
        why = hook_output(run) or "(no output)"
        code = run.exit_code
        status = f"killed by signal {-code}" if code is not None and code < 0 else f"exit {code}"
        return f"Blocked by your {hook.label}, {status}: {why}"
    stdout = clean_text(run.stdout)
    if stdout.startswith("{"):
        try:
            answer = fastjson.loads(stdout)
        except ValueError:
            return None
        if isinstance(answer, dict):
            specific = answer.get("hookSpecificOutput")
            decision = answer.get("decision")
            reason = answer.get("reason")
            if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
                decision, reason = "deny", specific.get("permissionDecisionReason") or reason
            if decision in ("deny", "block"):
                return f"Blocked by your {hook.label}: {reason if isinstance(reason, str) and reason else '(no reason given)'}"
    return None


def hook_timeout_text(run: HookRun) -> str:
    return f"{run.seconds:.1f}s"


def piped_text(hook: EventHook, run: HookRun) -> str:
    text = hook_output(run)
    status = run.status()
    if status != "success":
        detail = run.error or ("timed out" if run.timed_out else f"exit {run.exit_code}")
        return f'[your hook "{hook.name}" failed: {detail}]\n{text}'.rstrip()
    return f'[output of your hook "{hook.name}"]\n{text}' if text else ""


def with_context(outcome: Outcome, event: str, text: str) -> Outcome:
    """ralph's answer plus `text` appended to its additionalContext (ralph's own first)."""
    output = dict(outcome.output)
    specific = dict(output.get("hookSpecificOutput") or {"hookEventName": event})
    existing = specific.get("additionalContext")
    existing = existing if isinstance(existing, str) else ""
    room = MAX_CONTEXT - len(existing) - 2
    if room < 200:
        return outcome
    if len(text) > room:
        text = text[: room - 40] + "\n…[truncated by ralph-hooks]"
    specific["additionalContext"] = f"{existing}\n\n{text}" if existing else text
    output["hookSpecificOutput"] = specific
    decision = outcome.decision if outcome.decision in ("block", "deny") else "context"
    return Outcome(output, decision, outcome.reason or text[:500])


def for_log(outcome: Outcome) -> Outcome:
    """The model reads the hook's words as they are; .ralph/logs/hooks.jsonl
    gets them with secrets redacted (a hook may print its environment)."""
    from ralph.rules.redact import redact

    outcome.reason = redact(outcome.reason)
    return outcome


# ---- the chain ----


def _fail_config(call: HookCall, outcome: Outcome, errors: list[str]) -> Outcome:
    """A broken [[hooks.event]] table: on PreToolUse the call is denied (a check
    that cannot be read is a check that did not pass); elsewhere it is logged
    and shown to the person."""
    message = "; ".join(errors[:3]) + (f" (and {len(errors) - 3} more)" if len(errors) > 3 else "")
    call.problems.append(f"event hooks: {message}")
    if call.event == "PreToolUse":
        return deny(f"ralph-hooks could not read your event hooks, so this tool call was not checked and did not run: "
                    f"{message}. Fix ralph.toml (see README, 'Event hooks').")
    output = dict(outcome.output)
    output["systemMessage"] = f"ralph-hooks: your [[hooks.event]] hooks did not run: {message}"
    return Outcome(output, outcome.decision, outcome.reason)


def load(call: HookCall, path: str, data: bytes | None) -> tuple[list[EventHook], list[str]]:
    from ralph.config import ConfigError, cached_parse

    if data is None:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            return [], [f"{path}: cannot read: {e.strerror or e}"]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return [], [f"{path}: not UTF-8 text ({e.reason} at byte {e.start})"]
    try:
        config = cached_parse(call.root, text, path)
    except ConfigError as e:
        return [], [str(e)]
    return parse_event_hooks(config, path, text)


def hooks_disabled(environ: object) -> bool:
    return str(environ.get("RALPH_HOOKS_ENABLED", "")).strip().lower() in ("0", "false", "no", "off")  # type: ignore[attr-defined]


def run(call: HookCall, outcome: Outcome, raw: bytes, path: str, data: bytes | None) -> Outcome:
    """ralph's `outcome` for this call, with the user's matching hooks applied."""
    if call.event == "PreToolUse" and outcome.decision == "deny":
        return outcome  # the first block stops the chain; a ralph deny is final
    if hooks_disabled(call.environ):
        return outcome
    hooks, errors = load(call, path, data)
    if errors:
        return _fail_config(call, outcome, errors)
    chosen = [h for h in hooks if h.enabled and matches(h.patterns, call.event, call.tool_name)]
    if not chosen:
        return outcome
    try:
        depth = int(call.environ.get(DEPTH_VAR, "0") or 0)
    except ValueError:
        depth = 0
    if depth >= MAX_DEPTH:
        call.problems.append(
            f"event hooks: circular trigger stopped: {DEPTH_VAR}={depth} (a user hook ran something that fired "
            f"ralph's hooks again {depth} time(s)); skipped {', '.join(h.label for h in chosen)}"
        )
        call.log_extra["event_hooks_error"] = "circular_trigger"
        return outcome
    base_env = dict(call.environ)
    base_env.update(context_env(call, depth))
    budget_end = time.monotonic() + EVENT_BUDGET.get(call.event, DEFAULT_BUDGET)
    records: list[dict] = []
    call.log_extra["event_hooks"] = records
    piped: list[str] = []
    for hook in chosen:
        record: dict = {"hook": hook.number, "match": hook.match}
        records.append(record)
        remaining = budget_end - time.monotonic()
        if remaining < 0.1:
            record["result"] = "skipped: budget spent"
            if call.event == "PreToolUse":
                return deny(f"Blocked: your {hook.label} could not run: the event hooks before it used the "
                            f"{EVENT_BUDGET['PreToolUse']:g}s budget for one tool call. Make them faster in ralph.toml.")
            continue
        timeout = min(hook.timeout, remaining)
        if timeout < hook.timeout:
            record["timeout_cut_to"] = round(timeout, 2)
        env = dict(base_env)
        env.update({k: env_safe(str(v).lower() if isinstance(v, bool) else str(v)) for k, v in hook.env.items()})
        env[DEPTH_VAR] = str(depth + 1)
        cwd = call.root
        if hook.working_dir:
            cwd = hook.working_dir if os.path.isabs(hook.working_dir) else os.path.join(call.root, hook.working_dir)
        result = run_command(hook.command, cwd, env, raw, timeout)
        record.update(result=result.status(), exit=result.exit_code, ms=round(result.seconds * 1000, 1), bytes=result.bytes)
        if result.error:
            record["error"] = result.error
        if call.event == "PreToolUse":
            reason = denial(hook, result)
            if reason is not None:
                record["decision"] = "deny"
                return for_log(deny(reason))  # the first block stops the chain
        elif not result.ok:
            call.problems.append(f"event hooks: {hook.label} {result.status()}"
                                 + (f" (exit {result.exit_code})" if result.exit_code else ""))
        if hook.pipe_output:
            if call.event in CONTEXT_EVENTS:
                text = piped_text(hook, result)
                if text:
                    piped.append(text)
            else:
                record["pipe_output"] = f"ignored: {call.event} carries no context to the model"
    if piped:
        return for_log(with_context(outcome, call.event, "\n\n".join(piped)))
    return outcome
