"""What the person at the terminal sees: on a TTY one status line (iteration
i/N, story, elapsed, the agent's turns, tokens and cost, last result) kept
below the agent's output; plain `ralph-loop:` lines otherwise (logs, CI).

The agent's output is shown as it is, or, when it speaks Claude Code's
stream-json (ralph.loop.stream), as a live view: the assistant's text, one
line per tool call (`→ Bash: pytest -q`, `→ Edit: src/app.py`) and notes (a
failed tool, the client retrying, a rate limit). Everything shown goes
through ralph.redaction first.
"""
from __future__ import annotations

import os
import sys
import time

from ralph.redaction import redact
from ralph.run.clock import format_duration

# collections.abc (the collections package) costs every loop start about a
# millisecond; the annotations only name it (type checkers read this as True)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

CLEAR_LINE = "\r\x1b[K"
TEXT_LINES = 12  # of one assistant message; the rest is in the iteration's log
ITEM_PREFIX = {"tool": "  → ", "note": "  · ", "text": "  "}




def clock_time(epoch: float, now: float | None = None) -> str:
    """A moment for the screen: local time with its zone ("17:17 CET"), the
    date too when it is not within the day around `now`. The records say UTC
    (ISO 8601, Z); the screen says this, everywhere."""
    near = now is not None and abs(epoch - now) < 20 * 3600
    return time.strftime("%H:%M %Z" if near else "%Y-%m-%d %H:%M %Z", time.localtime(epoch))


class Display:
    __slots__ = ("out", "tty", "quiet", "status_text", "status_shown", "line_open", "started", "last_draw", "live")

    def __init__(self, out: object = None, quiet: bool = False, tty: bool | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.tty = self.out.isatty() if tty is None else tty  # type: ignore[attr-defined]
        self.quiet = quiet
        self.status_text = ""
        self.status_shown = False
        self.line_open = False  # streamed output ended mid-line
        self.started = time.monotonic()
        self.last_draw = 0.0
        self.live: Callable[[], str] | None = None  # what the status line adds while an agent runs

    def _write(self, text: str) -> None:
        self.out.write(text)  # type: ignore[attr-defined]
        self.out.flush()  # type: ignore[attr-defined]

    def _width(self) -> int:
        try:
            return os.get_terminal_size(self.out.fileno()).columns  # type: ignore[attr-defined]
        except (OSError, AttributeError, ValueError):
            return 100

    def _hide_status(self) -> None:
        if self.status_shown:
            self._write(CLEAR_LINE)
            self.status_shown = False

    def _draw_status(self) -> None:
        if not self.tty or not self.status_text or self.line_open:
            return
        text = self.status_text.replace("{elapsed}", format_duration(time.monotonic() - self.started))
        live = self.live() if self.live is not None else ""
        if live:
            text = text.replace(" · last: ", f" · {live} · last: ", 1) if " · last: " in text else f"{text} · {live}"
        width = max(20, self._width() - 1)
        if len(text) > width:
            text = text[: width - 1] + "…"
        self._write(CLEAR_LINE + "\x1b[7m" + text + "\x1b[0m")
        self.status_shown = True
        self.last_draw = time.monotonic()

    def status(self, text: str) -> None:
        """Set the status line (`{elapsed}` is filled in on every redraw)."""
        self.status_text = text
        if self.tty:
            self._hide_status()
            self._draw_status()

    def tick(self) -> None:
        if self.tty and self.status_shown and time.monotonic() - self.last_draw >= 1.0:
            self._draw_status()

    def message(self, text: str) -> None:
        """A line that stays: iteration results, the finish summary."""
        self._hide_status()
        if self.line_open:
            self._write("\n")
            self.line_open = False
        self._write(("ralph-loop: " if not self.tty else "» ") + text + "\n")
        self._draw_status()

    def output(self, chunk: bytes) -> None:
        """Streamed child output."""
        if self.quiet:
            return
        self._hide_status()
        text = chunk.decode("utf-8", "replace")
        self._write(text)
        self.line_open = not text.endswith("\n")
        self._draw_status()

    def agent_item(self, kind: str, text: str) -> None:
        """One item of the live view (ralph.loop.stream.AgentStream.on_item)."""
        if self.quiet:
            return
        if kind == "raw":
            self.output((str(redact(text)) + "\n").encode("utf-8", "replace"))
            return
        lines = [line for line in str(redact(text)).splitlines() if line.strip()] if kind == "text" else [str(redact(text))]
        if len(lines) > TEXT_LINES:
            lines = lines[:TEXT_LINES] + [f"… ({len(lines) - TEXT_LINES} more lines in the log)"]
        prefix = ITEM_PREFIX.get(kind, "  ")
        self._hide_status()
        if self.line_open:
            self._write("\n")
            self.line_open = False
        self._write("".join(prefix + line + "\n" for line in lines))
        self._draw_status()

    def close(self) -> None:
        self._hide_status()
        if self.line_open:
            self._write("\n")
            self.line_open = False
