"""One rollback or restore at a time per repository: parallel hook processes
may judge failing runs at the same moment."""
from __future__ import annotations

import os
import time

from ralph.process import pid_alive
from ralph.rollback.git import Repo, RollbackError

LOCK_NAME = "ralph-rollback.lock"
STALE_LOCK_SECONDS = 600


def _holder_gone(path: str) -> bool:
    """The lock names a process of this machine that no longer runs (a
    holder killed with SIGKILL)."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            pid = int(f.read(32).strip())
    except (OSError, ValueError):
        return False
    return pid > 0 and not pid_alive(pid)


class RollbackLock:
    """One rollback or restore at a time per repository (parallel hook processes).
    An O_EXCL file in the git dir, as git's own locks; a stale one (its holder
    is gone, or it is older than STALE_LOCK_SECONDS) is taken over."""

    __slots__ = ("path", "held")

    def __init__(self, repo: Repo) -> None:
        self.path = os.path.join(repo.git_dir, LOCK_NAME)
        self.held = False

    def __enter__(self) -> RollbackLock:
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                try:
                    age = time.time() - os.stat(self.path).st_mtime
                except FileNotFoundError:
                    continue
                if age > STALE_LOCK_SECONDS or _holder_gone(self.path):
                    os.unlink(self.path)
                    continue
                raise RollbackError(f"another ralph rollback or restore is running in this repository ({self.path} exists; remove it if no ralph process is running)") from None
            os.write(fd, f"{os.getpid()}\n".encode())
            os.close(fd)
            self.held = True
            return self
        raise RollbackError(f"could not take {self.path}")

    def __exit__(self, *exc: object) -> None:
        if self.held:
            try:
                os.unlink(self.path)
            except OSError:
                pass
