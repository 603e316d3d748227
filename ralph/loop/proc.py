"""Child processes: the agent and the verify command, each in its own process
group (so a timeout or Ctrl-C kills everything they started), output streamed
as it arrives; and the few git calls the loop needs.

Nothing a child starts outlives the loop, even one killed with SIGKILL: the
child's leader gets PR_SET_PDEATHSIG (Linux), and a watchdog process (one per
run, outside every group the terminal signals) kills the current child group
the moment the loop's end of a pipe closes. After every child, whatever is
left in its group is killed. The group is also recorded in run.json, so the
next run ends it before touching anything if both of those were killed too.
"""
from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time

from ralph.process import kill_group

KILL_GRACE_SECONDS = 5.0  # SIGTERM first; SIGKILL if the group is still there after this
DRAIN_SECONDS = 2.0  # after the leader exits, how long leftovers may keep the pipe open
TAIL_BYTES = 256 * 1024


class Interrupts:
    """SIGINT/SIGTERM while the loop runs: the first stops the run after killing
    the current child group (TERM, then KILL after a grace period); a second
    one kills it at once and forces the finish. Also where the current child
    group is announced: to the watchdog and to `on_group` (run.json)."""

    __slots__ = ("signum", "count", "_pgid", "previous", "watchdog", "on_group")

    def __init__(self) -> None:
        self.signum = 0
        self.count = 0
        self._pgid = 0
        self.previous: dict[int, object] = {}
        self.watchdog: Watchdog | None = None
        self.on_group = None  # called with each new child group's id

    @property
    def pgid(self) -> int:
        return self._pgid

    @pgid.setter
    def pgid(self, value: int) -> None:
        self._pgid = value
        if self.watchdog is not None:
            self.watchdog.watch(value)
        if value and self.on_group is not None:
            self.on_group(value)

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
            kill_group(self.pgid, sig)


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


def feed_stdin(pipe: object, data: bytes) -> None:
    """Write a child's whole input, then close it (a thread: the child may not read)."""
    try:
        pipe.write(data)  # type: ignore[attr-defined]
    except (BrokenPipeError, OSError, ValueError):
        pass  # the child did not read its input; that is its business
    try:
        pipe.close()  # type: ignore[attr-defined]
    except (BrokenPipeError, OSError, ValueError):
        pass


# ---- processes that must die with the loop ----

PR_SET_PDEATHSIG = 1
_libc: list = []


def _die_with_parent() -> None:
    """Pre-exec in the child: SIGKILL when the loop dies (Linux; else nothing).
    Only calls the function looked up in the parent: nothing is imported or
    resolved between fork and exec."""
    if _libc and _libc[0] is not None:
        _libc[0](PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _load_libc() -> None:
    """prctl(2), looked up in the parent, once (None off Linux)."""
    if _libc:
        return
    try:
        import ctypes
        import sys

        if not sys.platform.startswith("linux"):
            raise OSError("prctl is Linux only")
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)
        _libc.append(prctl)
    except (ImportError, OSError, AttributeError):
        _libc.append(None)


WATCHDOG_CODE = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
fd = int(sys.argv[1])
group = 0
pending = b""
while True:
    data = os.read(fd, 4096)
    if not data:
        break
    pending += data
    *lines, pending = pending.split(b"\n")
    for line in lines:
        group = int(line or 0)
if group > 0:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""


