"""`--allow-dirty`: the person's uncommitted changes stay theirs.

At the start of the run their changes outside `.ralph/` (modified, staged,
deleted and untracked files) are saved the way a rollback saves a tree
(ralph.rollback.capture: byte for byte, modes, the index) as a commit under
their own ref, `refs/ralph/set-aside/<run id>`, and those paths are put back
as HEAD has them: no rollback ref and no commit of the agent can carry them.
At the end of the run they are put back, file by file, where the run left
the file as it found it; a file the run changed too keeps the run's version,
and the person's stays in the ref (the message says how to bring it over).
The ref is deleted once everything is back. Said on the terminal and in
events.jsonl (`set_aside`, `set_aside_restored`).
"""
from __future__ import annotations

import os

from ralph.loop import branch
from ralph.loop.run import Finish, Run
from ralph.rollback.capture import capture
from ralph.rollback.git import Repo, RollbackError, read_blobs, split_z, tree_entries
from ralph.rollback.lock import RollbackLock
from ralph.rollback.restore import remove_empty_parents, write_file
from ralph.rollback.snapshots import read_extras, write_snapshot
from ralph.run import records
from ralph.run.clock import utc_now
from ralph.state.locations import STATE_DIR_NAME

REF_PREFIX = "refs/ralph/set-aside/"
LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}


class SetAside:
    """What was set aside: the ref, its commit, HEAD then, the paths (relative to the top)."""

    __slots__ = ("ref", "sha", "base", "paths")

    def __init__(self, ref: str, sha: str, base: str, paths: list[bytes]) -> None:
        self.ref = ref
        self.sha = sha
        self.base = base
        self.paths = paths


def _nul(paths: list[bytes]) -> bytes:
    return b"".join(p + b"\0" for p in paths)


def set_aside(run: Run) -> SetAside | None:
    """Save the person's changes outside .ralph/ under their ref and put
    those paths back as HEAD has them; None when there are none. Raises
    Finish("error") when they cannot be set aside (nothing is removed then,
    unless it is saved)."""
    files = branch.dirty_files(run.root, STATE_DIR_NAME)
    if not files:
        return None
    ref = REF_PREFIX + run.run_id
    try:
        repo = Repo(run.root)
        with RollbackLock(repo, "setting the person's uncommitted changes aside"):
            cap = capture(repo)
            if cap.head is None:
                raise RollbackError("the repository has no commit to set the changes aside from")
            _, ref, sha = write_snapshot(repo, cap, f"ralph set-aside: uncommitted changes before run {run.run_id}",
                                         {"Kind": "set-aside", "Run": run.run_id, "Trigger": "ralph-loop --allow-dirty"}, ref=ref)
            paths = [os.fsencode(f) for f in files]
            _back_to_head(repo, paths)
    except RollbackError as e:
        raise Finish("error", f"--allow-dirty: could not set your uncommitted changes aside ({e}); nothing of them was removed "
                              "that is not saved. Commit or stash them (git stash -u) and start again") from None
    left = branch.dirty_files(run.root, STATE_DIR_NAME)
    if left:
        raise Finish("error", f"--allow-dirty: your changes are saved in {ref}, but {len(left)} file(s) could not be set aside "
                              f"({', '.join(left[:5])}); put them back with `git diff {ref}^ {ref} -- . ':!{STATE_DIR_NAME}' | git apply --index`")
    aside = SetAside(ref, sha, cap.head, paths)
    shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
    run.display.message(f"--allow-dirty: your {len(files)} uncommitted change(s) ({shown}) are set aside in {ref} "
                        "for the run and put back at its end; the agent's commits and rollbacks do not carry them")
    records.append_event(run.state_dir, {"event": "set_aside", "run_id": run.run_id, "at": utc_now(), "ref": ref,
                                         "commit": sha, "files": files[:200], "count": len(files)})
    return aside


def _back_to_head(repo: Repo, paths: list[bytes]) -> None:
    """Index and work tree of these paths as HEAD has them (untracked ones removed)."""
    in_head = set(split_z(repo.run(["ls-tree", "-r", "-z", "--name-only", "--full-tree", "HEAD"])))
    repo.run(["reset", "-q", "HEAD", "--pathspec-from-file=-", "--pathspec-file-nul"], input=_nul(paths), env=LITERAL)
    tracked = [p for p in paths if p in in_head]
    if tracked:
        repo.run(["checkout", "-q", "HEAD", "--pathspec-from-file=-", "--pathspec-file-nul"], input=_nul(tracked), env=LITERAL)
    for path in paths:
        if path in in_head:
            continue
        full = repo.abspath(path)
        try:
            if os.path.isdir(full) and not os.path.islink(full):
                continue  # a nested repository: status names it, it is not ours to remove
            os.unlink(full)
        except FileNotFoundError:
            pass
        remove_empty_parents(repo, path)


