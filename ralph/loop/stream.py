"""The agent's `--output-format stream-json` output, read as it arrives.

Claude Code prints one JSON object per line: `system` (init: model and
session; api_retry: the client retrying a failed request by itself),
`assistant` (text and tool_use blocks; an API error the client gave up on
is an assistant message with `is_api_error_message`), `user` (tool results),
`rate_limit_event` (a subscription's limit status, with `resetsAt`) and, last,
`result` (cost, tokens, turns, the error fields). Real lines of each kind are
in tests/fixtures/stream/ (scripts/capture_streams.py).

`AgentStream.feed` is an `on_output` for ralph.process.run: it cuts the
chunks into lines without copying what it does not keep, parses each with
orjson and keeps only what the loop needs (counters, the last rate-limit
status, the result), so its memory stays bounded whatever the stream's size:
a line longer than MAX_LINE is skipped (and counted), never held. A line that
is not a JSON object (a warning on stderr, another agent's plain output) is
passed through as text. What is worth showing goes to `on_item(kind, text)`:
"text" (the assistant's words), "tool" (`Bash: pytest -q`), "note" (a retry,
a limit, a skipped line), "raw" (a line that was not JSON).
"""
from __future__ import annotations

import os

import orjson

# collections.abc (the collections package) costs every loop start about a
# millisecond; the annotations only name it (type checkers read this as True)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_LINE = 16 * 1024 * 1024  # longer lines are skipped, not held (a tool result can be huge)
ARGUMENT_CHARS = 160  # what a tool line shows of its argument

# tool -> the input field that says what it acts on (the first one present)
TOOL_ARGUMENTS = {
    "Bash": ("command",),
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "Write": ("file_path",),
    "Read": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "Glob": ("pattern",),
    "Grep": ("pattern",),
    "WebFetch": ("url",),
    "WebSearch": ("query",),
    "Task": ("description", "prompt"),
    "Agent": ("description", "prompt"),
    "Skill": ("skill", "command"),
}
PATH_FIELDS = ("file_path", "notebook_path")


def one_line(text: str, limit: int = ARGUMENT_CHARS) -> str:
    """The first line of `text`, cut to `limit` characters (… when cut)."""
    first, _, rest = text.strip().partition("\n")
    if rest.strip() or len(first) > limit:
        return first[: limit - 1].rstrip() + "…"
    return first


def tool_summary(name: str, tool_input: object, root: str = "") -> str:
    """`Bash: pytest -q`, `Edit: src/app.py`: the tool and what it acts on."""
    if not isinstance(tool_input, dict):
        return name
    for field in TOOL_ARGUMENTS.get(name, ()):
        value = tool_input.get(field)
        if isinstance(value, str) and value:
            if field in PATH_FIELDS and root and value.startswith(root.rstrip("/") + "/"):
                value = os.path.relpath(value, root)
            return f"{name}: {one_line(value)}"
    if name == "TodoWrite" and isinstance(tool_input.get("todos"), list):
        return f"{name}: {len(tool_input['todos'])} item(s)"
    for value in tool_input.values():  # another tool (MCP, ...): its first plain argument
        if isinstance(value, str) and value:
            return f"{name}: {one_line(value)}"
    return name


