"""Putting a tree back. A rollback (save_and_restore) saves everything to a
snapshot, then resets the work tree, index and HEAD to the iteration's
checkpoint; a restore (restore_snapshot) brings a snapshot's files, index and
extras back exactly, saving the work in progress first.

Files are written back by this module from the blobs (temp file + rename), so
no smudge filter, eol or autocrlf setting can alter them on the way out.
Never touched: ignored files that the reset leaves alone, the state dir
`.ralph/`, untracked nested repositories and the contents of submodules; a
rollback is refused when a submodule has work of its own (see ralph.rollback).
"""
from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable

from ralph.rollback import journal
from ralph.rollback.capture import Capture, Entry, capture
from ralph.rollback.git import MODE_EXEC, MODE_GITLINK, MODE_LINK, Repo, RollbackError, read_blobs, split_z
from ralph.rollback.git_locks import clear_stale_locks
from ralph.rollback.kept import KeptFiles, put_back, read_before
from ralph.rollback.lock import WAIT_SECONDS, RollbackLock
from ralph.rollback.snapshots import Extras, Snapshot, files_changed, find_snapshot, read_extras, write_snapshot
from ralph.state.files import replace_or_discard, write_all
from ralph.story import PlanError


class RollbackResult:
    __slots__ = ("id", "ref", "sha", "message", "restored", "checkpoint", "files_changed", "saved", "pending", "kept", "conflicts")

    def __init__(self, id: str = "", ref: str = "", sha: str = "", message: str = "", restored: bool = False,
                 checkpoint: str = "", files_changed: int = 0, saved: bool = False, pending: bool = False,
                 kept: list[str] | None = None, conflicts: list[str] | None = None) -> None:
        self.id = id
        self.ref = ref
        self.sha = sha
        self.message = message
        self.restored = restored
        self.checkpoint = checkpoint
        self.files_changed = files_changed
        self.saved = saved
        self.pending = pending  # handed to a detached process that was still at work when the caller stopped waiting
        self.kept = kept or []  # the plan and progress files put back as they were before the reset (ralph.rollback.kept)
        self.conflicts = conflicts or []  # where keeping them met a real conflict: both kept, said here

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}


class RestoreResult:
    __slots__ = ("id", "message", "pre_restore", "moved_head")

    def __init__(self, id: str, message: str, pre_restore: Snapshot | None, moved_head: str) -> None:
        self.id = id
        self.message = message
        self.pre_restore = pre_restore
        self.moved_head = moved_head


def save_and_restore(root: str, checkpoint: str, *, story: str, iteration: int, trigger: str, run_id: str = "",
                     lock: RollbackLock | None = None, kept: KeptFiles | None = None) -> RollbackResult:
    """Save everything to refs/ralph/rollbacks/<id>, then reset the tree to `checkpoint`.
    `kept`: the plan and progress files, which keep the loop's and the
    person's records through the reset (ralph.rollback.kept).

    Never raises: the result says what happened. Nothing is reset unless the
    snapshot is written and verified readable. `lock`: already held by the
    caller, who releases it (ralph.rollback.detached: once the rollback is
    recorded too), else taken and released here.
    """
    result = RollbackResult(checkpoint=checkpoint)
    try:
        repo = Repo(root)
        held = lock or RollbackLock(repo, f"a rollback of {story} (iteration {iteration})").acquire()
        try:
            earlier = finish_interrupted_locked(repo)
            _save_and_reset(repo, result, story, iteration, trigger, run_id, kept)
            if earlier:
                result.message = f"{earlier}; then {result.message}"
        finally:
            if lock is None:
                held.release()
    except Exception as e:  # noqa: BLE001 - the caller is a hook: report, never raise
        if not result.message:
            result.message = f"nothing was saved or reset: {e}"
    return result


