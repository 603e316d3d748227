"""The work tree as git would commit it, as one tree id: what complete_story
verified, so the loop can tell whether the tree changed after the call.

`git add -A` into a temporary copy of the index, then `git write-tree`: every
tracked and untracked file that is not ignored, the real index untouched.
The state directory, the plan and progress.md are left out (the tool and the
loop write them after the check). Git runs with no fsmonitor and no hooks:
this runs while the agent works, outside its sandbox.
"""
from __future__ import annotations

import os
import shutil
import tempfile

from ralph.run import git

SAFE_CONFIG = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")


def _git(root: str, args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    done = git.run(root, [*SAFE_CONFIG, *args], env=env)
    return done.code, done.text()


def excluded(root: str, paths: list[str]) -> list[str]:
    """`:(exclude)` pathspecs for the paths inside `root`."""
    specs = []
    real_root = os.path.realpath(root)
    for path in paths:
        if not path:
            continue
        real = os.path.realpath(path)
        if real == real_root or not real.startswith(real_root + os.sep):
            continue
        specs.append(":(exclude,literal)" + os.path.relpath(real, real_root))
    return specs


def fingerprint(root: str, leave_out: list[str]) -> str | None:
    """The tree id of the work tree without `leave_out`; None when git cannot tell."""
    code, index = _git(root, ["rev-parse", "--git-path", "index"])
    if code != 0 or not index:
        return None
    index = index if os.path.isabs(index) else os.path.join(root, index)
    handle, temp_index = tempfile.mkstemp(prefix="ralph-tree-", suffix=".index")
    os.close(handle)
    try:
        try:
            # its stat cache spares hashing unchanged files; copy2 keeps the index's
            # mtime, which git's racy-git check needs to see a same-second rewrite
            shutil.copy2(index, temp_index)
        except OSError:
            os.unlink(temp_index)  # no index yet: git starts an empty one
        env = dict(git.git_env(), GIT_INDEX_FILE=temp_index)
        code, _ = _git(root, ["add", "-A", "--", ".", *excluded(root, leave_out)], env)
        if code != 0:
            return None
        code, tree = _git(root, ["write-tree"], env)
        return tree if code == 0 and tree else None
    finally:
        try:
            os.unlink(temp_index)
        except OSError:
            pass


def tree_at_checkpoint(root: str, checkpoint: str) -> bool:
    """Is the work tree exactly the checkpoint (HEAD there, nothing changed or added outside .ralph/)?"""
    if not checkpoint:
        return False
    head = git.run(root, ["rev-parse", "-q", "--verify", "HEAD"], timeout=10)
    if not head.ok or head.text() != checkpoint:
        return False
    status = git.run(root, ["status", "--porcelain", "-z", "--untracked-files=all"], timeout=20)
    if not status.ok:
        return False
    entries = [e for e in status.out.split(b"\0") if e]
    return all(e[3:].startswith(b".ralph/") for e in entries if len(e) > 3)
