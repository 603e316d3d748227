"""Running users' commands on Claude Code events (the hooks
ralph.claude.event_command_select.select chose for a call): each in a session of
its own through ralph.process, with the event's context in its environment
and the event JSON on stdin, within the event's budget; their answers turned
into the client's (a PreToolUse denial, context piped to the model)."""
import os
import re
import time

from ralph import fastjson, process
from ralph.claude.event_command_select import (
    CONTEXT_EVENTS,
    DEFAULT_BUDGET,
    DEPTH_VAR,
    ENV_VALUE_CAP,
    EVENT_ALIAS,
    EVENT_BUDGET,
    KILL_GRACE,
    MAX_DEPTH,
    OUTPUT_CAP,
    TOOL_EVENTS,
    EventHook,
)
from ralph.claude.protocol import MAX_CONTEXT, HookCall, Outcome, deny
from ralph.redaction import redact


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


def keep_message(before: Outcome, after: Outcome) -> Outcome:
    """`after`, still carrying the warning `before` had for the person."""
    message = before.output.get("systemMessage")
    if message:
        after.output["systemMessage"] = message
    return after


def for_log(outcome: Outcome) -> Outcome:
    """The model reads the hook's words as they are; .ralph/logs/hooks.jsonl
    gets them with secrets redacted (a hook may print its environment)."""
    outcome.reason = redact(outcome.reason)
    return outcome



# ---- the chain ----


def run(call: HookCall, outcome: Outcome, raw: bytes, chosen: list[EventHook]) -> Outcome:
    """ralph's `outcome` for this call, with the user's `chosen` hooks (ralph.claude.event_command_select.select) applied."""
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
                return for_log(keep_message(outcome, deny(reason)))  # the first block stops the chain
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