def _save_and_reset(repo: Repo, result: RollbackResult, story: str, iteration: int, trigger: str, run_id: str,
                    kept: KeptFiles | None = None) -> None:
    target = repo.commit_exists(result.checkpoint)
    if target is None:
        result.message = f"checkpoint {result.checkpoint[:12]} is not a commit in this repository; nothing was saved or reset"
        return
    result.checkpoint = target
    try:
        cap = capture(repo, rewrite_base=target)
        if not cap.dirty and cap.head == target:
            journal.clear(repo)
            result.message = (
                f"nothing to roll back: the work tree, index and HEAD already match checkpoint {target[:12]} "
                "(the failing tests fail at the checkpoint itself)"
            )
            return
        if any(e.mode == MODE_GITLINK for e in cap.entries.values()):
            dirty = _dirty_submodules(repo)
            if dirty:
                result.message = (
                    f"not rolled back: submodule {'; '.join(dirty)}. A rollback resets only this repository and would leave "
                    "the submodule's work behind, half rolled back. Nothing was saved or reset; commit or revert the submodule's changes yourself."
                )
                return
        fields = {"Story": story, "Iteration": str(iteration), "Trigger": trigger, "Run": run_id}
        subject = f"ralph rollback: {story} iteration {iteration}: {trigger}"
        result.id, result.ref, result.sha = write_snapshot(repo, cap, subject, dict(fields, Kind="rollback"))
        result.saved = True
        result.files_changed = files_changed(repo, cap.head_tree, cap.tree)
        journal.write(repo, {"kind": "rollback", "snapshot": result.id, "ref": result.ref, "target": target,
                             "head": cap.head or "", "story": story, "iteration": iteration, "run_id": run_id})
    except Exception as e:  # noqa: BLE001
        result.message = f"nothing was reset: could not save the work first ({e})"
        return

    cleared: list[str] = []
    try:
        before = read_before(repo, kept) if kept else {}
    except OSError as e:  # unreadable: reset with the rest, as they are in the ref
        before = {}
        result.conflicts.append(f"could not read the plan and progress notes to keep them ({e}); they are reset too, "
                                f"as they were they are in {result.ref}")
    try:
        cleared, left = clear_stale_locks(repo.top, repo.git_dir, repo.common_dir)
        try:
            repo.run(["reset", "-q", "--hard", target])
        except RollbackError as e:
            raise RollbackError(f"{e}{' (' + '; '.join(left) + ')' if left else ''}") from None
        tracked = set(split_z(repo.run(["ls-files", "-z"])))
        skipped = []
        for entry in cap.entries.values():
            if not entry.untracked or entry.path in tracked:
                continue
            full = repo.abspath(entry.path)
            try:
                st = os.lstat(full)
            except (FileNotFoundError, NotADirectoryError):
                continue  # the reset already replaced it (a tracked path is there now)
            if st.st_size != entry.size or st.st_mtime_ns != entry.mtime:
                skipped.append(os.fsdecode(entry.path))  # changed after it was saved: keep it
                continue
            os.unlink(full)
            remove_empty_parents(repo, entry.path)
        restore_modes(repo, cap.modes, keep_exec_bits=True)
        now = repo.head()
        if now != target:
            raise RollbackError(f"HEAD is {now} after the reset, expected {target}")
    except Exception as e:  # noqa: BLE001
        result.message = (f"the work is saved at {result.ref}, but resetting to {target[:12]} failed: {e}. The next rollback, restore "
                          f"or ralph-loop start finishes it; or restore the work with `ralph rollbacks restore {result.id}`.")
        return
    if before:
        try:
            result.kept, conflicts = put_back(repo, before, story, result.ref, target)
            result.conflicts.extend(conflicts)
        except (OSError, PlanError, RollbackError, ValueError) as e:
            result.conflicts.append(f"could not put the plan and progress notes back ({e}); they are in {result.ref}")
    journal.clear(repo)
    result.restored = True
    result.message = f"saved to {result.ref}; tree reset to checkpoint {target[:12]}"
    if result.kept:
        result.message += f", keeping the loop's and the person's records in {' and '.join(result.kept)} (only the story's done mark undone)"
    if result.conflicts:
        result.message += "; " + "; ".join(result.conflicts)
    if cleared:
        result.message += "; " + "; ".join(cleared)
    if skipped:
        result.message += f"; left {len(skipped)} file(s) that changed while saving: {', '.join(skipped[:5])}"


def finish_interrupted(root: str, wait: float = WAIT_SECONDS) -> str:
    """For the loop's crash recovery: complete a rollback or restore that was
    killed half-way (see ralph.rollback.journal); what was done, "" when
    there was nothing to do."""
    repo = Repo(root)
    if not os.path.exists(journal.path_of(repo)):
        return ""
    with RollbackLock(repo, "finishing an interrupted rollback", wait=wait):
        return finish_interrupted_locked(repo)


