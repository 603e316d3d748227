"""The hot path: stdin -> event -> rule -> exactly one JSON object on stdout.

Every call exits 0 and prints one JSON object, whatever it is fed: Claude Code
treats a crash, a non-zero exit, invalid JSON or a timeout as "allow", so a
handler that crashes is a bypass. When in doubt on PreToolUse the answer is a
deny that says how to proceed (fail closed); elsewhere it is `{}`.

The handler for an event (and, for tool events, the tool) is imported by name
from HANDLERS, so a call loads only what its event needs. Nothing here imports
`json` or `signal` (they would pull in re and enum: milliseconds on every tool
call): JSON goes through ralph.fastjson, the deadline through _signal.
"""
import _signal
import os
import sys
import time

from ralph import fastjson
from ralph.claude.protocol import GUARD_EVENTS, SUBCOMMANDS, HookCall, Outcome, allow, deny  # noqa: F401 - SUBCOMMANDS: the launcher's
from ralph.plugins import load
from ralph.redaction import redact
from ralph.state.files import append_line, rotate_if_larger, write_all
from ralph.state.locations import config_path, global_hooks_path, project_root, state_dir

MAX_STDIN = 64 * 1024 * 1024
# Payloads this large parse faster with orjson than its import costs (about
# 20 ms); below it the C scanner wins. Measured by scripts/bench.py.
ORJSON_MIN_BYTES = 48 * 1024 * 1024
DEADLINE_SECONDS = 20.0  # PreToolUse, PreSkillShellCommand: far below the client's timeout, so a hung check still denies

# event -> tool -> the handler module ("*": any tool, or an event without
# one). Each exposes `handle(call) -> Outcome` and is imported only for the
# call at hand. A tool event whose tool is not listed is allowed unjudged.
HANDLERS: dict[str, dict[str, str]] = {
    "PreToolUse": {
        "Bash": "ralph.claude.handlers.pre_bash",
        "Edit": "ralph.claude.handlers.pre_edit", "MultiEdit": "ralph.claude.handlers.pre_edit", "Write": "ralph.claude.handlers.pre_edit", "NotebookEdit": "ralph.claude.handlers.pre_edit",
    },
    "PostToolUse": {
        "Bash": "ralph.claude.handlers.post_bash",
        "Read": "ralph.claude.handlers.post_file", "Edit": "ralph.claude.handlers.post_file", "MultiEdit": "ralph.claude.handlers.post_file", "Write": "ralph.claude.handlers.post_file", "NotebookEdit": "ralph.claude.handlers.post_file",
    },
    "PostToolUseFailure": {"Bash": "ralph.claude.handlers.post_bash"},
    "UserPromptSubmit": {"*": "ralph.claude.handlers.prompt"},
    "Stop": {"*": "ralph.claude.handlers.stop"},
    # a skill's inline shell line, in whichever shell (Bash, PowerShell) the client runs it
    "PreSkillShellCommand": {"*": "ralph.claude.handlers.skill_shell"},
}
# The users' own commands on Claude Code events ([[hooks.event]] in
# ralph.toml), after ralph's rule: which apply (imported only when ralph.toml
# can declare them), and running them (only when one applies).
EVENT_COMMANDS = "ralph.claude.event_command_select"
EVENT_COMMAND_RUNS = "ralph.claude.event_command_run"


class HookError(Exception):
    """The payload is not one we can act on; the message says why."""


def handler_module(event: str, tool: str) -> object | None:
    """The handler of this event and tool, imported now; None when ralph
    answers it without one."""
    by_tool = HANDLERS[event]
    name = by_tool.get(tool) or by_tool.get("*")
    return load(name) if name else None


# ---- the pipeline ----


def read_stdin(limit: int = MAX_STDIN) -> bytes | None:
    """All of stdin, or None when it holds more than `limit` bytes."""
    chunks = []
    total = 0
    fd = 0
    while True:
        try:
            # small reads first: a 1 MiB buffer costs more than a payload of a few KB takes to read
            chunk = os.read(fd, 1 << 16 if total < 1 << 20 else 1 << 20)
        except InterruptedError:
            continue
        except OSError:
            break
        if not chunk:
            break
        total += len(chunk)
        if total > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _loads_large(raw: bytes) -> object:
    try:
        # rare path, off the hook's start-up: orjson's import costs more than it saves below ORJSON_MIN_BYTES
        import orjson

        return orjson.loads(raw)
    except (ImportError, ValueError):
        # orjson missing, or stricter than json (lone surrogates, NaN): the
        # C scanner decides, and raises if the payload really is invalid.
        return fastjson.loads(raw)


