"""Is a rollback or restore running in this repository right now?

PreToolUse asks before every edit and every Bash command that is not plainly
read-only (ralph.claude.handlers.pre_edit, pre_bash; skills' shell lines
through pre_bash): a rollback handed to a detached process
(ralph.rollback.detached) may still be saving and resetting the tree, and an
edit made meanwhile lands in neither the tree nor the rollback's ref.

On the hot path, so: os and time only (the dispatcher has both), one stat of
the lock path, and only when the file is there (a holder removes it on
release, but a file may outlive its holder: one that died between taking
and removing it, or an older version's) a non-blocking flock probe, which
decides. The holder's name (ralph.rollback.lock writes it) is read only for
a denial."""
import os
import time

from ralph import fastjson

LOCK_NAME = "ralph-rollback.lock"  # in the git directory; ralph.rollback.lock takes it (state keeps where, as for every file)


def holder(git_dir: str) -> tuple[dict, float] | None:
    """(what the holder wrote about itself, seconds since it took the lock)
    while a rollback or restore holds the lock of this git directory; None
    when none does."""
    path = os.path.join(git_dir, LOCK_NAME)
    try:
        taken = os.stat(path).st_mtime  # the holder names itself into the file as it takes it
    except OSError:
        return None
    import fcntl  # rare path: only while a lock file exists

    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None  # removed between the stat and the open: released
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return None  # nobody holds it
        except BlockingIOError:
            pass
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b""
    finally:
        os.close(fd)
    return _named(data), max(0.0, time.time() - taken)


def _named(data: bytes) -> dict:
    """The holder's identity; {} when it has not written it yet (or a full disk kept it from it)."""
    try:
        value = fastjson.loads(data) if data.strip() else {}
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def busy_reason(git_dir: str | None, action: str) -> str:
    """Why `action` ("this edit", "this command") may not run now: a
    rollback or restore holds this repository; "" when none does."""
    if git_dir is None:
        return ""
    found = holder(git_dir)
    if found is None:
        return ""
    named, seconds = found
    what = named.get("what") if isinstance(named.get("what"), str) and named.get("what") else ""
    kind = "restore" if "restore" in what else "rollback"
    running = f"{what}; " if what else ""
    pid = f", pid {named['pid']}" if isinstance(named.get("pid"), int) else ""
    return (f"ralph-hooks did not run {action}: a ralph {kind} is under way in this repository ({running}for {seconds:.0f}s{pid}), "
            f"saving and resetting the work tree. Anything changed in the project now could land in neither the tree nor "
            f"what the {kind} saves, so edits and commands that may write wait until it ends; reading is allowed. "
            f"Retry in a few seconds: it is over when {os.path.join(git_dir, LOCK_NAME)} is gone.")