def finish_interrupted_locked(repo: Repo) -> str:
    record = journal.read(repo)
    if record is None:
        return ""
    head = repo.head() or ""
    ref = str(record.get("ref") or record.get("snapshot") or "")
    if record["kind"] == "rollback":
        target = str(record.get("target") or "")
        if head not in (record.get("head"), target) or not target:
            journal.clear(repo)
            return (f"a rollback interrupted at {record.get('at')} was not finished: HEAD has moved on since "
                    f"(to {head[:12] or 'nothing'}); its work is saved in {ref}")
        done = RollbackResult(checkpoint=target)
        _save_and_reset(repo, done, str(record.get("story") or "?"), int(record.get("iteration") or 0),
                        f"finishing a rollback interrupted at {record.get('at')} (its work is in {ref})", str(record.get("run_id") or ""))
        if done.restored or not done.saved and "nothing to roll back" in done.message:
            journal.clear(repo)
            return (f"finished a rollback interrupted at {record.get('at')} (its work is saved in {ref}): "
                    + (done.message if done.restored else f"the tree was already at checkpoint {target[:12]}"))
        return f"could not finish a rollback interrupted at {record.get('at')}: {done.message}"
    move_to = str(record.get("move_to") or "")
    if head not in (record.get("head"), move_to or record.get("head")):
        journal.clear(repo)
        return (f"a restore of {record.get('snapshot')} interrupted at {record.get('at')} was not finished: HEAD has moved on since; "
                f"run `ralph rollbacks restore {record.get('snapshot')}` again if you still want it")
    try:
        _restore(repo, str(record.get("snapshot")), True)
    except RollbackError as e:
        return f"could not finish a restore of {record.get('snapshot')} interrupted at {record.get('at')}: {e}"
    return f"finished a restore of {record.get('snapshot')} interrupted at {record.get('at')}"


def _dirty_submodules(repo: Repo) -> list[str]:
    """Submodules with a moved HEAD, modified content or untracked files."""
    out = repo.run(["status", "--porcelain=v2", "-z", "--no-renames", "--ignore-submodules=none", "--untracked-files=no"])
    dirty = []
    for record in split_z(out):
        if not record.startswith(b"1 "):
            continue
        parts = record.split(b" ", 8)
        if len(parts) == 9 and parts[2].startswith(b"S") and parts[2] != b"S...":
            flags = parts[2].decode()
            what = [word for flag, word in zip(flags[1:], ("new commits", "modified content", "untracked files")) if flag != "."]
            dirty.append(f"{os.fsdecode(parts[8])} ({', '.join(what)})")
    return dirty


def remove_empty_parents(repo: Repo, path: bytes) -> None:
    top = os.fsencode(repo.top)
    parent = os.path.dirname(repo.abspath(path))
    while parent != top and parent.startswith(top + b"/"):
        try:
            os.rmdir(parent)
        except OSError:
            return
        parent = os.path.dirname(parent)


def restore_modes(repo: Repo, modes: dict[bytes, int], keep_exec_bits: bool) -> None:
    """Regular files get their recorded permission bits back (a 0600 file
    stays 0600). keep_exec_bits: after a reset, the exec bits stay as git
    set them from the tree."""
    for path, perms in modes.items():
        full = repo.abspath(path)
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        wanted = (perms & ~0o111) | (stat.S_IMODE(st.st_mode) & 0o111) if keep_exec_bits else perms
        if stat.S_IMODE(st.st_mode) != wanted:
            os.chmod(full, wanted)


def restore_snapshot(root: str, id: str, *, force: bool = False) -> RestoreResult:
    """Put a snapshot's working tree and index back exactly. Dirty work is saved first.

    HEAD: restored too when the current HEAD is an ancestor of the snapshot's
    (the usual case after a rollback); if HEAD went elsewhere, only --force
    restores the files on top of the current HEAD. Raises RollbackError.
    """
    repo = Repo(root)
    with RollbackLock(repo, f"a restore of {id}"):
        earlier = finish_interrupted_locked(repo)
        result = _restore(repo, id, force)
    if earlier:
        result.message = f"{earlier}; then {result.message}"
    return result


