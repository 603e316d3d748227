"""Child processes: the one way ralph runs a command and waits for it (`run`),
and what it needs to know about process groups and liveness.

A child runs in a process group of its own (the group's id is the leader's
pid), so a timeout or a stop kills everything it started: SIGTERM to the
group, SIGKILL after a grace period; and whatever is still in the group when
the run ends is killed too. On Linux the leader also gets PR_SET_PDEATHSIG:
SIGKILL the moment the thread that started it dies, however it died. Its
input is written as it takes it, then closed (a child reading stdin sees
EOF; one that never reads it is fine). Its output is read as it arrives,
handed to `on_output` chunk by chunk (`Lines` makes lines of them) and kept
bounded: the first and last bytes of a flood, and how many there were.

The callers are small policies on top: the loop's agent and verify command
(ralph.run.proc), lifecycle hooks and child loops (ralph.loop.lifecycle),
users' commands on Claude Code events (ralph.claude.event_command_select).
"""
from __future__ import annotations

import ctypes
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable

POLL_SECONDS = 0.1  # how soon a run notices its leader exited (or `stop()`) while nothing is read
GONE_POLL_SECONDS = 0.02  # how often the end of a run looks whether its group is gone
GONE_WAIT_SECONDS = 10.0  # after SIGKILL: a bound on waiting (a process stuck in the kernel), not a target
READ_BYTES = 65536
PR_SET_PDEATHSIG = 1


def kill_group(pgid: int, sig: int) -> None:
    """Signal a process group; one already gone (or not ours) is no error."""
    try:
        os.killpg(pgid, sig)
    except OSError:
        pass


def group_members(pgid: int) -> list[int]:
    """Live (not zombie: a zombie holds no file and no lock) processes in a
    process group, from /proc; without /proc, the group's id while it has any."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []  # the cheap answer at the end of most runs: nothing is left
    except OSError:
        pass
    try:
        names = os.listdir("/proc")
    except OSError:
        return [pgid]
    members = []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[0] != b"Z" and fields[2] == b"%d" % pgid:
            members.append(int(name))
    return members


def wait_group_gone(pgid: int, seconds: float) -> bool:
    """Poll until no live process is left in the group, at most `seconds`."""
    deadline = time.monotonic() + seconds
    while group_members(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(GONE_POLL_SECONDS)
    return True


def end_group(group: Group, grace: float) -> None:
    """What is left of a finished run's group is ended, and gone before the
    run returns: SIGTERM first when `grace` > 0 (a git among them removes its
    lock files), SIGKILL after `grace` seconds, repeated until the group is
    empty (a child forked while the first SIGKILL was delivered escapes it)."""
    if grace > 0 and group_members(group.pgid):
        group.terminate()
        if wait_group_gone(group.pgid, grace):
            return
    deadline = time.monotonic() + GONE_WAIT_SECONDS
    while True:
        group.kill()
        if not group_members(group.pgid) or time.monotonic() >= deadline:
            return
        time.sleep(GONE_POLL_SECONDS)


def pid_alive(pid: object) -> bool:
    """Is there a process with this pid (ours or another user's)?"""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def argv_for(command: list[str] | str) -> list[str]:
    """A string runs through /bin/sh -c (pipes, env vars); a list runs as is."""
    return ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)


class Group:
    """A running child's process group, as the run sees it and as anything
    that must end it from outside (a signal handler) reaches it. SIGTERM goes
    out once; the grace period before SIGKILL counts from then."""

    __slots__ = ("pgid", "term_at")

    def __init__(self, pgid: int) -> None:
        self.pgid = pgid
        self.term_at = 0.0  # when SIGTERM was sent (time.monotonic), 0: not yet

    def terminate(self) -> None:
        if not self.term_at:
            self.term_at = time.monotonic()
            kill_group(self.pgid, signal.SIGTERM)

    def kill(self) -> None:
        kill_group(self.pgid, signal.SIGKILL)


class Capture:
    """The first `head_limit` and the last `tail_limit` bytes of a stream, and its size."""

    __slots__ = ("head", "tail", "total", "head_limit", "tail_limit")

    def __init__(self, head_limit: int, tail_limit: int) -> None:
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
        if chunk and self.tail_limit:
            self.tail += chunk
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    @property
    def dropped(self) -> int:
        """Bytes neither in the head nor in the tail."""
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        """Head and tail decoded, with a line saying how much was cut between them."""
        middle = f"\n[... {self.dropped} bytes of output cut ...]\n" if self.dropped else ""
        return self.head.decode("utf-8", "replace") + middle + self.tail.decode("utf-8", "replace")


