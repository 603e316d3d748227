"""The intent of a rollback or restore that has started changing the tree:
`<git dir>/ralph-rollback.journal`, written (temp file + rename) once the
work is saved in its snapshot and before the first file is touched, removed
once the tree is where it was going. A journal still there means the process
was killed (or failed) half-way; the next rollback, restore or loop start
completes it (ralph.rollback.restore.finish_interrupted), so a half-done
rollback never stays half-done.

A journal is kept only while HEAD is where the interrupted operation left it
or was taking it: if HEAD moved on since (a commit, a checkout), finishing it
would undo newer work, so it is dropped and that is said instead."""
from __future__ import annotations

import json
import os
import time

from ralph.rollback.git import Repo
from ralph.state.files import atomic_write, read_json_object

JOURNAL_NAME = "ralph-rollback.journal"


def path_of(repo: Repo) -> str:
    return os.path.join(repo.git_dir, JOURNAL_NAME)


def write(repo: Repo, record: dict) -> None:
    body = dict(record, version=1, pid=os.getpid(), at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    atomic_write(path_of(repo), json.dumps(body, ensure_ascii=False) + "\n", mode=0o600)


def read(repo: Repo) -> dict | None:
    """The journal; None when there is none (an unreadable one is moved aside: it cannot be acted on)."""
    path = path_of(repo)
    if not os.path.exists(path):
        return None
    record = read_json_object(path)
    if record is None or record.get("kind") not in ("rollback", "restore"):
        try:
            os.replace(path, path + ".unreadable")
        except OSError:
            pass
        return None
    return record


def clear(repo: Repo) -> None:
    try:
        os.unlink(path_of(repo))
    except FileNotFoundError:
        pass
