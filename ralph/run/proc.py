"""The loop's child processes: the agent and the verify command, run by
ralph.process (each in its own process group, so a timeout or Ctrl-C kills
everything they started; output streamed as it arrives), the signals that
stop a run, the iteration log, and the few git calls the loop needs.

Nothing a child starts outlives the loop, even one killed with SIGKILL: the
child's leader gets PR_SET_PDEATHSIG (Linux), and a watchdog process (one per
run, outside every group the terminal signals) kills the current child group
the moment the loop's end of a pipe closes (again and again until the group
is gone). After every child, whatever is left in its group gets SIGTERM, then
SIGKILL after KILL_GRACE_SECONDS, and the iteration goes on only once the
group is gone. The group is also recorded in run.json, so the
next run ends it before touching anything if both of those were killed too.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys

from ralph import process
from ralph.process import Group, LineLog, argv_for
from ralph.redaction import redact
from ralph.run.git import run as run_git

KILL_GRACE_SECONDS = 5.0  # SIGTERM first; SIGKILL if the group is still there after this
DRAIN_SECONDS = 2.0  # after the leader exits, how long leftovers may keep the pipe open
TAIL_BYTES = 256 * 1024


class Interrupts:
    """SIGINT/SIGTERM while the loop runs: the first stops the run after killing
    the current child group (TERM, then KILL after a grace period); a second
    one kills it at once and forces the finish. Also where the current child
    group is announced: to the watchdog and to `on_group` (run.json)."""

    __slots__ = ("signum", "count", "group", "previous", "watchdog", "on_group")

    def __init__(self) -> None:
        self.signum = 0
        self.count = 0
        self.group: Group | None = None  # the child group running now
        self.previous: dict[int, object] = {}
        self.watchdog: Watchdog | None = None
        self.on_group = None  # called with each new child group's id

    def attach(self, group: Group | None) -> None:
        """The run's `on_group`: this child group runs now (None: it is over)."""
        self.group = group
        pgid = group.pgid if group is not None else 0
        if self.watchdog is not None:
            self.watchdog.watch(pgid)
        if group is not None:
            if self.on_group is not None:
                self.on_group(pgid)
            if self.forced:  # the second signal came while it was starting
                group.kill()

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
        if self.group is not None:
            if self.count == 1:
                self.group.terminate()
            else:
                self.group.kill()

    @property
    def stopping(self) -> bool:
        return self.count > 0

    @property
    def forced(self) -> bool:
        return self.count > 1


class RedactedLog(LineLog):
    """An iteration log file that never holds a secret in clear: output is
    written line by line through ralph.redaction. A private-key block
    spans lines, so from its BEGIN line to its END line nothing is written
    but the marker. A line longer than MAX_LINE is written in pieces."""

    MAX_LINE = 64 * 1024

    __slots__ = ("in_key",)

    def __init__(self, file: object) -> None:
        super().__init__(file, self.redact_line, self.MAX_LINE)
        self.in_key = False

    def redact_line(self, text: str) -> str | None:
        if self.in_key:
            if "PRIVATE KEY" in text and "-----END" in text:
                self.in_key = False
            return None
        if "PRIVATE KEY" in text and "-----BEGIN" in text and "-----END" not in text.split("-----BEGIN", 1)[1]:
            self.in_key = True
        return redact(text)


class ProcessResult:
    __slots__ = ("exit_code", "timed_out", "idle_timed_out", "interrupted", "duration", "tail", "error")

    def __init__(self) -> None:
        self.exit_code: int | None = None
        self.timed_out = False
        self.idle_timed_out = False  # printed nothing for the idle timeout: its group was ended
        self.interrupted = False
        self.duration = 0.0
        self.tail = b""
        self.error = ""  # could not start: why

    @property
    def output(self) -> str:
        return self.tail.decode("utf-8", "replace")


# ---- the watchdog: what the loop started dies with it ----

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
    import time
    for _ in range(500):  # again until the group is gone: a child forked as the first SIGKILL came escapes it
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            break
        time.sleep(0.02)
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
    return process.group_members(pgid)


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
                  sinks: list, interrupts: Interrupts, env: dict[str, str] | None = None,
                  idle_timeout: float | None = None, on_tick: object = None) -> ProcessResult:
    """Run `command` in a new process group, feed it stdin_data, pass every
    chunk of its merged stdout/stderr to each sink, and stop it at the
    timeout, after `idle_timeout` seconds without output, or on an interrupt.
    `on_tick()` is called a few times a second while it runs (a status line's
    clock). Never raises for a child that fails to start."""
    argv = argv_for(command)

    def to_sinks(chunk: bytes) -> None:
        for sink in sinks:
            sink(chunk)

    def stop() -> bool:
        if on_tick is not None:
            on_tick()  # type: ignore[operator]
        return interrupts.stopping

    ran = process.run(argv, cwd=cwd, env=env, stdin=stdin_data, timeout=timeout, idle_timeout=idle_timeout or None,
                      max_bytes=TAIL_BYTES, on_output=to_sinks, stop=stop, on_group=interrupts.attach,
                      kill_grace=KILL_GRACE_SECONDS, drain=DRAIN_SECONDS, leftover_grace=KILL_GRACE_SECONDS)
    result = ProcessResult()
    result.duration = ran.duration
    if ran.error:
        result.error = f"cannot run {argv[0]!r}: {ran.error}"
        return result
    result.exit_code = ran.exit_code
    result.timed_out = ran.timed_out
    result.idle_timed_out = ran.idle_timed_out
    result.interrupted = interrupts.stopping
    result.tail = bytes(ran.output.tail)
    return result


def git(root: str, *args: str, check: bool = False) -> tuple[int, str]:
    """(exit code, stderr+stdout) of one git command in the project root."""
    done = run_git(root, list(args))
    text = done.message()
    if check and not done.ok:
        raise GitError(f"git {' '.join(args)} failed ({done.code}): {text}")
    return done.code, text


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