def _restore(repo: Repo, id: str, force: bool) -> RestoreResult:
    snap = find_snapshot(repo, id)
    index_tree = repo.tree_of(snap.index_commit) if snap.index_commit else snap.tree
    head = repo.head()
    base = snap.head
    move_to = ""
    if base != head:
        if base and repo.commit_exists(base) and (head is None or repo.is_ancestor(head, base)):
            move_to = base
        elif not force:
            where = f"at {base[:12]}" if base else "in a repository with no commits yet"
            raise RollbackError(
                f"snapshot {snap.id} was taken {where}, but HEAD is now {head[:12] if head else 'unborn'} and has moved elsewhere. "
                f"Use `ralph rollbacks restore {snap.id} --force` to put its files and index back on top of the current HEAD "
                "(your current work is saved first), or check out its base commit first."
            )
    extras = read_extras(repo, snap.extras_commit)
    cap = capture(repo, list(extras.ignored), rewrite_base=snap.tree)
    if not move_to and cap.tree == snap.tree and cap.index_tree == index_tree and _extras_in_place(repo, cap, extras):
        journal.clear(repo)
        return RestoreResult(snap.id, f"{snap.id} is already in place; nothing to do", None, "")
    changes = tree_changes(repo, cap.tree, snap.tree)
    problems = _conflicts(repo, cap.entries, changes, force)
    if problems:
        raise RollbackError(f"cannot restore {snap.id}; nothing was changed: " + "; ".join(problems[:10]))
    pre = None
    if cap.dirty or cap.extras:
        fields = {"Trigger": f"before restoring {snap.id}"}
        pre_id, pre_ref, pre_sha = write_snapshot(repo, cap, f"ralph pre-restore: work in progress before restoring {snap.id}", dict(fields, Kind="pre-restore"))
        pre = find_snapshot(repo, pre_id)
    journal.write(repo, {"kind": "restore", "snapshot": snap.id, "ref": snap.ref, "head": head or "", "move_to": move_to,
                         "pre_restore": pre.id if pre else ""})
    notes: list[str] = []
    cleared, kept = clear_stale_locks(repo.top, repo.git_dir, repo.common_dir)
    notes.extend(cleared + kept)
    if move_to:
        repo.run(["update-ref", "-m", f"ralph rollbacks restore {snap.id}", "HEAD", move_to, head or ""])
    leftovers = _apply_tree(repo, cap.entries, changes)
    _set_index(repo, index_tree)
    _remove_unignored(repo, leftovers)
    _apply_extras(repo, extras, notes)
    repo.run(["update-index", "-q", "--refresh"], ok=(0, 1))
    after = capture(repo)
    if after.tree != snap.tree or after.index_tree != index_tree:
        saved = f" Your previous work is in {pre.ref}." if pre else ""
        raise RollbackError(f"restored {snap.id} but the result differs from the snapshot (tree {after.tree[:12]} vs {snap.tree[:12]}).{saved}")
    journal.clear(repo)
    parts = [f"restored {snap.id} ({snap.fields.get('Files-Changed', '?')} file(s) changed against its base)"]
    if move_to:
        parts.append(f"HEAD moved to {move_to[:12]}")
    if pre:
        parts.append(f"your uncommitted work was saved first as {pre.id} (`ralph rollbacks restore {pre.id}` brings it back)")
    if base != head and not move_to:
        parts.append(f"HEAD stays at {head[:12] if head else 'unborn'}; `git diff` shows the restored changes against it")
    parts.extend(notes)
    return RestoreResult(snap.id, "; ".join(parts), pre, move_to)


def _extras_in_place(repo: Repo, cap: Capture, extras: Extras) -> bool:
    for path, (mode, oid) in extras.ignored.items():
        have = cap.extras.get(path) or cap.entries.get(path)
        if have is None or (have.mode, have.oid) != (mode, oid):
            return False
    return set(cap.ita) == set(extras.ita) and all(_perms(repo, cap, p) == m for p, m in extras.modes.items())


def _perms(repo: Repo, cap: Capture, path: bytes) -> int:
    """A file's permission bits: as captured when capture looked at it, else from the disk."""
    entry = cap.entries.get(path) or cap.extras.get(path)
    if entry is not None and entry.perms >= 0:
        return entry.perms
    try:
        st = os.lstat(repo.abspath(path))
    except OSError:
        return -1
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else -1


