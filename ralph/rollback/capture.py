"""What a work tree holds, written to the object store without touching it.

The working tree (tracked and untracked, not ignored, files; exec bits;
symlinks) and the index become trees; ignored files that a reset or restore
would overwrite or delete, intent-to-add entries and permission bits other
than git's 0644 / 0755 are recorded for the extras commit (see ralph.rollback).

Byte for byte: files are hashed with `git hash-object --no-filters`, so no
clean filter, eol or autocrlf setting can alter them on the way in. The
user's index and working tree are not touched: the index is read from a
temporary copy (GIT_INDEX_FILE) and the working tree's tree is built in a
second temporary index (and Repo runs git with GIT_OPTIONAL_LOCKS=0).
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile

from ralph.rollback.git import MODE_EXEC, MODE_FILE, MODE_GITLINK, MODE_LINK, GitError, Repo, split_z
from ralph.state.locations import STATE_DIR_NAME

ARG_BYTES = 96 * 1024  # per hash-object call, well under ARG_MAX
EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
DEFAULT_PERMS = (0o644, 0o755)  # what git and the usual umask give; anything else is recorded


class Entry:
    """One working tree path as a tree entry would hold it."""

    __slots__ = ("mode", "oid", "path", "untracked", "size", "mtime", "perms")

    def __init__(self, mode: str, oid: str, path: bytes, untracked: bool = False, size: int = -1, mtime: int = -1,
                 perms: int = -1) -> None:
        self.perms = perms  # permission bits of a regular file; -1 otherwise
        self.mode = mode
        self.oid = oid
        self.path = path
        self.untracked = untracked
        self.size = size
        self.mtime = mtime


class Capture:
    """The working tree and index as trees in the object store (no ref yet),
    plus what trees cannot hold (see the ralph.rollback docstring)."""

    __slots__ = ("head", "head_tree", "tree", "index_tree", "entries", "notes", "extras", "ita", "modes")

    def __init__(self, head: str | None, head_tree: str, tree: str, index_tree: str, entries: dict[bytes, Entry], notes: list[str]) -> None:
        self.extras: dict[bytes, Entry] = {}  # ignored paths a reset or restore would overwrite or delete
        self.ita: list[bytes] = []  # intent-to-add index entries
        self.modes: dict[bytes, int] = {}  # path -> permission bits, where not 0644 / 0755
        self.head = head
        self.head_tree = head_tree
        self.tree = tree
        self.index_tree = index_tree
        self.entries = entries
        self.notes = notes

    @property
    def dirty(self) -> bool:
        return self.tree != self.head_tree or self.index_tree != self.head_tree


def _index_entries(repo: Repo, index_file: str) -> dict[bytes, tuple[str, str]]:
    """path -> (mode, oid) from an index; unmerged paths keep 'ours' (stage 2) when there is one."""
    found: dict[bytes, tuple[str, str]] = {}
    for record in split_z(repo.run(["ls-files", "-z", "-s"], env={"GIT_INDEX_FILE": index_file})):
        meta, _, path = record.partition(b"\t")
        mode, oid, stage = meta.decode().split(" ")
        if path not in found or stage == "2":
            found[path] = (mode, oid)
    return found


def _untracked_paths(repo: Repo, index_file: str) -> list[bytes]:
    """Untracked, not ignored; not the state dir; not nested repositories (listed as `dir/`)."""
    out = repo.run(
        ["ls-files", "-z", "--others", "--exclude-standard", "--", ":/", f":(exclude,top){STATE_DIR_NAME}"],
        env={"GIT_INDEX_FILE": index_file},
    )
    return [p for p in split_z(out) if not p.endswith(b"/")]


def _hash_files(repo: Repo, paths: list[bytes]) -> list[str]:
    """Blob ids of files as they are on disk, no filters; written to the object store."""
    oids: list[str] = []
    batch: list[bytes] = []
    size = 0
    for path in paths + [b""]:
        if path and size + len(path) < ARG_BYTES:
            batch.append(path)
            size += len(path) + 1
            continue
        if batch:
            out = repo.run(["hash-object", "-w", "--no-filters", "--", *[os.fsdecode(repo.abspath(p)) for p in batch]])
            oids.extend(out.decode().split())
        batch, size = ([path], len(path) + 1) if path else ([], 0)
    if len(oids) != len(paths):
        raise GitError(f"hash-object returned {len(oids)} ids for {len(paths)} files")
    return oids


def capture(repo: Repo, protect: list[bytes] | None = None) -> Capture:
    """Write the working tree and the index as trees, touching neither.
    `protect`: the paths about to be written (a reset's or restore's target
    tree); ignored files on them, or in their way, are saved as extras."""
    head = repo.head()
    head_tree = repo.tree_of(head)
    notes: list[str] = []
    tmp = tempfile.mkdtemp(prefix="ralph-snapshot-")
    try:
        index_copy = os.path.join(tmp, "index")
        real_index = repo.git_path("index")
        if os.path.exists(real_index):
            shutil.copyfile(real_index, index_copy)
        try:
            index_tree = repo.text(["write-tree"], env={"GIT_INDEX_FILE": index_copy})
        except GitError:
            index_tree = head_tree
            notes.append("the index had unresolved conflicts; its staged state was recorded as HEAD's")
        indexed = _index_entries(repo, index_copy)
        untracked = _untracked_paths(repo, index_copy)
        filemode = repo.run(["config", "--bool", "core.fileMode"], ok=(0, 1)).strip() != b"false"

        entries: dict[bytes, Entry] = {}
        to_hash: list[Entry] = []
        for path, is_untracked in [(p, False) for p in indexed] + [(p, True) for p in untracked]:
            index_mode = indexed[path][0] if not is_untracked else MODE_FILE
            if index_mode == MODE_GITLINK:
                entries[path] = Entry(MODE_GITLINK, repo.submodule_head(path, indexed[path][1]), path)
                continue
            try:
                st = os.lstat(repo.abspath(path))
            except (FileNotFoundError, NotADirectoryError):
                continue  # deleted in the working tree
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(repo.abspath(path))
                oid = repo.text(["hash-object", "-w", "--no-filters", "--stdin"], input=target)
                entries[path] = Entry(MODE_LINK, oid, path, is_untracked, st.st_size, st.st_mtime_ns)
            elif stat.S_ISREG(st.st_mode):
                if filemode:
                    mode = MODE_EXEC if st.st_mode & stat.S_IXUSR else MODE_FILE
                else:
                    mode = index_mode if index_mode in (MODE_FILE, MODE_EXEC) else MODE_FILE
                entry = Entry(mode, "", path, is_untracked, st.st_size, st.st_mtime_ns, stat.S_IMODE(st.st_mode))
                entries[path] = entry
                to_hash.append(entry)
            # a directory where a tracked file was: its files are listed as untracked
        extras = _ignored_in_the_way(repo, entries, protect or [])
        to_hash += [e for e in extras.values() if e.mode != MODE_LINK]
        for entry, oid in zip(to_hash, _hash_files(repo, [e.path for e in to_hash])):
            entry.oid = oid

        tree_index = os.path.join(tmp, "worktree-index")
        listing = b"".join(b"%s %s\t%s\0" % (e.mode.encode(), e.oid.encode(), e.path) for e in entries.values())
        repo.run(["update-index", "-z", "--index-info"], input=listing, env={"GIT_INDEX_FILE": tree_index})
        tree = repo.text(["write-tree"], env={"GIT_INDEX_FILE": tree_index})
        ita: list[bytes] = []
        if not notes and any(oid == EMPTY_BLOB and mode != MODE_GITLINK for mode, oid in indexed.values()):
            in_tree = set(split_z(repo.run(["ls-tree", "-r", "-z", "--name-only", "--full-tree", index_tree])))
            ita = sorted(p for p, (mode, oid) in indexed.items() if oid == EMPTY_BLOB and p not in in_tree)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cap = Capture(head, head_tree, tree, index_tree, entries, notes)
    cap.extras = extras
    cap.ita = ita
    cap.modes = {e.path: e.perms for e in list(entries.values()) + list(extras.values())
                 if e.perms >= 0 and e.perms not in DEFAULT_PERMS}
    return cap


def _ignored_in_the_way(repo: Repo, entries: dict[bytes, Entry], protect: list[bytes]) -> dict[bytes, Entry]:
    """Files on disk, in no entry (ignored), that writing `protect` would
    overwrite or delete: on a protected path, inside a directory standing on
    one, or a file standing where a protected path needs a directory. Their
    oids are filled in by the caller (symlinks here). The state dir is left out."""
    found: dict[bytes, Entry] = {}
    checked: set[bytes] = set()
    state_prefix = STATE_DIR_NAME.encode() + b"/"

    def add(path: bytes, st: os.stat_result) -> None:
        if path in entries or path in found or path.startswith(state_prefix):
            return
        full = repo.abspath(path)
        if stat.S_ISLNK(st.st_mode):
            oid = repo.text(["hash-object", "-w", "--no-filters", "--stdin"], input=os.readlink(full))
            found[path] = Entry(MODE_LINK, oid, path, True, st.st_size, st.st_mtime_ns)
        elif stat.S_ISREG(st.st_mode):
            mode = MODE_EXEC if st.st_mode & stat.S_IXUSR else MODE_FILE
            found[path] = Entry(mode, "", path, True, st.st_size, st.st_mtime_ns, stat.S_IMODE(st.st_mode))

    for path in protect:
        if path in entries:
            continue
        parts = path.split(b"/")
        for depth in range(1, len(parts) + 1):
            prefix = b"/".join(parts[:depth])
            if prefix in checked:
                continue
            checked.add(prefix)
            try:
                st = os.lstat(repo.abspath(prefix))
            except OSError:
                break  # nothing there, nor below
            if stat.S_ISDIR(st.st_mode):
                if depth == len(parts) and not os.path.lexists(os.path.join(repo.abspath(prefix), b".git")):
                    for dirpath, dirs, files in os.walk(repo.abspath(prefix)):
                        dirs[:] = [d for d in dirs if not os.path.lexists(os.path.join(dirpath, d, b".git"))]
                        for name in files + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
                            full = os.path.join(dirpath, name)
                            add(os.path.relpath(full, os.fsencode(repo.top)), os.lstat(full))
                continue
            add(prefix, st)
            break
    return found