class Watchdog:
    """A small process that outlives a SIGKILLed loop just long enough to kill
    the child group it was told about. It reads group ids from a pipe only the
    loop can write; end of file (the loop is gone, however) means kill the last
    one. It sits in its own process group, so Ctrl-C on the terminal does not
    reach it, and it ignores SIGINT/SIGTERM."""

    __slots__ = ("proc", "fd")

    def __init__(self, proc: subprocess.Popen | None, fd: int) -> None:
        self.proc = proc
        self.fd = fd

    @classmethod
    def start(cls) -> Watchdog:
        import sys

        read_end, write_end = os.pipe()
        os.set_inheritable(read_end, True)
        try:
            proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", WATCHDOG_CODE, str(read_end)],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    pass_fds=(read_end,), process_group=0, close_fds=True)
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return cls(None, -1)
        os.close(read_end)
        os.set_inheritable(write_end, False)
        return cls(proc, write_end)

    def watch(self, pgid: int) -> None:
        if self.fd < 0:
            return
        try:
            os.write(self.fd, b"%d\n" % pgid)
        except OSError:
            pass

    def close(self) -> None:
        """The loop ends normally: nothing to kill, the watchdog exits."""
        if self.fd >= 0:
            self.watch(0)
            os.close(self.fd)
            self.fd = -1
        if self.proc is not None:
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---- telling a process group of ours from a stranger on a reused pid ----


def boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return ""


def start_ticks(pid: int) -> int:
    """When a process started (clock ticks since boot), 0 if unknown or gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return 0
    try:
        return int(fields[19]) if fields[0] != b"Z" else 0
    except (IndexError, ValueError):
        return 0


def process_identity(pid: int) -> dict:
    """What run.json records about a process so a later run can recognise it."""
    return {"pid": pid, "start": start_ticks(pid), "boot": boot_id()}


def is_same_process(identity: object) -> bool:
    """The recorded process is still running (not a stranger that got its pid)."""
    if not isinstance(identity, dict) or not isinstance(identity.get("pid"), int) or identity["pid"] <= 0:
        return False
    pid = identity["pid"]
    start = start_ticks(pid)
    if not start:
        return False
    return identity.get("boot") == boot_id() and identity.get("start") == start


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes in a process group, from /proc."""
    members = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return members
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 19 and fields[0] != b"Z" and int(fields[2]) == pgid:
            members.append(int(name))
    return members


def end_recorded_group(identity: object) -> int:
    """Kill a child group recorded by an earlier run, if it is still that
    group: its leader alive with the recorded start time, or the leader gone
    and every member started after it (Linux never hands out a pid that is
    still a group's id, so those are the group's own children). Returns how
    many processes were killed."""
    if not isinstance(identity, dict) or not isinstance(identity.get("pid"), int) or identity["pid"] <= 1:
        return 0
    if identity.get("boot") != boot_id() or not identity.get("boot"):
        return 0  # recorded before a reboot: nothing of it can be running
    pgid = identity["pid"]
    members = group_members(pgid)
    if not members:
        return 0
    recorded_start = identity.get("start")
    if pgid in members:
        if start_ticks(pgid) != recorded_start:
            return 0  # a stranger leads a new group with that id
    elif not isinstance(recorded_start, int) or any(start_ticks(m) < recorded_start for m in members):
        return 0
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return 0
    return len(members)


def run_streaming(command: list[str] | str, *, cwd: str, stdin_data: bytes, timeout: float,
                  sinks: list, interrupts: Interrupts, env: dict[str, str] | None = None) -> ProcessResult:
    """Run `command` in a new process group, feed it stdin_data, pass every
    chunk of its merged stdout/stderr to each sink, and stop it at the timeout
    or on an interrupt. Never raises for a child that fails to start."""
    result = ProcessResult()
    started = time.monotonic()
    _load_libc()
    try:
        proc = subprocess.Popen(
            argv_for(command), cwd=cwd, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, process_group=0,
            preexec_fn=_die_with_parent if _libc[0] is not None else None,
        )
    except OSError as e:
        result.error = f"cannot run {argv_for(command)[0]!r}: {e.strerror or e}"
        result.duration = time.monotonic() - started
        return result
    interrupts.pgid = proc.pid
    feeder = None
    if stdin_data:
        feeder = threading.Thread(target=feed_stdin, args=(proc.stdin, stdin_data), daemon=True)
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
        kill_group(proc.pid, signal.SIGKILL)
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
