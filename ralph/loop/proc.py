"""Child processes: the agent and the verify command, each in its own process
group (so a timeout or Ctrl-C kills everything they started), output streamed
as it arrives; and the few git calls the loop needs."""
from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time

KILL_GRACE_SECONDS = 5.0  # SIGTERM first; SIGKILL if the group is still there after this
DRAIN_SECONDS = 2.0  # after the leader exits, how long leftovers may keep the pipe open
TAIL_BYTES = 256 * 1024


class Interrupts:
    """SIGINT/SIGTERM while the loop runs: the first stops the run after killing
    the current child group (TERM, then KILL after a grace period); a second
    one kills it at once and forces the finish."""

    __slots__ = ("signum", "count", "pgid", "previous")

    def __init__(self) -> None:
        self.signum = 0
        self.count = 0
        self.pgid = 0
        self.previous: dict[int, object] = {}

    def install(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            self.previous[signum] = signal.signal(signum, self._handle)

    def restore(self) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        self.previous.clear()

    def _handle(self, signum: int, frame: object) -> None:
        self.count += 1
        if not self.signum:
            self.signum = signum
        self.kill_group(signal.SIGTERM if self.count == 1 else signal.SIGKILL)

    @property
    def stopping(self) -> bool:
        return self.count > 0

    @property
    def forced(self) -> bool:
        return self.count > 1

    def kill_group(self, sig: int) -> None:
        if self.pgid:
            try:
                os.killpg(self.pgid, sig)
            except (ProcessLookupError, PermissionError):
                pass


class RedactedLog:
    """An iteration log file that never holds a secret in clear: output is
    written line by line through ralph.rules.redact. A private-key block
    spans lines, so from its BEGIN line to its END line nothing is written
    but the marker. A line longer than MAX_LINE is written in pieces."""

    MAX_LINE = 64 * 1024

    __slots__ = ("file", "pending", "in_key")

    def __init__(self, file: object) -> None:
        self.file = file
        self.pending = b""
        self.in_key = False

    def write(self, data: bytes) -> None:
        self.pending += data
        while True:
            end = self.pending.find(b"\n")
            if end < 0:
                if len(self.pending) > self.MAX_LINE:
                    piece, self.pending = self.pending[: self.MAX_LINE], self.pending[self.MAX_LINE:]
                    self._write_line(piece)
                return
            line, self.pending = self.pending[: end + 1], self.pending[end + 1:]
            self._write_line(line)

    def _write_line(self, line: bytes) -> None:
        from ralph.rules.redact import redact

        text = line.decode("utf-8", "replace")
        if self.in_key:
            if "PRIVATE KEY" in text and "-----END" in text:
                self.in_key = False
            return
        if "PRIVATE KEY" in text and "-----BEGIN" in text and "-----END" not in text.split("-----BEGIN", 1)[1]:
            self.in_key = True
        body = text.rstrip("\r\n")
        self.file.write((redact(body) + text[len(body):]).encode("utf-8"))  # type: ignore[attr-defined]

    def flush(self) -> None:
        if self.pending:
            pending, self.pending = self.pending, b""
            self._write_line(pending)
        self.file.flush()  # type: ignore[attr-defined]

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.file.close()  # type: ignore[attr-defined]


class ProcessResult:
    __slots__ = ("exit_code", "timed_out", "interrupted", "duration", "tail", "error")

    def __init__(self) -> None:
        self.exit_code: int | None = None
        self.timed_out = False
        self.interrupted = False
        self.duration = 0.0
        self.tail = b""
        self.error = ""  # could not start: why

    @property
    def output(self) -> str:
        return self.tail.decode("utf-8", "replace")


def argv_for(command: list[str] | str) -> list[str]:
    """A string runs through /bin/sh -c (pipes, env vars); a list runs as is."""
    return ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)


def _feed_stdin(pipe: object, data: bytes) -> None:
    try:
        pipe.write(data)  # type: ignore[attr-defined]
    except (BrokenPipeError, OSError, ValueError):
        pass  # the child did not read its input; that is its business
    try:
        pipe.close()  # type: ignore[attr-defined]
    except (BrokenPipeError, OSError, ValueError):
        pass


def run_streaming(command: list[str] | str, *, cwd: str, stdin_data: bytes, timeout: float,
                  sinks: list, interrupts: Interrupts, env: dict[str, str] | None = None) -> ProcessResult:
    """Run `command` in a new process group, feed it stdin_data, pass every
    chunk of its merged stdout/stderr to each sink, and stop it at the timeout
    or on an interrupt. Never raises for a child that fails to start."""
    result = ProcessResult()
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv_for(command), cwd=cwd, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, process_group=0,
        )
    except OSError as e:
        result.error = f"cannot run {argv_for(command)[0]!r}: {e.strerror or e}"
        result.duration = time.monotonic() - started
        return result
    interrupts.pgid = proc.pid
    feeder = None
    if stdin_data:
        feeder = threading.Thread(target=_feed_stdin, args=(proc.stdin, stdin_data), daemon=True)
        feeder.start()
    else:
        proc.stdin.close()  # type: ignore[union-attr]
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    deadline = started + timeout
    term_sent_at = 0.0
    exited_at = 0.0
    tail = bytearray()
    try:
        while True:
            now = time.monotonic()
            if interrupts.stopping and not result.interrupted:
                result.interrupted = True
                term_sent_at = term_sent_at or now  # the handler already sent SIGTERM
            if not result.interrupted and not result.timed_out and now >= deadline:
                result.timed_out = True
                term_sent_at = now
                interrupts.kill_group(signal.SIGTERM)
            if term_sent_at and (interrupts.forced or now - term_sent_at >= KILL_GRACE_SECONDS):
                interrupts.kill_group(signal.SIGKILL)
            if not exited_at and proc.poll() is not None:
                exited_at = now
            if exited_at and now - exited_at >= DRAIN_SECONDS:
                break  # something the agent left behind holds the pipe; it is killed below
            wait = 1.0
            if not term_sent_at and not result.timed_out:
                wait = min(wait, max(0.0, deadline - now))
            if exited_at:
                wait = min(wait, 0.1)
            if not selector.select(wait):
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            for sink in sinks:
                sink(chunk)
            tail += chunk
            if len(tail) > TAIL_BYTES:
                del tail[: len(tail) - TAIL_BYTES]
    finally:
        selector.close()
        # the leader may be done, but nothing it started outlives the iteration
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        result.exit_code = proc.wait()
        interrupts.pgid = 0
        proc.stdout.close()
        if feeder is not None:
            feeder.join(1.0)
    if interrupts.stopping:
        result.interrupted = True
    result.tail = bytes(tail)
    result.duration = time.monotonic() - started
    return result


def git(root: str, *args: str, check: bool = False) -> tuple[int, str]:
    """(exit code, stdout+stderr) of one git command in the project root."""
    proc = subprocess.run(["git", *args], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL)
    text = proc.stdout.decode("utf-8", "replace").strip()
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed ({proc.returncode}): {text}")
    return proc.returncode, text


class GitError(RuntimeError):
    pass


def head_sha(root: str) -> str:
    code, out = git(root, "rev-parse", "--verify", "-q", "HEAD")
    if code != 0:
        raise GitError(
            "the project has no commit yet, so there is no checkpoint to roll back to; "
            "make one first: git commit --allow-empty -m 'initial commit'"
        )
    return out.splitlines()[-1].strip()