class Lines:
    """An `on_output` for a line-oriented reader: hands `on_line` each whole
    line (bytes, newline included) as soon as it is complete; a line growing
    past `max_line` bytes is handed on in pieces of that size. `flush()`
    hands on what is left at the end (a last line without its newline)."""

    __slots__ = ("on_line", "max_line", "pending")

    def __init__(self, on_line: Callable[[bytes], None], max_line: int) -> None:
        self.on_line = on_line
        self.max_line = max_line
        self.pending = b""

    def __call__(self, chunk: bytes) -> None:
        self.pending += chunk
        while True:
            end = self.pending.find(b"\n")
            if end < 0:
                break
            line, self.pending = self.pending[: end + 1], self.pending[end + 1:]
            self.on_line(line)
        while len(self.pending) > self.max_line:
            piece, self.pending = self.pending[: self.max_line], self.pending[self.max_line:]
            self.on_line(piece)

    def flush(self) -> None:
        if self.pending:
            pending, self.pending = self.pending, b""
            self.on_line(pending)


class LineLog:
    """A log file fed a child's output in chunks (its `write` is an
    `on_output`), written line by line through `redact`: the hook that keeps
    secrets out of what is logged. `redact(line)` gets a line without its
    ending and returns what to write instead (the ending is kept), or None to
    write nothing of it."""

    __slots__ = ("file", "redact", "lines")

    def __init__(self, file: object, redact: Callable[[str], str | None], max_line: int) -> None:
        self.file = file
        self.redact = redact
        self.lines = Lines(self._write_line, max_line)

    def write(self, chunk: bytes) -> None:
        self.lines(chunk)

    def _write_line(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace")
        body = text.rstrip("\r\n")
        kept = self.redact(body)
        if kept is not None:
            self.file.write((kept + text[len(body):]).encode("utf-8"))  # type: ignore[attr-defined]

    def flush(self) -> None:
        self.lines.flush()
        self.file.flush()  # type: ignore[attr-defined]

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.file.close()  # type: ignore[attr-defined]


# ---- children that die with their parent ----

_prctl: list = []  # prctl(2), looked up once in the parent; None off Linux


def _die_with_parent() -> None:
    """Runs in the child between fork and exec: SIGKILL when the parent dies.
    Only calls what the parent looked up: nothing is imported or resolved here."""
    _prctl[0](PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _pdeathsig_hook() -> Callable[[], None] | None:
    if not _prctl:
        prctl = None
        if sys.platform.startswith("linux"):
            try:
                prctl = ctypes.CDLL(None, use_errno=True).prctl
                prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)
            except (OSError, AttributeError):
                prctl = None
        _prctl.append(prctl)
    return _die_with_parent if _prctl[0] is not None else None


def start(argv: list[str], *, cwd: str | None, env: dict[str, str] | None, stdin: object, stdout: object,
          merge_stderr: bool = True, new_session: bool = False) -> subprocess.Popen:
    """Start a child in a process group of its own (with `new_session`, in a
    session of its own too: no controlling terminal), killed when the thread
    that started it dies (Linux). stdin/stdout: subprocess.PIPE or a file;
    stderr goes to stdout, or to a pipe of its own. Raises OSError or
    ValueError when it cannot start."""
    return subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=stdout,
                            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                            start_new_session=new_session, process_group=None if new_session else 0,
                            preexec_fn=_pdeathsig_hook())


class Result:
    """What one run did. `output` holds stdout (and stderr, when merged);
    `errors` stderr kept apart, else None."""

    __slots__ = ("exit_code", "error", "timed_out", "idle_timed_out", "stopped", "duration", "output", "errors")

    def __init__(self, output: Capture, errors: Capture | None) -> None:
        self.exit_code: int | None = None  # negative: killed by that signal; None: never started
        self.error = ""  # why it could not start
        self.timed_out = False  # ran past `timeout`: its group was killed
        self.idle_timed_out = False  # printed nothing for `idle_timeout` seconds: its group was killed
        self.stopped = False  # `stop()` asked: its group was killed
        self.duration = 0.0
        self.output = output
        self.errors = errors