def _apply_extras(repo: Repo, extras: Extras, notes: list[str]) -> None:
    """After the tree and index: intent-to-add entries, ignored files, modes."""
    present = [p for p in extras.ita if os.path.lexists(repo.abspath(p))]
    if present:
        repo.run(["add", "-N", "--", *[os.fsdecode(p) for p in present]])
    missing = [p for p in extras.ita if p not in present]
    placed = {p: made for p in missing for made in [_placeholder(repo, p)] if made is not None}
    if placed:
        # an intent-to-add entry whose file was deleted: `git add -N` needs a
        # file, so an empty one stands in for the moment
        try:
            repo.run(["add", "-N", "--", *[os.fsdecode(p) for p in placed]])
        finally:
            for path, made in placed.items():
                os.unlink(repo.abspath(path))
                for directory in made:
                    try:
                        os.rmdir(directory)
                    except OSError:
                        break
    if len(placed) < len(missing):
        notes.append(f"{len(missing) - len(placed)} intent-to-add path(s) could not be put back: something is in their way")
    wanted = [(p, mode, oid) for p, (mode, oid) in extras.ignored.items()]
    blobs = read_blobs(repo, [oid for _, _, oid in wanted])
    for path, mode, oid in wanted:
        full = repo.abspath(path)
        if os.path.isdir(full) and not os.path.islink(full):
            try:
                os.rmdir(full)  # an empty directory the tree left behind; a full one is never removed
            except OSError:
                notes.append(f"{os.fsdecode(path)} is a directory now; its saved ignored file was not written back")
                continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        write_file(full, blobs[oid], mode)
    restore_modes(repo, extras.modes, keep_exec_bits=False)


def _placeholder(repo: Repo, path: bytes) -> list[bytes] | None:
    """An empty file at `path`, if nothing is there or in the way; the
    directories made for it, deepest first (None: not made)."""
    full = repo.abspath(path)
    made = []
    parent = os.path.dirname(full)
    while not os.path.lexists(parent):
        made.append(parent)
        parent = os.path.dirname(parent)
    try:
        os.makedirs(os.path.dirname(full), exist_ok=True)
        os.close(os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except OSError:
        return None
    return made


def write_file(path: bytes, data: bytes, mode: str, perms: int = -1) -> None:
    """Temp file beside it + rename; `perms` when given (>= 0: the bits a
    snapshot recorded), else the exec bit from the mode and the rest from the
    umask (as git does), except over a file with the same exec bit: its
    permission bits stay (a 0600 file the snapshot did not need to record,
    because it was unchanged then, stays 0600)."""
    tmp = path + b".ralph-restore-%d" % os.getpid()
    if mode == MODE_LINK:
        os.symlink(data, tmp)
    else:
        keep = stat.S_IMODE(perms) if perms >= 0 else -1
        try:
            st = os.lstat(path)
            if keep < 0 and stat.S_ISREG(st.st_mode) and bool(st.st_mode & stat.S_IXUSR) == (mode == MODE_EXEC):
                keep = stat.S_IMODE(st.st_mode)
        except OSError:
            pass
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_EXCL, 0o777 if mode == MODE_EXEC else 0o666)
        try:
            if keep >= 0:
                os.fchmod(fd, keep)
            write_all(fd, data)
        finally:
            os.close(fd)
    replace_or_discard(tmp, path)


class Change:
    """One path whose entry differs between two trees (diff-tree)."""

    __slots__ = ("path", "old_mode", "mode", "oid")

    def __init__(self, path: bytes, old_mode: str, mode: str, oid: str) -> None:
        self.path = path
        self.old_mode = old_mode  # "000000": not in the old tree
        self.mode = mode  # "000000": not in the new tree
        self.oid = oid

    @property
    def added(self) -> bool:
        return self.old_mode == NO_MODE

    @property
    def deleted(self) -> bool:
        return self.mode == NO_MODE


NO_MODE = "000000"


def tree_changes(repo: Repo, old: str, new: str) -> list[Change]:
    """What differs between two trees, file by file: only the change is read."""
    if old == new:
        return []
    fields = repo.run(["diff-tree", "-r", "-z", "--no-renames", old, new]).split(b"\0")
    changes = []
    for number in range(0, len(fields) - 1, 2):
        meta, path = fields[number], fields[number + 1]
        if not meta.startswith(b":"):
            break
        old_mode, mode, _old_oid, oid, _status = meta[1:].decode().split(" ")
        changes.append(Change(path, old_mode, mode, oid))
    return changes