def put_back(run: Run, aside: SetAside) -> str:
    """At the end of the run: the person's changes back where the run left
    the file as it found it; what was done, one sentence (also on screen and
    in events.jsonl). Never raises."""
    try:
        restored, kept = _put_back(Repo(run.root), aside, run.root)
    except (RollbackError, OSError) as e:
        restored, kept = [], [os.fsdecode(p) for p in aside.paths]
        error = f" ({e})"
    else:
        error = ""
    if not kept:
        sentence = f"put back your {len(restored)} uncommitted change(s) set aside at the start ({aside.ref}, now deleted)"
    else:
        sentence = (f"put back {len(restored)} of your {len(aside.paths)} uncommitted change(s) set aside at the start; "
                    f"{len(kept)} file(s) the run changed too keep the run's version{error}: {', '.join(kept[:5])}"
                    f"{' ...' if len(kept) > 5 else ''}. Yours are in {aside.ref}; bring them over with "
                    f"`git diff {aside.ref}^ {aside.ref} -- <file> | git apply -3`")
    run.display.message(f"--allow-dirty: {sentence}")
    try:
        records.append_event(run.state_dir, {"event": "set_aside_restored", "run_id": run.run_id, "at": utc_now(),
                                             "ref": aside.ref, "restored": restored[:200], "kept": kept[:200],
                                             "ref_kept": bool(kept), "message": sentence})
    except OSError:
        pass
    return sentence


def _put_back(repo: Repo, aside: SetAside, root: str) -> tuple[list[str], list[str]]:
    with RollbackLock(repo, "putting the person's uncommitted changes back"):
        theirs = tree_entries(repo, repo.tree_of(aside.sha))
        index_commit = repo.text(["rev-parse", aside.sha + "^2"])
        their_index = tree_entries(repo, repo.tree_of(index_commit))
        base = tree_entries(repo, repo.tree_of(aside.base))
        now = tree_entries(repo, repo.tree_of(repo.head()))
        touched_now = {os.fsencode(p) for p in branch.dirty_files(root, STATE_DIR_NAME)}
        free = [p for p in aside.paths if now.get(p) == base.get(p) and p not in touched_now]
        kept = [os.fsdecode(p) for p in aside.paths if p not in free]
        extras = read_extras(repo, repo.text(["rev-parse", aside.sha + "^3"])) if _has_parent(repo, aside.sha, 3) else None
        blobs = read_blobs(repo, [theirs[p][1] for p in free if p in theirs and theirs[p][0] != "160000"])
        restored: list[str] = []
        index_lines = []
        for path in free:
            full = repo.abspath(path)
            try:
                if path in theirs:
                    mode, oid = theirs[path]
                    if mode == "160000":
                        kept.append(os.fsdecode(path))
                        continue
                    os.makedirs(os.path.dirname(full), exist_ok=True)
                    write_file(full, blobs[oid], mode, extras.modes.get(path, -1) if extras else -1)
                else:
                    os.unlink(full)
                    remove_empty_parents(repo, path)
            except OSError:
                kept.append(os.fsdecode(path))
                continue
            entry = their_index.get(path)
            index_lines.append(b"%s %s\t%s\0" % (entry[0].encode(), entry[1].encode(), path) if entry
                               else b"0 0000000000000000000000000000000000000000\t%s\0" % path)
            restored.append(os.fsdecode(path))
        if index_lines:
            repo.run(["update-index", "-z", "--index-info"], input=b"".join(index_lines))
            repo.run(["update-index", "-q", "--refresh"], ok=(0, 1))
        if not kept:
            repo.run(["update-ref", "-d", aside.ref, aside.sha])
    return restored, kept


def _has_parent(repo: Repo, sha: str, number: int) -> bool:
    return repo.run(["rev-parse", "-q", "--verify", f"{sha}^{number}"], ok=(0, 1, 128)).strip() != b""
