"""What an agent's exit means for the loop: classified from the stream's
result (and the messages before it), from the output's text only when the
agent printed no stream.

- usage_limit: the account's usage or rate limit (HTTP 429, a rate_limit_event
  that is not "allowed", `api_error_params.rate_limit_info`): wait for the
  reset the client reported (`resetsAt`), else back off; the same story runs
  again and the iteration does not count.
- transient: the API overloaded (529) or failing (5xx), the connection lost:
  retried with backoff, not counted, a few times.
- hung: nothing printed for idle_timeout_seconds; its group was ended;
  retried once.
- budget: the client stopped at `--max-budget-usd`.
- failed: anything else that is not a clean end (an ordinary failure).
- ok: a clean end (the loop's own judgement still decides whether the story
  is done).

What the real client prints in each case (Claude Code 2.1.330) is in
tests/fixtures/stream/ and scripts/capture_streams.py.
"""
from __future__ import annotations

import re

from ralph.loop.stream import AgentStream

USAGE_LIMIT = "usage_limit"
TRANSIENT = "transient"
HUNG = "hung"
BUDGET = "budget"
FAILED = "failed"
OK = "ok"

# api_error kinds (the client's typed cause) that a later try can get past
TRANSIENT_API_ERRORS = {"connection_failed", "no_response", "stream_idle_timeout", "computer_slept"}
RATE_LIMIT_API_ERRORS = {"usage_limit_reached"}
TRANSIENT_ERRORS = {"overloaded", "server_error"}  # the assistant error message's `error`
RATE_LIMIT_ERRORS = {"rate_limit"}

# the text fallback (an agent without a stream): the client's own error lines
# only, so that a test log mentioning 429 or "overloaded" is not taken for one
TEXT_RATE_LIMIT = re.compile(r"API Error: (?:Request rejected )?\(?429\b|rate_limit_error|usage limit reached|"
                             r"You've hit your [\w -]*limit", re.IGNORECASE)
TEXT_TRANSIENT = re.compile(r"API Error: [^\n]*(?:\b(?:529|50[0-4])\b|overloaded|Connection|ECONNRESET|ETIMEDOUT)|"
                            r"overloaded_error", re.IGNORECASE)
TEXT_TAIL = 2000  # the end of the output the text fallback reads


class Outcome:
    """kind (above), when the limit resets (epoch seconds, or None) and what said so."""

    __slots__ = ("kind", "reset_at", "detail")

    def __init__(self, kind: str, detail: str = "", reset_at: float | None = None) -> None:
        self.kind = kind
        self.detail = detail
        self.reset_at = reset_at

    def __repr__(self) -> str:
        return f"Outcome({self.kind!r}, {self.detail!r}, reset_at={self.reset_at!r})"


def classify(exit_code: int | None, *, timed_out: bool = False, idle_timed_out: bool = False,
             stream: AgentStream | None = None, output: str = "") -> Outcome:
    """The Outcome of one agent run (see the module docstring)."""
    if idle_timed_out:
        return Outcome(HUNG, "printed nothing for the idle timeout")
    if timed_out:
        return Outcome(FAILED, "stopped at the timeout")
    if stream is not None and (stream.result is not None or stream.api_error is not None or stream.rate_limit is not None):
        return from_stream(exit_code, stream)
    if exit_code == 0:
        return Outcome(OK)
    if stream is not None and stream.spoke_json:
        return Outcome(FAILED, f"exit {exit_code}")
    return from_text(exit_code, output)


def from_stream(exit_code: int | None, stream: AgentStream) -> Outcome:
    result = stream.result or {}
    error = stream.api_error or {}
    if stream.result is not None and result.get("is_error") is False and exit_code == 0:
        return Outcome(OK)
    if result.get("subtype") == "error_max_budget_usd" or result.get("terminal_reason") == "budget_exhausted":
        return Outcome(BUDGET, first_text(result.get("errors")) or "reached --max-budget-usd")
    status = result.get("api_error_status") or error.get("api_error_status")
    api_error = result.get("api_error") or error.get("api_error")
    detail = str(result.get("result") or text_of(error) or first_text(result.get("errors")) or f"exit {exit_code}")
    limit = stream.rate_limit or {}
    if status == 429 or api_error in RATE_LIMIT_API_ERRORS or error.get("error") in RATE_LIMIT_ERRORS \
            or limit.get("status") == "rejected":
        return Outcome(USAGE_LIMIT, detail, reset_time(limit))
    if isinstance(status, int) and (status >= 500 or status == 408) or api_error in TRANSIENT_API_ERRORS \
            or error.get("error") in TRANSIENT_ERRORS:
        return Outcome(TRANSIENT, detail)
    if stream.result is None and exit_code == 0:
        return Outcome(OK)
    return Outcome(FAILED, detail)


def from_text(exit_code: int | None, output: str) -> Outcome:
    """No stream: the end of the output, in the client's wording or a wrapper's."""
    tail = output[-TEXT_TAIL:]
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if TEXT_RATE_LIMIT.search(tail):
        return Outcome(USAGE_LIMIT, matching_line(lines, TEXT_RATE_LIMIT))
    if TEXT_TRANSIENT.search(tail):
        return Outcome(TRANSIENT, matching_line(lines, TEXT_TRANSIENT))
    return Outcome(FAILED, f"exit {exit_code}")


def reset_time(info: dict) -> float | None:
    """`resetsAt` (epoch seconds) of a rate_limit_info, if it has a sane one."""
    value = info.get("resetsAt")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value) / 1000 if value > 1e11 else float(value)  # milliseconds, in case
    return None


def text_of(message: dict) -> str:
    body = message.get("message")
    content = body.get("content") if isinstance(body, dict) else None
    if isinstance(content, list):
        return " ".join(block.get("text", "") for block in content if isinstance(block, dict) and isinstance(block.get("text"), str))
    return ""


def first_text(values: object) -> str:
    if isinstance(values, list):
        return next((v for v in values if isinstance(v, str) and v), "")
    return ""


def matching_line(lines: list[str], pattern: re.Pattern) -> str:
    return next((line for line in reversed(lines) if pattern.search(line)), "")[:300]