def parse_payload(raw: bytes) -> dict:
    if not raw.strip():
        raise HookError("empty stdin")
    try:
        payload = _loads_large(raw) if len(raw) >= ORJSON_MIN_BYTES else fastjson.loads(raw)
    except (ValueError, RecursionError) as e:
        raise HookError(f"stdin is not JSON: {str(e)[:200]}") from None
    if not isinstance(payload, dict):
        raise HookError(f"payload is a JSON {type(payload).__name__}, not an object")
    return payload


def fail_safe(event: str, why: str) -> Outcome:
    """The answer when we could not judge. PreToolUse and PreSkillShellCommand fail closed."""
    if event in GUARD_EVENTS:
        return deny(
            f"ralph-hooks could not check this {'tool call' if event == 'PreToolUse' else 'shell line'} ({why}). Nothing was run. "
            "Retry it in a plain form; if this repeats, see logs/hooks.jsonl in ralph's state directory (`ralph doctor` names it).",
            event,
        )
    return Outcome({}, "error", why)


def dispatch(event_hint: str, raw: bytes | None, environ: dict[str, str] | None = None) -> tuple[Outcome, HookCall | None, str, list[str]]:
    """Judge one payload. Returns (outcome, call, event, notes); never raises.
    environ: the hook's environment (default: this process's)."""
    notes: list[str] = []
    event = event_hint
    call = None
    try:
        if raw is None:
            return fail_safe(event, f"payload over {MAX_STDIN // (1024 * 1024)} MiB"), None, event, notes
        payload = parse_payload(raw)
        named = payload.get("hook_event_name")
        if isinstance(named, str) and named:
            if event_hint and named != event_hint:
                notes.append(f"subcommand is for {event_hint} but payload says {named}; the payload wins")
            event = named
        elif not event_hint:
            raise HookError("payload has no hook_event_name")
        else:
            notes.append("payload has no hook_event_name; using the subcommand's event")
        if event not in HANDLERS:
            ignored = Outcome({}, "ignored", f"no handler for {event}")
            call = HookCall(event, payload, environ)
            source = event_commands_source(call.root, call.environ)
            if source is None:
                return ignored, None, event, notes
            outcome = run_event_commands(call, ignored, raw, source)
        else:
            if event in GUARD_EVENTS:
                arm_deadline(DEADLINE_SECONDS)
            call = HookCall(event, payload, environ)
            handler = handler_module(event, call.tool_name)
            outcome = handler.handle(call) if handler is not None else allow()
            outcome = run_event_commands(call, outcome, raw)
        notes.extend(call.problems)
        return outcome, call, event, notes
    except HookError as e:
        return fail_safe(event, str(e)), call, event, notes
    except BaseException as e:  # noqa: B036 - nothing may escape a hook, not even a timeout
        name = type(e).__name__
        notes.append(f"internal error {name}: {str(e)[:300]}")
        if call is not None:
            notes.extend(call.problems)
        return fail_safe(event, f"internal error {name}"), call, event, notes


def event_commands_source(root: str, environ: dict[str, str] | None) -> list[tuple[str, bytes | None, str]] | None:
    """[(path, bytes, origin)] of the files that may declare `[[hooks.event]]`:
    the user's global hooks.toml ("global") and the project's ralph.toml
    ("project"), each only when it says `event` (the project's also when it
    says disable_global_hooks and a global file does); None when neither
    does: two failed opens without config, one read of each file that never
    says `event`, and no import or TOML parsing either way. (path, None): the
    file is there but cannot be read, which ralph.claude.event_command_select reports."""
    found = []
    for path, origin in ((global_hooks_path(environ), "global"), (config_path(root, environ), "project")):
        if path is None:
            continue
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            continue
        except OSError:
            found.append((path, None, origin))
            continue
        # a key spelled with escapes ("\u0065vent") says `event` too
        if b"event" in data or b"\\u" in data or b"\\U" in data or (found and b"disable_global_hooks" in data):
            found.append((path, data, origin))
    return found or None