def run(argv: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None, stdin: bytes = b"",
        timeout: float, idle_timeout: float | None = None, max_bytes: int, head_bytes: int = 0,
        on_output: Callable[[bytes], None] | None = None, merge_stderr: bool = True,
        stop: Callable[[], bool] | None = None, on_group: Callable[[Group | None], None] | None = None,
        kill_grace: float, drain: float, new_session: bool = False, leftover_grace: float = 0.0) -> Result:
    """Run `argv` to its end, its `timeout`, `idle_timeout` seconds without
    output, or `stop()`; any of those sends SIGTERM to its group, and SIGKILL
    `kill_grace` seconds later. Once the leader has exited, what it left
    behind may hold its output open for `drain` seconds more. Every chunk of
    stdout (stderr included unless `merge_stderr` is false) goes to
    `on_output` as it arrives; each stream keeps `max_bytes`: its first
    `head_bytes`, and its last bytes. What the command leaves in its group is
    ended before `run` returns (end_group: SIGTERM and `leftover_grace`
    seconds first when that is > 0, then SIGKILL until none is left).
    `on_group` is told the group once it runs and None once the run is over
    (every process of it gone). Never raises for a command that cannot
    start: `Result.error` says why."""
    result = Result(Capture(head_bytes, max_bytes - head_bytes),
                    None if merge_stderr else Capture(head_bytes, max_bytes - head_bytes))
    started = time.monotonic()
    try:
        proc = start(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     merge_stderr=merge_stderr, new_session=new_session)
    except (OSError, ValueError) as e:
        result.error = getattr(e, "strerror", None) or str(e)
        result.duration = time.monotonic() - started
        return result
    group = Group(proc.pid)
    assert proc.stdin is not None and proc.stdout is not None
    out_fd = proc.stdout.fileno()
    captures = {out_fd: result.output}
    if proc.stderr is not None and result.errors is not None:
        captures[proc.stderr.fileno()] = result.errors
    selector = selectors.DefaultSelector()
    for fd in captures:
        selector.register(fd, selectors.EVENT_READ)
    unwritten = memoryview(stdin)
    in_fd = proc.stdin.fileno()
    if unwritten:
        os.set_blocking(in_fd, False)
        selector.register(in_fd, selectors.EVENT_WRITE)
    else:
        proc.stdin.close()
    deadline = started + timeout
    last_output = started
    exited_at = 0.0
    try:
        if on_group is not None:
            on_group(group)
        while captures:
            now = time.monotonic()
            if not group.term_at:
                if now >= deadline:
                    result.timed_out = True
                elif idle_timeout is not None and now - last_output >= idle_timeout:
                    result.idle_timed_out = True
                elif stop is not None and stop():
                    result.stopped = True
                if result.timed_out or result.idle_timed_out or result.stopped:
                    group.terminate()
            if group.term_at and now - group.term_at >= kill_grace:
                group.kill()
            if not exited_at and proc.poll() is not None:
                exited_at = now
            if exited_at and now - exited_at >= drain:
                break  # something the leader left behind holds the output: it is killed below
            wait = POLL_SECONDS
            if group.term_at:
                wait = min(wait, group.term_at + kill_grace - now)
            else:
                wait = min(wait, deadline - now)
                if idle_timeout is not None:
                    wait = min(wait, last_output + idle_timeout - now)
            if exited_at:
                wait = min(wait, exited_at + drain - now)
            for key, _ in selector.select(max(0.0, wait)):
                fd = key.fd
                if fd == in_fd:
                    unwritten = _feed(in_fd, unwritten)
                    if not unwritten:
                        selector.unregister(in_fd)
                        proc.stdin.close()
                        in_fd = -1
                    continue
                try:
                    chunk = os.read(fd, READ_BYTES)
                except OSError:
                    chunk = b""
                if not chunk:
                    selector.unregister(fd)
                    del captures[fd]
                    continue
                last_output = time.monotonic()
                captures[fd].add(chunk)
                if fd == out_fd and on_output is not None:
                    on_output(chunk)
        if not group.term_at and not exited_at:
            # its output closed before it exited (a program may close stdout in an exit
            # handler, just before it ends): it has `drain` seconds to finish on its own
            try:
                proc.wait(timeout=drain)
            except subprocess.TimeoutExpired:
                pass
    finally:
        selector.close()
        end_group(group, leftover_grace)  # the leader may be done, but nothing it started outlives the run
        result.exit_code = proc.wait()
        if on_group is not None:
            on_group(None)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
    result.duration = time.monotonic() - started
    return result


def _feed(fd: int, data: memoryview) -> memoryview:
    """Write what the child's stdin takes now; what is left (empty: done, or
    the child closed its stdin, which is its business)."""
    try:
        return data[os.write(fd, data[:READ_BYTES]):]
    except BlockingIOError:
        return data
    except OSError:
        return data[:0]
