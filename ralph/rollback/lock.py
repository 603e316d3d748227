"""One rollback or restore at a time per repository: parallel hook processes
may judge failing runs at the same moment, and a rollback handed to a
detached process (ralph.rollback.detached) may still be running when the
loop judges the iteration.

The lock is `<git dir>/ralph-rollback.lock`, held with flock(2): the kernel
releases it when its holder dies however it dies (SIGKILL, the OOM killer, a
full disk mid-write), so a lock is never left behind for a person to delete,
and a pid recycled by a stranger is never mistaken for the holder. The file
names its holder (pid, start time, boot id, what it does) for the message
of whoever waits. It is removed by its holder on release; whoever takes it
checks that the file it locked is still the one at the path (a holder may
have removed it in between)."""
from __future__ import annotations

import fcntl
import json
import os
import time

from ralph.rollback.git import Repo, RollbackError
from ralph.state.rollback_lock import LOCK_NAME

WAIT_SECONDS = 300.0  # how long a rollback waits for another one before it gives up (a hung git)
POLL_SECONDS = 0.05


def _start_ticks(pid: int) -> int:
    """When a process started (clock ticks since boot, /proc); 0 if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return 0


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return ""


def owner_identity(what: str) -> dict:
    pid = os.getpid()
    return {"pid": pid, "start": _start_ticks(pid), "boot": _boot_id(), "what": what,
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def describe_holder(path: str) -> str:
    """Who holds the lock, from what it wrote into the file."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            data = json.loads(f.read(4096) or "{}")
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int):
        return "a process that has not written its name yet"
    text = f"pid {data['pid']}"
    if data.get("what"):
        text += f", {data['what']}"
    if data.get("since"):
        text += f", since {data['since']}"
    return text


class RollbackLock:
    """`with RollbackLock(repo):` waits up to `wait` seconds for another
    rollback or restore to end, then raises RollbackError naming it.

    `detach()` gives the lock to a forked child: the child's copy of the file
    descriptor keeps it (flock locks belong to the open file, shared across
    fork), and the parent closes its copy without unlocking or removing it."""

    __slots__ = ("path", "held", "fd", "what", "wait")

    def __init__(self, repo: Repo, what: str = "a rollback", wait: float = WAIT_SECONDS) -> None:
        self.path = os.path.join(repo.git_dir, LOCK_NAME)
        self.held = False
        self.fd = -1
        self.what = what
        self.wait = wait

    def acquire(self) -> RollbackLock:
        deadline = time.monotonic() + self.wait
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if time.monotonic() >= deadline:
                    raise RollbackError(
                        f"another ralph rollback or restore is running in this repository ({describe_holder(self.path)}; "
                        f"waited {self.wait:g}s). It holds {self.path}, which is released when that process ends"
                    ) from None
                time.sleep(POLL_SECONDS)
                continue
            except BaseException:
                os.close(fd)
                raise
            if not _same_file(fd, self.path):
                os.close(fd)  # its holder removed it as we opened it: take the new one
                continue
            self.fd = fd
            self.held = True
            self._name_owner()
            return self

    def _name_owner(self) -> None:
        """Best effort: a full disk leaves the holder unnamed, not the lock stuck."""
        data = json.dumps(owner_identity(self.what)).encode() + b"\n"
        try:
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, data, 0)
        except OSError:
            pass

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        try:
            os.unlink(self.path)  # while still locked: nobody can lock this file after it is gone
        except OSError:
            pass
        os.close(self.fd)
        self.fd = -1

    def detach(self) -> None:
        """In the parent after fork: the child holds the lock now."""
        if self.held:
            self.held = False
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> RollbackLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _same_file(fd: int, path: str) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


def wait_until_free(git_dir: str, seconds: float = WAIT_SECONDS) -> str:
    """Wait for a running rollback (a detached one still resetting the tree)
    to end; "" when none runs now, else who still holds it after `seconds`."""
    path = os.path.join(git_dir, LOCK_NAME)
    deadline = time.monotonic() + seconds
    while True:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return ""
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return ""  # nobody holds it (a file left by an older version)
        except BlockingIOError:
            pass
        finally:
            os.close(fd)
        if time.monotonic() >= deadline:
            return describe_holder(path)
        time.sleep(POLL_SECONDS)
