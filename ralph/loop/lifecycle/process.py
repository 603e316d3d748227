"""Running one hook process safely: its own process group (a timeout or the
end of the session kills everything it started), stdin fed the context JSON
then closed (a hook reading stdin sees EOF), output captured bounded (the
first and last bytes of a 100 MB flood, and how much there was)."""
from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import threading
import time

from ralph.loop.proc import feed_stdin  # a hook that does not read its stdin is fine
from ralph.process import kill_group

HEAD_BYTES = 16 * 1024
TAIL_BYTES = 48 * 1024
KILL_GRACE_SECONDS = 2.0  # SIGTERM, then SIGKILL if the group is still there
DRAIN_SECONDS = 0.5  # after the hook exits, how long its leftovers may hold the pipe
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


class Capture:
    """Keeps the head and the tail of a stream, counts everything."""

    __slots__ = ("head", "tail", "total", "head_limit", "tail_limit")

    def __init__(self, head_limit: int = HEAD_BYTES, tail_limit: int = TAIL_BYTES) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.head_limit = head_limit
        self.tail_limit = tail_limit

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    def text(self) -> str:
        kept = len(self.head) + len(self.tail)
        middle = f"\n[... {self.total - kept} bytes of output cut ...]\n" if self.total > kept else ""
        raw = self.head.decode("utf-8", "replace") + middle + self.tail.decode("utf-8", "replace")
        return clean(raw)


def clean(text: str) -> str:
    """ANSI escapes and carriage-return redraws removed, NULs dropped."""
    text = ANSI.sub("", text).replace("\x00", "")
    return "\n".join(line.rsplit("\r", 1)[-1] if "\r" in line.rstrip("\r") else line.rstrip("\r")
                     for line in text.split("\n"))


class Outcome:
    __slots__ = ("exit_code", "timed_out", "stopped", "duration", "output", "output_bytes", "error")

    def __init__(self) -> None:
        self.exit_code: int | None = None
        self.timed_out = False
        self.stopped = False  # the loop was interrupted while it ran
        self.duration = 0.0
        self.output = ""
        self.output_bytes = 0
        self.error = ""  # could not start: why


def run(argv: list[str], *, cwd: str, env: dict[str, str], stdin_data: bytes, timeout: float,
        stopping: object = None, sink: object = None) -> Outcome:
    """Run to completion, the timeout, or `stopping()`; never raises for a
    hook that cannot start. `sink(chunk)` sees the output as it comes."""
    outcome = Outcome()
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, process_group=0)
    except OSError as e:
        outcome.error = f"cannot run {argv[0]!r}: {e.strerror or e}"
        outcome.duration = time.monotonic() - started
        return outcome
    feeder = threading.Thread(target=feed_stdin, args=(proc.stdin, stdin_data), daemon=True)
    feeder.start()
    capture = Capture()
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    deadline = started + timeout
    term_at = 0.0
    exited_at = 0.0
    try:
        while True:
            now = time.monotonic()
            if not term_at and now >= deadline:
                outcome.timed_out = True
            elif not term_at and stopping is not None and stopping():  # type: ignore[operator]
                outcome.stopped = True
            if (outcome.timed_out or outcome.stopped) and not term_at:
                term_at = now
                kill_group(proc.pid, signal.SIGTERM)
            if term_at and now - term_at >= KILL_GRACE_SECONDS:
                kill_group(proc.pid, signal.SIGKILL)
            if not exited_at and proc.poll() is not None:
                exited_at = now
            if exited_at and now - exited_at >= DRAIN_SECONDS:
                break
            wait = 0.05 if exited_at else 0.25
            if not term_at:
                wait = min(wait, max(0.0, deadline - now))
            if not selector.select(wait):
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            capture.add(chunk)
            if sink is not None:
                sink(chunk)  # type: ignore[operator]
    finally:
        selector.close()
        kill_group(proc.pid, signal.SIGKILL)  # nothing a hook started outlives it
        outcome.exit_code = proc.wait()
        proc.stdout.close()
        feeder.join(1.0)
    outcome.duration = time.monotonic() - started
    outcome.output = capture.text()
    outcome.output_bytes = capture.total
    return outcome


class Job:
    """A fire-and-forget hook process: output to a file, reaped by poll(),
    killed with its group at its timeout or at the end of the session."""

    def __init__(self, argv: list[str], *, cwd: str, env: dict[str, str], stdin_data: bytes, timeout: float,
                 out_path: str) -> None:
        self.started = time.monotonic()
        self.deadline = self.started + timeout
        self.out_path = out_path
        self.term_at = 0.0
        self.timed_out = False
        self.killed_at_end = False
        os.makedirs(os.path.dirname(out_path), exist_ok=True)
        in_path = out_path + ".stdin.json"
        with open(in_path, "wb") as f:
            f.write(stdin_data)
        with open(in_path, "rb") as stdin, open(out_path, "wb") as out:
            self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=out, stderr=subprocess.STDOUT,
                                         process_group=0)
        self.pid = self.proc.pid

    def poll(self) -> bool:
        """True once it is over (exited, or killed at its timeout)."""
        now = time.monotonic()
        if self.proc.poll() is not None:
            kill_group(self.pid, signal.SIGKILL)  # its leftovers
            return True
        if now >= self.deadline and not self.term_at:
            self.timed_out = True
            self.term_at = now
            kill_group(self.pid, signal.SIGTERM)
        elif self.term_at and now - self.term_at >= KILL_GRACE_SECONDS:
            kill_group(self.pid, signal.SIGKILL)
        return False

    def kill(self) -> None:
        self.killed_at_end = True
        kill_group(self.pid, signal.SIGTERM)
        try:
            self.proc.wait(KILL_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        kill_group(self.pid, signal.SIGKILL)
        self.proc.wait()

    def outcome(self) -> Outcome:
        outcome = Outcome()
        outcome.exit_code = self.proc.returncode
        outcome.timed_out = self.timed_out
        outcome.duration = time.monotonic() - self.started
        capture = Capture()
        try:
            with open(self.out_path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                capture.add(f.read(HEAD_BYTES))
                if size > HEAD_BYTES + TAIL_BYTES:
                    f.seek(size - TAIL_BYTES)
                    capture.total = size - TAIL_BYTES
                capture.add(f.read())
        except OSError:
            pass
        outcome.output = capture.text()
        outcome.output_bytes = capture.total
        return outcome