class AgentStream:
    """What one agent run's stream said so far (see the module docstring)."""

    __slots__ = ("on_item", "root", "pending", "skipping", "bytes", "lines", "json_lines", "skipped_lines",
                 "session_id", "model", "message_ids", "input_tokens", "output_tokens", "last_message",
                 "message_tokens", "rate_limit", "api_error", "api_retries", "last_retry", "result")

    def __init__(self, on_item: Callable[..., None] | None = None, root: str = "") -> None:
        self.on_item = on_item
        self.root = root
        self.pending = bytearray()  # the start of a line whose end has not arrived
        self.skipping = False  # inside a line longer than MAX_LINE: dropped up to its newline
        self.bytes = 0
        self.lines = 0
        self.json_lines = 0
        self.skipped_lines = 0
        self.session_id: str | None = None
        self.model: str | None = None
        self.message_ids = 0  # distinct assistant messages: the turns so far
        self.input_tokens = 0  # so far, from the assistant messages (the result has the final figures)
        self.output_tokens = 0
        self.last_message = ""
        self.message_tokens = (0, 0)  # the current message's (input, output), counted once
        self.rate_limit: dict | None = None  # the last rate_limit_info that was not "allowed"
        self.api_error: dict | None = None  # the last assistant message that was an API error
        self.api_retries = 0  # the client's own retries (system/api_retry)
        self.last_retry: dict | None = None
        self.result: dict | None = None  # the closing {"type": "result"} object

    # ---- lines ----

    def feed(self, chunk: bytes) -> None:
        """An `on_output`: hand each complete line on, keep the unfinished one."""
        self.bytes += len(chunk)
        view = memoryview(chunk)
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            if self.skipping:
                self.skipping = False
            elif self.pending:
                self.pending += view[start:end]
                line = bytes(self.pending)
                self.pending.clear()
                self.line(line)
            else:
                self.line(view[start:end])
            start = end + 1
        if start < len(chunk) and not self.skipping:
            self.pending += view[start:]
            if len(self.pending) > MAX_LINE:
                self.skip_line()

    def close(self) -> None:
        """The stream ended: a last line without its newline (cut mid-way) still counts."""
        if self.pending:
            line = bytes(self.pending)
            self.pending.clear()
            self.line(line)
        self.skipping = False

    def skip_line(self) -> None:
        self.pending.clear()
        self.skipping = True
        self.skipped_lines += 1
        self.lines += 1
        self.item("note", f"a stream line longer than {MAX_LINE // (1024 * 1024)} MB was not read (it is in the log)")

    def line(self, line: memoryview | bytes) -> None:
        if line[-1:] == b"\r":
            line = line[:-1]
        if not line:
            return
        self.lines += 1
        if line[:1] == b"{":
            try:
                message = orjson.loads(line)
            except orjson.JSONDecodeError:
                message = None
            if isinstance(message, dict):
                self.json_lines += 1
                self.message(message)
                return
        self.item("raw", bytes(line).decode("utf-8", "replace"))

    def item(self, kind: str, text: str) -> None:
        if self.on_item is not None:
            self.on_item(kind, text)

    # ---- messages ----

    def message(self, message: dict) -> None:
        kind = message.get("type")
        if kind == "assistant":
            self.assistant(message)
        elif kind == "system":
            self.system(message)
        elif kind == "user":
            self.user(message)
        elif kind == "rate_limit_event":
            self.rate_limit_event(message.get("rate_limit_info"))
        elif kind == "result":
            self.result = message
            if isinstance(message.get("session_id"), str):
                self.session_id = message["session_id"]

    def system(self, message: dict) -> None:
        subtype = message.get("subtype")
        if subtype == "init":
            if isinstance(message.get("model"), str):
                self.model = message["model"]
            if isinstance(message.get("session_id"), str):
                self.session_id = message["session_id"]
        elif subtype == "api_retry":
            self.api_retries += 1
            self.last_retry = message
            status = message.get("error_status")
            delay = message.get("retry_delay_ms")
            seconds = f" in {delay / 1000:.1f}s" if isinstance(delay, (int, float)) else ""
            self.item("note", f"the client retries a failed request ({status or message.get('error') or 'error'}), "
                              f"attempt {message.get('attempt')}/{message.get('max_retries')}{seconds}")

    def assistant(self, message: dict) -> None:
        body = message.get("message")
        if not isinstance(body, dict):
            return
        if message.get("is_api_error_message") or message.get("api_error_status") is not None or message.get("api_error"):
            self.api_error = message
            params = message.get("api_error_params")
            if isinstance(params, dict) and isinstance(params.get("rate_limit_info"), dict):
                self.rate_limit = params["rate_limit_info"]
        else:
            self.count_usage(body)
        for block in body.get("content") or ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                self.item("text", block["text"])
            elif block.get("type") == "tool_use":
                self.item("tool", tool_summary(str(block.get("name") or "tool"), block.get("input"), self.root))

    def count_usage(self, body: dict) -> None:
        """Tokens so far: each message's usage once (a message comes one content block per line)."""
        usage = body.get("usage")
        if not isinstance(usage, dict):
            return
        number = lambda key: usage.get(key) if isinstance(usage.get(key), int) else 0  # noqa: E731
        tokens = (number("input_tokens") + number("cache_read_input_tokens") + number("cache_creation_input_tokens"),
                  number("output_tokens"))
        message_id = body.get("id")
        if message_id != self.last_message:
            self.last_message = message_id if isinstance(message_id, str) else ""
            self.message_ids += 1
            self.message_tokens = (0, 0)
        seen_in, seen_out = self.message_tokens
        self.input_tokens += max(0, tokens[0] - seen_in)
        self.output_tokens += max(0, tokens[1] - seen_out)
        self.message_tokens = (max(seen_in, tokens[0]), max(seen_out, tokens[1]))

    def user(self, message: dict) -> None:
        """A failed tool call gets a line: `✗ Exit code 1`."""
        body = message.get("message")
        content = body.get("content") if isinstance(body, dict) else None
        if not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error"):
                text = block.get("content")
                if isinstance(text, list):
                    text = " ".join(str(part.get("text", "")) for part in text if isinstance(part, dict))
                self.item("note", "✗ " + one_line(str(text or "tool error")))

    def rate_limit_event(self, info: object) -> None:
        if not isinstance(info, dict):
            return
        if info.get("status") == "allowed":
            return
        self.rate_limit = info
        self.item("note", f"rate limit: {info.get('status')} ({info.get('rateLimitType') or 'limit'})")

    # ---- what the loop reads ----

    @property
    def turns(self) -> int:
        number = (self.result or {}).get("num_turns")
        return number if isinstance(number, int) else self.message_ids

    @property
    def tokens(self) -> int:
        """Input (cache included) + output tokens so far, or the result's."""
        usage = (self.result or {}).get("usage")
        if isinstance(usage, dict):
            return sum(usage.get(k) for k in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                                 "cache_creation_input_tokens") if isinstance(usage.get(k), int))
        return self.input_tokens + self.output_tokens

    @property
    def cost_usd(self) -> float | None:
        cost = (self.result or {}).get("total_cost_usd")
        return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None

    @property
    def spoke_json(self) -> bool:
        """Did the agent speak stream-json at all (else its output was plain text)?"""
        return self.json_lines > 0