def run_event_commands(call: HookCall, outcome: Outcome, raw: bytes, source: list[tuple[str, bytes | None, str]] | None = None) -> Outcome:
    """The user's own `[[hooks.event]]` commands, after ralph's rule.
    `source`: event_commands_source(), when the caller already has it."""
    if call.event in GUARD_EVENTS and outcome.decision == "deny":
        return outcome  # a ralph deny is final: no user hook runs, nothing to read
    if source is None:
        source = event_commands_source(call.root, call.environ)
        if source is None:
            return outcome
    chosen, outcome = load(EVENT_COMMANDS).select(call, outcome, source)
    return load(EVENT_COMMAND_RUNS).run(call, outcome, raw, chosen) if chosen else outcome


class Deadline(BaseException):
    """PreToolUse took too long. Not an Exception, so no handler's
    `except Exception` swallows it."""


def _on_deadline(signum: int, frame: object) -> None:
    raise Deadline(f"no answer within {DEADLINE_SECONDS:.0f}s")


def arm_deadline(seconds: float) -> None:
    """PreToolUse and PreSkillShellCommand only: a hung check must still answer (deny) before the
    client gives up and lets the call through. Other events may run a rollback
    (git), which must never be interrupted halfway."""
    try:
        _signal.signal(_signal.SIGALRM, _on_deadline)
        _signal.setitimer(_signal.ITIMER_REAL, seconds)
    except (ValueError, OSError, AttributeError):
        pass


def disarm_deadline() -> None:
    try:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
    except (ValueError, OSError, AttributeError):
        pass


def emit(output: dict) -> None:
    # A lone surrogate (from a payload's `\ud800`) is written back as the same
    # JSON escape: the output stays valid UTF-8 and means what it said.
    data = fastjson.dumps(output).encode("utf-8", "backslashreplace") + b"\n"
    try:
        write_all(1, data)
    except OSError:
        pass  # stdout closed (SIGPIPE/EPIPE): nobody is listening, nothing to do


LOG_MAX_BYTES = 8 * 1024 * 1024
# Every logged field is bounded (a 2 MB session_id or cwd must not rotate the
# log's history away) and redacted (ralph.redaction: secrets first, then the cut).
LOG_REASON_CHARS = 500
LOG_FIELD_CHARS = 2000
LOG_SHORT_CHARS = 200  # session id, tool and event names
LOG_MAX_NOTES = 20


def log_call(call: HookCall | None, event: str, outcome: Outcome, notes: list[str], started: float, extra: dict | None = None) -> None:
    """One JSON line per call in <state dir>/logs/hooks.jsonl; never raises."""
    try:
        entry = {
            "t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "event": redact(event, LOG_SHORT_CHARS),
            "tool": redact(call.tool_name, LOG_SHORT_CHARS) if call else "",
            "decision": outcome.decision,
            "reason": redact(outcome.reason, LOG_REASON_CHARS),
            "ms": round((time.perf_counter() - started) * 1000, 2),
        }
        if call is not None:
            entry["session"] = redact(call.session_id, LOG_SHORT_CHARS)
        if notes:
            entry["notes"] = redact(notes[:LOG_MAX_NOTES], LOG_REASON_CHARS)
        if extra:
            entry.update(redact(extra, LOG_FIELD_CHARS))
        line = fastjson.dumps(entry)
        if call is not None:
            log_dir = os.path.join(call.state_dir, "logs")
        else:
            log_dir = os.path.join(state_dir(project_root(os.getcwd())), "logs")
        path = os.path.join(log_dir, "hooks.jsonl")
        rotate_if_larger(path, LOG_MAX_BYTES)
        append_line(path, line)
    except BaseException:
        pass  # the log is for people; a hook must answer even if it cannot be written


def answer_and_exit(event_hint: str) -> None:
    """The launcher's entry for a hook: main(), then leave at once. The answer
    went straight to fd 1 and the log line is written; nothing is buffered or
    left to clean up, and tearing the interpreter down would cost more than
    the call itself."""
    code = main(event_hint)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(code)


def main(event_hint: str) -> int:
    started = time.perf_counter()
    outcome = None
    try:
        raw = read_stdin()
        outcome, call, event, notes = dispatch(event_hint, raw)
        disarm_deadline()
        emit(outcome.output)
        log_call(call, event, outcome, notes, started, call.log_extra if call else None)
    except BaseException:
        if outcome is None:
            emit(fail_safe(event_hint, "internal error").output)
    return 0
