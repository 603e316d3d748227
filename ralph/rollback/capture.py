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
# attributes under which a file's bytes on disk may differ from its blob
CONVERTING = (b"text", b"eol", b"crlf", b"filter", b"ident", b"working-tree-encoding")
DEFAULT_PERMS = (0o644, 0o755)  # what git and the usual umask give; anything else is recorded


class Entry:
    """One working tree path as a tree entry would hold it."""

    __slots__ = ("mode", "oid", "path", "untracked", "size", "mtime", "perms", "looked")

    def __init__(self, mode: str, oid: str, path: bytes, untracked: bool = False, size: int = -1, mtime: int = -1,
                 perms: int = -1, looked: bool = True) -> None:
        self.looked = looked  # read from the disk by this capture (False: the index entry, which git found unchanged)
        self.perms = perms  # permission bits of a regular file; -1 otherwise (or not looked at)
        self.mode = mode
        self.oid = oid
        self.path = path
        self.untracked = untracked
        self.size = size
        self.mtime = mtime


class Capture:
    """The working tree and index as trees in the object store (no ref yet),
    plus what trees cannot hold (see the ralph.rollback docstring)."""

    __slots__ = ("head", "head_tree", "tree", "index_tree", "entries", "notes", "extras", "ita", "modes", "hashed")

    def __init__(self, head: str | None, head_tree: str, tree: str, index_tree: str, entries: dict[bytes, Entry], notes: list[str]) -> None:
        self.extras: dict[bytes, Entry] = {}  # ignored paths a reset or restore would overwrite or delete
        self.ita: list[bytes] = []  # intent-to-add index entries
        self.modes: dict[bytes, int] = {}  # path -> permission bits, where not 0644 / 0755
        self.hashed = 0  # files read and hashed: what changed, not the size of the tree
        self.head = head
        self.head_tree = head_tree
        self.tree = tree
        self.index_tree = index_tree
        self.entries = entries
        self.notes = notes

    @property
    def dirty(self) -> bool:
        return self.tree != self.head_tree or self.index_tree != self.head_tree


def _index_entries(repo: Repo, index_file: str) -> tuple[dict[bytes, tuple[str, str]], set[bytes], bool]:
    """path -> (mode, oid) from an index; the paths git's change detection
    cannot be trusted for: unmerged (stage 2, 'ours', kept when there is
    one), assume-unchanged and skip-worktree (git does not look at those
    files), intent-to-add (the empty blob); and whether any is unmerged."""
    found: dict[bytes, tuple[str, str]] = {}
    unsure: set[bytes] = set()
    unmerged = False
    modes: dict[bytes, str] = {}
    empty = EMPTY_BLOB.encode()
    for record in split_z(repo.run(["ls-files", "-z", "-s", "-v"], env={"GIT_INDEX_FILE": index_file})):
        meta, _, path = record.partition(b"\t")
        # "<tag> <mode> <oid> <stage>": a one-letter tag, a six-digit mode, a one-digit stage
        tag, stage, oid = meta[:1], meta[-1:], meta[9:-2]
        if stage != b"0" or tag != b"H" and (tag.islower() or tag == b"S") or oid == empty:
            unsure.add(path)
            unmerged = unmerged or stage != b"0"
        if path not in found or stage == b"2":
            mode = modes.get(meta[2:8]) or modes.setdefault(meta[2:8], meta[2:8].decode())
            found[path] = (mode, oid.decode())
    return found, unsure, unmerged


def _changed_tracked(repo: Repo, index_file: str) -> set[bytes]:
    """Tracked paths whose file differs from the index: git's own change
    detection (stat data, then content for racily clean entries)."""
    return set(split_z(repo.run(["diff-files", "-z", "--name-only", "--ignore-submodules=all"], env={"GIT_INDEX_FILE": index_file})))


def _converted(repo: Repo, paths: list[bytes]) -> set[bytes] | None:
    """Paths whose bytes on disk may differ from their blob even when git
    sees no change (eol conversion, a clean/smudge filter, ident, an
    encoding): those are hashed as they are. None: every path (core.autocrlf)."""
    autocrlf = repo.run(["config", "--get", "core.autocrlf"], ok=(0, 1)).strip().lower()
    if autocrlf in (b"true", b"input", b"yes", b"on", b"1"):
        return None
    if not paths:
        return set()
    out = repo.run(["check-attr", "-z", "-a", "--stdin"], input=b"".join(p + b"\0" for p in paths))
    fields = out.split(b"\0")
    found = set()
    for number in range(0, len(fields) - 2, 3):
        path, attribute, value = fields[number:number + 3]
        if attribute in CONVERTING and value != b"unset":
            found.add(path)
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


