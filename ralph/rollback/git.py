"""The repository a rollback works in, and the git that runs there.

Every git call of a rollback or restore goes through Repo, on the one git
runner (ralph.run.git: the project's git, C messages, no prompt, no optional
locks), with no time limit (a rollback takes as long as the repository needs)
and no reach into submodules or a file-system monitor's idea of the tree. Objects are read back in batches (`cat-file --batch`).
"""
from __future__ import annotations

import os

from ralph.run import git
from ralph.run.git import NOT_STARTED, git_env

GIT_CONFIG = (
    "-c", "submodule.recurse=false",  # a reset must never reach into a submodule's work
    "-c", "core.quotePath=false",
    "-c", "commit.gpgSign=false",
    "-c", "advice.detachedHead=false",
    # what changed is read from the disk by git itself, never from a daemon's
    # idea of it, with every stat field git knows how to compare
    "-c", "core.fsmonitor=false",
    "-c", "core.checkStat=default",
    "-c", "core.trustctime=true",
)
MODE_FILE = "100644"
MODE_EXEC = "100755"
MODE_LINK = "120000"
MODE_GITLINK = "160000"


class RollbackError(Exception):
    """A rollback or restore could not be done; the message says what to do."""


class GitError(RollbackError):
    pass


class Repo:
    """A work tree and the git that runs in it."""

    __slots__ = ("top", "env", "git_dir", "common_dir", "_empty_tree")

    def __init__(self, root: str) -> None:
        self.env = git_env()
        if not os.path.isdir(root):
            raise RollbackError(f"{root} is not a directory")
        out = git.run(root, ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"], env=self.env, timeout=None)
        if out.code == NOT_STARTED:
            raise RollbackError("git is not installed or not on PATH; rollbacks need git")
        if not out.ok:
            raise RollbackError(f"{root} is not inside a git work tree ({first_line(out.err)}); rollbacks need a git repository with a work tree")
        lines = out.out.decode("utf-8", "surrogateescape").splitlines()
        if len(lines) < 3 or not lines[0]:
            raise RollbackError(f"{root} is in a bare repository; rollbacks need a work tree")
        self.top = lines[0]
        self.git_dir = lines[1]
        self.common_dir = os.path.normpath(os.path.join(root, lines[2]))  # refs live here (the main git dir of a linked worktree)
        self._empty_tree = ""

    def run(self, args: list[str], *, input: bytes | None = None, env: dict | None = None, ok: tuple[int, ...] = (0,)) -> bytes:
        full_env = self.env if env is None else {**self.env, **env}
        done = git.run(self.top, [*GIT_CONFIG, *args], input=input, env=full_env, timeout=None)
        if done.code not in ok:
            raise GitError(f"`git {' '.join(args[:3])}` failed (exit {done.code}): {first_line(done.err) or first_line(done.out)}")
        return done.out

    def text(self, args: list[str], **kw: object) -> str:
        return self.run(args, **kw).decode("utf-8", "surrogateescape").strip()

    def head(self) -> str | None:
        out = self.run(["rev-parse", "-q", "--verify", "HEAD^{commit}"], ok=(0, 1)).strip()
        return out.decode() if out else None

    def commit_exists(self, rev: str) -> str | None:
        out = self.run(["rev-parse", "-q", "--verify", rev + "^{commit}"], ok=(0, 1, 128)).strip()
        return out.decode() if out else None

    def empty_tree(self) -> str:
        if not self._empty_tree:
            self._empty_tree = self.text(["hash-object", "-t", "tree", "-w", "--stdin"], input=b"")
        return self._empty_tree

    def tree_of(self, commit: str | None) -> str:
        return self.text(["rev-parse", commit + "^{tree}"]) if commit else self.empty_tree()

    def git_path(self, name: str) -> str:
        path = self.text(["rev-parse", "--git-path", name])
        return path if os.path.isabs(path) else os.path.join(self.top, path)

    def abspath(self, path: bytes) -> bytes:
        return os.path.join(os.fsencode(self.top), path)

    def is_ancestor(self, older: str, newer: str) -> bool:
        return git.run(self.top, ["merge-base", "--is-ancestor", older, newer], env=self.env, timeout=None).ok

    def submodule_head(self, path: bytes, fallback: str) -> str:
        """The commit a checked-out submodule at `path` is on; `fallback` when it is not checked out."""
        full = self.abspath(path)
        if not os.path.exists(os.path.join(full, b".git")):
            return fallback
        done = git.run(os.fsdecode(full), ["rev-parse", "-q", "--verify", "HEAD"], env=self.env, timeout=None)
        out = done.text()
        return out if done.ok and out else fallback


def first_line(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text.splitlines()[0][:300] if text else ""


def split_z(data: bytes) -> list[bytes]:
    """NUL-separated records (`-z` output), empty ones dropped."""
    return [part for part in data.split(b"\0") if part]


def tree_entries(repo: Repo, tree: str) -> dict[bytes, tuple[str, str]]:
    """path -> (mode, oid) of every file in a tree, recursively."""
    found = {}
    for record in split_z(repo.run(["ls-tree", "-r", "-z", "--full-tree", tree])):
        meta, _, path = record.partition(b"\t")
        mode, _kind, oid = meta.decode().split(" ")
        found[path] = (mode, oid)
    return found


def read_blobs(repo: Repo, oids: list[str]) -> dict[str, bytes]:
    """oid -> content, in one `cat-file --batch`; a missing object is a RollbackError."""
    if not oids:
        return {}
    wanted = list(dict.fromkeys(oids))
    out = repo.run(["cat-file", "--batch"], input="".join(o + "\n" for o in wanted).encode())
    blobs = {}
    pos = 0
    for oid in wanted:
        end = out.index(b"\n", pos)
        header = out[pos:end].split(b" ")
        if len(header) < 3:
            raise RollbackError(f"object {oid} is missing from the repository; the snapshot cannot be restored")
        size = int(header[2])
        blobs[oid] = out[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1
    return blobs