def _set_index(repo: Repo, tree: str) -> None:
    """Make the index hold exactly `tree`: only the entries that differ are
    written, the others keep their stat data (a read-tree would drop it all,
    and the refresh after would read every file). An index with unmerged
    entries is read anew from the tree."""
    out = repo.run(["diff-index", "--cached", "-z", "--no-renames", tree, "--"])
    fields = out.split(b"\0")
    lines = []
    for number in range(0, len(fields) - 1, 2):
        meta, path = fields[number], fields[number + 1]
        if not meta.startswith(b":"):
            break
        tree_mode, _index_mode, tree_oid, _index_oid, status = meta[1:].split(b" ")
        if status == b"U":
            repo.run(["read-tree", "--reset", tree])
            return
        if tree_mode == b"000000":
            lines.append(b"0 %s\t%s\0" % (b"0" * len(tree_oid), path))  # not in the tree: out of the index
        else:
            lines.append(b"%s %s\t%s\0" % (tree_mode, tree_oid, path))
    if lines:
        repo.run(["update-index", "-z", "--index-info"], input=b"".join(lines))


def _conflicts(repo: Repo, current: dict[bytes, Entry], changes: list[Change], force: bool) -> list[str]:
    """Paths a restore cannot write without losing something not in any snapshot."""
    problems = []
    deleting = {c.path for c in changes if c.deleted}
    checked_dirs: set[bytes] = set()
    for change in changes:
        path = change.path
        if change.deleted or change.mode == MODE_GITLINK or not change.added and change.old_mode != MODE_GITLINK:
            continue  # a file of ours is there (so its parents are directories): it is saved and rewritten
        parts = path.split(b"/")
        for i in range(1, len(parts)):
            parent = b"/".join(parts[:i])
            if parent in checked_dirs:
                continue
            checked_dirs.add(parent)
            full = repo.abspath(parent)
            if os.path.lexists(full) and not os.path.isdir(full) and parent not in deleting and parent not in current:
                problems.append(f"{os.fsdecode(parent)} (an ignored file where the snapshot has a directory)")
        full = repo.abspath(path)
        if os.path.isdir(full) and not os.path.islink(full):
            for dirpath, _dirs, files in os.walk(full):
                for name in files:
                    rel = os.path.relpath(os.path.join(dirpath, name), os.fsencode(repo.top))
                    if rel not in deleting:
                        problems.append(f"{os.fsdecode(path)} (a directory holding {os.fsdecode(rel)}, which is in no snapshot)")
                        break
        elif os.path.lexists(full) and path not in current and not force:
            problems.append(f"{os.fsdecode(path)} (an ignored file the restore would overwrite; use --force to overwrite it)")
    return problems


def _apply_tree(repo: Repo, current: dict[bytes, Entry], changes: list[Change]) -> list[bytes]:
    """Write the changes over the current entries. Untracked files that are
    not in the target and not in its way are left for the caller
    (returned): whether they go depends on the restored ignore rules."""
    new_dirs = _directories(c.path for c in changes if not c.deleted)
    deferred = []
    for change in changes:
        path = change.path
        if not change.deleted or change.old_mode == MODE_GITLINK:
            continue
        entry = current.get(path)
        if entry is not None and entry.untracked and path not in new_dirs:
            deferred.append(path)
            continue
        full = repo.abspath(path)
        if os.path.lexists(full) and not os.path.isdir(full) or os.path.islink(full):
            os.unlink(full)
            remove_empty_parents(repo, path)
    wanted = []
    for change in changes:
        if change.deleted:
            continue
        if change.mode == MODE_GITLINK:
            os.makedirs(repo.abspath(change.path), exist_ok=True)
        else:
            wanted.append(change)
    blobs = read_blobs(repo, [c.oid for c in wanted])
    for change in wanted:
        full = repo.abspath(change.path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full)  # checked by _conflicts: holds only files being deleted (now gone)
        write_file(full, blobs[change.oid], change.mode)
    return deferred


def _directories(paths: Iterable[bytes]) -> set[bytes]:
    """Every directory the paths lie in."""
    found: set[bytes] = set()
    for path in paths:
        while b"/" in path:
            path = path.rsplit(b"/", 1)[0]
            if path in found:
                break
            found.add(path)
    return found


def _remove_unignored(repo: Repo, paths: list[bytes]) -> None:
    """Untracked files the snapshot does not have: removed (they are in the
    pre-restore snapshot), unless the restored ignore rules ignore them: an
    ignored file was there, untouched, when the snapshot was taken."""
    if not paths:
        return
    out = repo.run(["check-ignore", "-z", "--stdin"], input=b"".join(p + b"\0" for p in paths), ok=(0, 1))
    ignored = set(split_z(out))
    for path in paths:
        if path in ignored:
            continue
        full = repo.abspath(path)
        if os.path.lexists(full) and (os.path.islink(full) or not os.path.isdir(full)):
            os.unlink(full)
            remove_empty_parents(repo, path)
