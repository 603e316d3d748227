"""Running one hook process: ralph.process.run with a hook's policy. Its own
process group (a timeout or the end of the session kills everything it
started), stdin fed the context JSON then closed (a hook reading stdin sees
EOF), output captured bounded (the first and last bytes of a 100 MB flood,
and how much there was) and cleaned for people. A fire-and-forget hook
(`Job`) writes its output to a file instead and is reaped by polling."""
from __future__ import annotations

import os
import re
import subprocess
import time

from ralph import process
from ralph.process import Capture, Group

HEAD_BYTES = 16 * 1024
TAIL_BYTES = 48 * 1024
KILL_GRACE_SECONDS = 2.0  # SIGTERM, then SIGKILL if the group is still there
DRAIN_SECONDS = 0.5  # after the hook exits, how long its leftovers may hold the pipe
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


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

    def keep(self, capture: Capture) -> None:
        self.output = clean(capture.text())
        self.output_bytes = capture.total


def run(argv: list[str], *, cwd: str, env: dict[str, str], stdin_data: bytes, timeout: float,
        stopping: object = None) -> Outcome:
    """Run to completion, the timeout, or `stopping()`; never raises for a
    hook that cannot start."""
    ran = process.run(argv, cwd=cwd, env=env, stdin=stdin_data, timeout=timeout, max_bytes=HEAD_BYTES + TAIL_BYTES,
                      head_bytes=HEAD_BYTES, stop=stopping, kill_grace=KILL_GRACE_SECONDS,  # type: ignore[arg-type]
                      drain=DRAIN_SECONDS)
    outcome = Outcome()
    outcome.duration = ran.duration
    if ran.error:
        outcome.error = f"cannot run {argv[0]!r}: {ran.error}"
        return outcome
    outcome.exit_code = ran.exit_code
    outcome.timed_out = ran.timed_out
    outcome.stopped = ran.stopped
    outcome.keep(ran.output)
    return outcome


class Job:
    """A fire-and-forget hook process: output to a file, reaped by poll(),
    killed with its group at its timeout or at the end of the session."""

    def __init__(self, argv: list[str], *, cwd: str, env: dict[str, str], stdin_data: bytes, timeout: float,
                 out_path: str) -> None:
        self.started = time.monotonic()
        self.deadline = self.started + timeout
        self.out_path = out_path
        self.timed_out = False
        self.killed_at_end = False
        os.makedirs(os.path.dirname(out_path), exist_ok=True)
        in_path = out_path + ".stdin.json"
        with open(in_path, "wb") as f:
            f.write(stdin_data)
        with open(in_path, "rb") as stdin, open(out_path, "wb") as out:
            self.proc = process.start(argv, cwd=cwd, env=env, stdin=stdin, stdout=out)
        self.pid = self.proc.pid
        self.group = Group(self.pid)

    def poll(self) -> bool:
        """True once it is over (exited, or killed at its timeout)."""
        now = time.monotonic()
        if self.proc.poll() is not None:
            self.group.kill()  # its leftovers
            return True
        if now >= self.deadline and not self.group.term_at:
            self.timed_out = True
            self.group.terminate()
        elif self.group.term_at and now - self.group.term_at >= KILL_GRACE_SECONDS:
            self.group.kill()
        return False

    def kill(self) -> None:
        self.killed_at_end = True
        self.group.terminate()
        try:
            self.proc.wait(KILL_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        self.group.kill()
        self.proc.wait()

    def outcome(self) -> Outcome:
        outcome = Outcome()
        outcome.exit_code = self.proc.returncode
        outcome.timed_out = self.timed_out
        outcome.duration = time.monotonic() - self.started
        capture = Capture(HEAD_BYTES, TAIL_BYTES)
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
        outcome.keep(capture)
        return outcome
