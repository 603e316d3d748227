"""Git's own lock files left behind by a git process that was killed
(`index.lock`, `HEAD.lock`, a ref's `.lock`, ...): while one is there, every
commit fails and no reset can run. A lock is removed only when its owner is
provably gone:

- no git process of this repository is alive: /proc is read for processes
  whose program is git (`git`, `git-*`) and whose working directory, GIT_DIR
  or `--git-dir`/`-C` is this repository; one whose directory cannot be read
  (another user's) counts as this repository's;
- the lock has not changed for LOCK_QUIET_SECONDS: a tool that is not git
  (libgit2 in an editor) holds a lock for milliseconds, and a lock younger
  than that is looked at again once it is old enough.

Linux only (/proc); elsewhere nothing is removed."""
from __future__ import annotations

import os
import time

LOCK_QUIET_SECONDS = 2.0
TOP_LEVEL_LOCKS = ("index.lock", "HEAD.lock", "ORIG_HEAD.lock", "FETCH_HEAD.lock", "MERGE_HEAD.lock",
                   "CHERRY_PICK_HEAD.lock", "REVERT_HEAD.lock", "AUTO_MERGE.lock", "packed-refs.lock",
                   "config.lock", "shallow.lock")


class GitLock:
    __slots__ = ("path", "rel", "age")

    def __init__(self, path: str, rel: str, age: float) -> None:
        self.path = path
        self.rel = rel
        self.age = age


def lock_files(git_dir: str, common_dir: str, show_from: str) -> list[GitLock]:
    """The lock files git leaves in this repository's git dirs (the
    worktree's own and the common one: refs live there)."""
    found: dict[str, GitLock] = {}
    now = time.time()

    def add(path: str) -> None:
        real = os.path.realpath(path)
        if real in found:
            return
        try:
            st = os.lstat(path)
        except OSError:
            return
        found[real] = GitLock(path, os.path.relpath(path, show_from), max(0.0, now - st.st_mtime))

    for directory in dict.fromkeys((git_dir, common_dir)):
        for name in TOP_LEVEL_LOCKS:
            add(os.path.join(directory, name))
    refs = os.path.join(common_dir, "refs")
    for dirpath, _dirs, files in os.walk(refs):
        for name in files:
            if name.endswith(".lock"):
                add(os.path.join(dirpath, name))
    return list(found.values())


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _inside(path: str, directories: tuple[str, ...]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in directories)


def _named_dirs(argv: list[bytes], cwd: str) -> list[str]:
    """The directories a git command line points at: -C DIR, --git-dir[=]DIR, --work-tree[=]DIR."""
    named = []
    for number, word in enumerate(argv[1:], 1):
        text = os.fsdecode(word)
        for flag in ("--git-dir", "--work-tree"):
            if text.startswith(flag + "="):
                named.append(text.split("=", 1)[1])
            elif text == flag and number + 1 < len(argv):
                named.append(os.fsdecode(argv[number + 1]))
        if text == "-C" and number + 1 < len(argv):
            named.append(os.fsdecode(argv[number + 1]))
    return [os.path.realpath(os.path.join(cwd, d)) for d in named if d]


def git_processes(repo_dirs: tuple[str, ...]) -> list[tuple[int, str]]:
    """(pid, command line) of the live git processes that work in one of
    `repo_dirs` (real paths: the work tree, the git dirs), or whose
    directory cannot be read."""
    found = []
    me = os.getpid()
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        base = f"/proc/{name}"
        raw = _read(f"{base}/cmdline")
        if not raw:
            continue  # a kernel thread, or gone
        argv = raw.rstrip(b"\0").split(b"\0")
        program = os.path.basename(argv[0])
        comm = (_read(f"{base}/comm") or b"").strip()
        if not (program == b"git" or program.startswith(b"git-") or comm == b"git" or comm.startswith(b"git-")):
            continue
        stat = _read(f"{base}/stat") or b""
        if b")" in stat and stat.rsplit(b")", 1)[1].split()[:1] == [b"Z"]:
            continue  # a zombie holds nothing
        shown = os.fsdecode(b" ".join(argv))[:200]
        try:
            cwd = os.path.realpath(os.readlink(f"{base}/cwd"))
        except OSError:
            if os.path.exists(base):
                found.append((int(name), shown))  # cannot tell: it may be ours
            continue
        places = [cwd] + _named_dirs(argv, cwd)
        environ = _read(f"{base}/environ") or b""
        for item in environ.split(b"\0"):
            key, _, value = item.partition(b"=")
            if key in (b"GIT_DIR", b"GIT_WORK_TREE", b"GIT_COMMON_DIR") and value:
                places.append(os.path.realpath(os.path.join(cwd, os.fsdecode(value))))
        if any(_inside(place, repo_dirs) for place in places):
            found.append((int(name), shown))
    return found


def clear_stale_locks(top: str, git_dir: str, common_dir: str, quiet: float = LOCK_QUIET_SECONDS) -> tuple[list[str], list[str]]:
    """Remove the git lock files of this repository whose owner is gone.
    Returns (sentences for what was removed, sentences for locks left
    because a git process of this repository is alive)."""
    if not os.path.isdir("/proc/self"):
        return [], []
    locks = lock_files(git_dir, common_dir, top)
    if not locks:
        return [], []
    young = [lock.age for lock in locks if lock.age < quiet]
    if young:
        time.sleep(quiet - min(young))  # a lock this fresh may have an owner that is not git: look again when it is old enough
        locks = lock_files(git_dir, common_dir, top)
    dirs = tuple(dict.fromkeys(os.path.realpath(d) for d in (top, git_dir, common_dir)))
    alive = git_processes(dirs)
    removed: list[str] = []
    kept: list[str] = []
    if alive:
        holders = "; ".join(f"pid {pid}: {cmd}" for pid, cmd in alive[:3])
        kept.append(f"left {', '.join(lock.rel for lock in locks)}: a git process of this repository is running ({holders}) and may hold it")
        return removed, kept
    for lock in locks:
        if lock.age < quiet:
            kept.append(f"left {lock.rel}: it changed {lock.age:.1f}s ago, so something is still writing it")
            continue
        try:
            os.unlink(lock.path)
        except FileNotFoundError:
            continue  # its owner finished after all
        except OSError as e:
            kept.append(f"could not remove {lock.rel}: {e.strerror}")
            continue
        removed.append(f"removed {lock.rel}, left by a git process that is no longer running "
                       f"(no git process of this repository is alive; the lock was {lock.age:.0f}s old)")
    return removed, kept