def capture(repo: Repo, protect: list[bytes] | None = None, rewrite_base: str = "") -> Capture:
    """Write the working tree and the index as trees, touching neither.
    `rewrite_base`: the tree a reset or restore is about to write, if any:
    the paths where the index differs from it, or the files from the index,
    are about to be written, so their permission bits are recorded, and
    ignored files on them, or in their way, are saved as extras (so are
    those on `protect`: more paths about to be written).

    Only what changed is looked at, read and hashed: a tracked file git's
    change detection finds unchanged is its index entry (unless a conversion
    may make its bytes differ from the blob, see _converted), and the working
    tree's tree is the index with the changes applied, so the cost follows
    the change, not the size of the repository."""
    head = repo.head()
    head_tree = repo.tree_of(head)
    notes: list[str] = []
    tmp = tempfile.mkdtemp(prefix="ralph-snapshot-")
    try:
        index_copy = os.path.join(tmp, "index")
        real_index = repo.git_path("index")
        if os.path.exists(real_index):
            # copy2: the copy keeps the index's mtime, which git's racy-git
            # check compares entries with. A fresh mtime would make a file
            # rewritten in the second of its last `git add` (same size, same
            # second) look unchanged here while `reset --hard` on the real
            # index sees the change and overwrites it: lost from tree and snapshot
            shutil.copy2(real_index, index_copy)
        try:
            index_tree = repo.text(["write-tree"], env={"GIT_INDEX_FILE": index_copy})
        except GitError:
            index_tree = head_tree
            notes.append("the index had unresolved conflicts; its staged state was recorded as HEAD's")
        indexed, unsure, unmerged = _index_entries(repo, index_copy)
        look = _changed_tracked(repo, index_copy) | unsure
        rewritten = _differs_from(repo, index_copy, rewrite_base) if rewrite_base else set()
        look |= rewritten
        untracked = _untracked_paths(repo, index_copy)
        converted = _converted(repo, list(indexed))
        filemode = repo.run(["config", "--bool", "core.fileMode"], ok=(0, 1)).strip() != b"false"

        entries: dict[bytes, Entry] = {}
        to_hash: list[Entry] = []
        for path, (index_mode, index_oid) in indexed.items():
            if index_mode == MODE_GITLINK:
                entries[path] = Entry(MODE_GITLINK, repo.submodule_head(path, index_oid), path)
            elif path not in look and converted is not None and path not in converted:
                entries[path] = Entry(index_mode, index_oid, path, looked=False)  # unchanged: the file is its index entry
            else:
                _look_at(repo, path, index_mode, index_oid, False, filemode, entries, to_hash)
        for path in untracked:
            _look_at(repo, path, MODE_FILE, "", True, filemode, entries, to_hash)
        # what a reset or restore writes: the paths git found changed or that differ from its tree
        extras = _ignored_in_the_way(repo, entries, list(protect or []) + sorted(look) if rewrite_base else list(protect or []))
        to_hash += [e for e in extras.values() if e.mode != MODE_LINK]
        for entry, oid in zip(to_hash, _hash_files(repo, [e.path for e in to_hash])):
            entry.oid = oid

        tree = _worktree_tree(repo, tmp, index_copy if os.path.exists(index_copy) and not unmerged else "", indexed, unsure, entries, "0" * len(head_tree))
        ita: list[bytes] = []
        if not notes and any(oid == EMPTY_BLOB and mode != MODE_GITLINK for mode, oid in indexed.values()):
            in_tree = set(split_z(repo.run(["ls-tree", "-r", "-z", "--name-only", "--full-tree", index_tree])))
            ita = sorted(p for p, (mode, oid) in indexed.items() if oid == EMPTY_BLOB and p not in in_tree)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cap = Capture(head, head_tree, tree, index_tree, entries, notes)
    cap.extras = extras
    cap.ita = ita
    cap.hashed = len(to_hash)
    cap.modes = {e.path: e.perms for e in list(entries.values()) + list(extras.values())
                 if e.perms >= 0 and e.perms not in DEFAULT_PERMS}
    return cap


def _look_at(repo: Repo, path: bytes, index_mode: str, index_oid: str, untracked: bool, filemode: bool,
             entries: dict[bytes, Entry], to_hash: list[Entry]) -> None:
    """One path git did not vouch for, as it is on disk: its entry (the file
    to hash in to_hash), nothing when it is gone or a directory now (its
    files are listed as untracked)."""
    full = repo.abspath(path)
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return  # deleted in the working tree
    if stat.S_ISLNK(st.st_mode):
        oid = repo.text(["hash-object", "-w", "--no-filters", "--stdin"], input=os.readlink(full))
        entries[path] = Entry(MODE_LINK, oid, path, untracked, st.st_size, st.st_mtime_ns)
    elif stat.S_ISREG(st.st_mode):
        if filemode:
            mode = MODE_EXEC if st.st_mode & stat.S_IXUSR else MODE_FILE
        else:
            mode = index_mode if index_mode in (MODE_FILE, MODE_EXEC) else MODE_FILE
        entry = Entry(mode, "", path, untracked, st.st_size, st.st_mtime_ns, stat.S_IMODE(st.st_mode))
        entries[path] = entry
        to_hash.append(entry)


def _differs_from(repo: Repo, index_file: str, tree: str) -> set[bytes]:
    """Index paths whose entry is not the tree's (and the tree's paths the index lacks)."""
    return set(split_z(repo.run(["diff-index", "--cached", "-z", "--name-only", "--no-renames", tree, "--"],
                                env={"GIT_INDEX_FILE": index_file})))


def _worktree_tree(repo: Repo, tmp: str, index_copy: str, indexed: dict[bytes, tuple[str, str]], unsure: set[bytes],
                   entries: dict[bytes, Entry], zero_oid: str) -> str:
    """The tree of the working tree: a copy of the index with the differences
    applied (its cached trees stay valid where nothing changed), or without
    `index_copy` (an index with unmerged paths), a new index of every entry."""
    tree_index = os.path.join(tmp, "worktree-index")
    if not index_copy:
        listing = [b"%s %s\t%s\0" % (e.mode.encode(), e.oid.encode(), e.path) for e in entries.values()]
    else:
        shutil.copyfile(index_copy, tree_index)
        listing = [b"0 %s\t%s\0" % (zero_oid.encode(), path) for path in indexed if path not in entries]
        listing += [b"%s %s\t%s\0" % (e.mode.encode(), e.oid.encode(), e.path) for e in entries.values()
                    if e.untracked or e.path in unsure or indexed[e.path] != (e.mode, e.oid)]
    if listing:
        repo.run(["update-index", "-z", "--index-info"], input=b"".join(listing), env={"GIT_INDEX_FILE": tree_index})
    return repo.text(["write-tree"], env={"GIT_INDEX_FILE": tree_index})


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
