"""Save everything, then put the tree back at a checkpoint; bring saved work back.

Not on the hot path: imported only when a rollback or `ralph rollbacks` runs.

A snapshot is a commit under `refs/ralph/rollbacks/<id>` (id: UTC time + short
sha, sortable). Its tree is the working tree byte for byte; its parents are
HEAD (when there is one) and a second commit whose tree is the index:

    W  (working tree: tracked + untracked non-ignored files, exec bits, symlinks)
    |\\
    | I  (the index as it was: what was staged)
    |/
    HEAD

When there is anything git's trees cannot hold, a third parent M (the
"extras" commit, `Ralph-Extras:`) holds it, so a restore puts back every
byte and mode:

    ignored/<path>   ignored files the reset would overwrite or delete: a
                     path tracked at the checkpoint that the agent untracked
                     and ignored (`git rm --cached f; echo f >> .gitignore`)
                     and then edited, or an ignored file or directory in the
                     way of a checkpoint path
    intent-to-add    NUL-separated paths added with `git add -N` (a tree
                     cannot hold such an index entry)
    modes            "<octal> <path>\0" for files whose permission bits are not
                     git's 0644 / 0755 (a 0600 secrets file); the rollback
                     keeps those bits on the files it rewrites too

The commit message names the story, iteration and trigger, plus `Ralph-*:`
trailers that `list_snapshots` reads back.

Byte for byte: files are hashed with `git hash-object --no-filters` and
written back by this module from the blobs, so no clean/smudge filter, eol or
autocrlf setting can alter them on the way in or out. The user's index and
working tree are not touched while saving: the index is read from a temporary
copy (GIT_INDEX_FILE) and the working tree tree is built in a second temporary
index, with GIT_OPTIONAL_LOCKS=0 so no git call even refreshes the real index.

Never touched, by rollback or restore: ignored files that the reset leaves
alone (the saved ones above are put back), the state dir `.ralph/`,
untracked nested repositories, and the contents of submodules. A rollback is
refused (nothing reset, nothing saved) when a submodule has uncommitted changes,
untracked files or a moved HEAD: resetting only the superproject would leave a
half-rolled-back tree, and a submodule's work lives in its own object store,
which a snapshot here cannot hold. Empty directories are not saved (git has no
tree entry for them). A conflicted index (mid-merge) cannot be written as a tree:
its staged state is then recorded as HEAD's and the message says so.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time

from ralph.process import pid_alive
from ralph.state.files import replace_or_discard, write_all
from ralph.state.locations import STATE_DIR_NAME

REF_PREFIX = "refs/ralph/rollbacks/"
SNAPSHOT_AUTHOR = {
    "GIT_AUTHOR_NAME": "ralph-hooks",
    "GIT_AUTHOR_EMAIL": "ralph-hooks@localhost",
    "GIT_COMMITTER_NAME": "ralph-hooks",
    "GIT_COMMITTER_EMAIL": "ralph-hooks@localhost",
}
# variables that would point git somewhere other than the project we were given
GIT_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_NAMESPACE", "GIT_COMMON_DIR")
GIT_CONFIG = (
    "-c", "submodule.recurse=false",  # a reset must never reach into a submodule's work
    "-c", "core.quotePath=false",
    "-c", "commit.gpgSign=false",
    "-c", "advice.detachedHead=false",
)
MODE_FILE = "100644"
MODE_EXEC = "100755"
MODE_LINK = "120000"
MODE_GITLINK = "160000"
ARG_BYTES = 96 * 1024  # per hash-object call, well under ARG_MAX
TRAILER_KEYS = ("Story", "Iteration", "Trigger", "Run", "Kind", "Head", "Index", "Extras", "Files-Changed", "Note")
FREE_TEXT_TRAILERS = ("Story", "Iteration", "Trigger", "Run", "Note")  # redacted; the others are ids and counts
EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
DEFAULT_PERMS = (0o644, 0o755)  # what git and the usual umask give; anything else is recorded
EXTRAS_IGNORED = b"ignored/"
EXTRAS_ITA = b"intent-to-add"
EXTRAS_MODES = b"modes"


class RollbackError(Exception):
    """A rollback or restore could not be done; the message says what to do."""


class GitError(RollbackError):
    pass


class RollbackResult:
    __slots__ = ("id", "ref", "sha", "message", "restored", "checkpoint", "files_changed", "saved")

    def __init__(self, id: str = "", ref: str = "", sha: str = "", message: str = "", restored: bool = False,
                 checkpoint: str = "", files_changed: int = 0, saved: bool = False) -> None:
        self.id = id
        self.ref = ref
        self.sha = sha
        self.message = message
        self.restored = restored
        self.checkpoint = checkpoint
        self.files_changed = files_changed
        self.saved = saved

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}


class RestoreResult:
    __slots__ = ("id", "message", "pre_restore", "moved_head")

    def __init__(self, id: str, message: str, pre_restore: Snapshot | None, moved_head: str) -> None:
        self.id = id
        self.message = message
        self.pre_restore = pre_restore
        self.moved_head = moved_head


class Snapshot:
    __slots__ = ("id", "ref", "sha", "time", "subject", "fields", "tree", "index_commit", "extras_commit")

    def __init__(self, id: str, ref: str, sha: str, time: int, subject: str, fields: dict, tree: str, index_commit: str,
                 extras_commit: str = "") -> None:
        self.extras_commit = extras_commit  # ignored files, intent-to-add paths, modes; "" when none
        self.id = id
        self.ref = ref
        self.sha = sha
        self.time = time
        self.subject = subject
        self.fields = fields
        self.tree = tree
        self.index_commit = index_commit  # its tree is the staged index

    @property
    def head(self) -> str | None:
        value = self.fields.get("Head", "")
        return value if value and value != "none" else None

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "ref": self.ref,
            "sha": self.sha,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.time)),
            "subject": self.subject,
            "story": self.fields.get("Story", ""),
            "iteration": self.fields.get("Iteration", ""),
            "trigger": self.fields.get("Trigger", ""),
            "kind": self.fields.get("Kind", ""),
            "run_id": self.fields.get("Run", ""),
            "head": self.head or "",
            "files_changed": int(self.fields.get("Files-Changed", "0") or 0),
            "note": self.fields.get("Note", ""),
        }


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
    plus what trees cannot hold (see the module docstring)."""

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


# ---- git plumbing ----


class Repo:
    """A work tree and the git that runs in it."""

    __slots__ = ("top", "env", "git_dir", "_empty_tree")

    def __init__(self, root: str) -> None:
        env = {k: v for k, v in os.environ.items() if k not in GIT_ENV_DROP}
        env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C", LANG="C")
        self.env = env
        if not os.path.isdir(root):
            raise RollbackError(f"{root} is not a directory")
        try:
            out = subprocess.run(
                ["git", "rev-parse", "--show-toplevel", "--absolute-git-dir"],
                cwd=root, env=env, capture_output=True, check=False,
            )
        except FileNotFoundError:
            raise RollbackError("git is not installed or not on PATH; rollbacks need git") from None
        if out.returncode != 0:
            raise RollbackError(f"{root} is not inside a git work tree ({_first_line(out.stderr)}); rollbacks need a git repository with a work tree")
        lines = out.stdout.decode("utf-8", "surrogateescape").splitlines()
        if len(lines) < 2 or not lines[0]:
            raise RollbackError(f"{root} is in a bare repository; rollbacks need a work tree")
        self.top = lines[0]
        self.git_dir = lines[1]
        self._empty_tree = ""

    def run(self, args: list[str], *, input: bytes | None = None, env: dict | None = None, ok: tuple[int, ...] = (0,)) -> bytes:
        full_env = self.env if env is None else {**self.env, **env}
        proc = subprocess.run(["git", *GIT_CONFIG, *args], cwd=self.top, env=full_env, input=input, capture_output=True, check=False)
        if proc.returncode not in ok:
            raise GitError(f"`git {' '.join(args[:3])}` failed (exit {proc.returncode}): {_first_line(proc.stderr) or _first_line(proc.stdout)}")
        return proc.stdout

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
        proc = subprocess.run(["git", "merge-base", "--is-ancestor", older, newer], cwd=self.top, env=self.env, capture_output=True, check=False)
        return proc.returncode == 0


def _first_line(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text.splitlines()[0][:300] if text else ""


def _split_z(data: bytes) -> list[bytes]:
    return [part for part in data.split(b"\0") if part]


def _one_line(value: object, limit: int = 300) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- capture: the working tree and index as trees ----


def _index_entries(repo: Repo, index_file: str) -> dict[bytes, tuple[str, str]]:
    """path -> (mode, oid) from an index; unmerged paths keep 'ours' (stage 2) when there is one."""
    found: dict[bytes, tuple[str, str]] = {}
    for record in _split_z(repo.run(["ls-files", "-z", "-s"], env={"GIT_INDEX_FILE": index_file})):
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
    return [p for p in _split_z(out) if not p.endswith(b"/")]


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


def _submodule_head(repo: Repo, path: bytes, fallback: str) -> str:
    full = repo.abspath(path)
    if not os.path.exists(os.path.join(full, b".git")):
        return fallback
    proc = subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=full, env=repo.env, capture_output=True, check=False)
    out = proc.stdout.decode().strip()
    return out if proc.returncode == 0 and out else fallback


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
                entries[path] = Entry(MODE_GITLINK, _submodule_head(repo, path, indexed[path][1]), path)
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
            in_tree = set(_split_z(repo.run(["ls-tree", "-r", "-z", "--name-only", "--full-tree", index_tree])))
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


# ---- snapshots as refs ----


def _commit(repo: Repo, tree: str, parents: list[str], message: str) -> str:
    args = ["commit-tree", tree]
    for parent in parents:
        args += ["-p", parent]
    return repo.text(args, input=message.encode("utf-8", "surrogateescape"), env=SNAPSHOT_AUTHOR)


def _files_changed(repo: Repo, base_tree: str, tree: str) -> int:
    if base_tree == tree:
        return 0
    return len(_split_z(repo.run(["diff-tree", "-r", "-z", "--no-renames", "--name-only", base_tree, tree])))


def _extras_tree(repo: Repo, cap: Capture) -> str:
    """The tree of the extras commit (see the module docstring); "" when there is nothing to hold."""
    if not (cap.extras or cap.ita or cap.modes):
        return ""
    records = [b"%s %s\t%s%s\0" % (e.mode.encode(), e.oid.encode(), EXTRAS_IGNORED, e.path) for e in cap.extras.values()]
    if cap.ita:
        oid = repo.text(["hash-object", "-w", "--stdin"], input=b"".join(p + b"\0" for p in cap.ita))
        records.append(b"%s %s\t%s\0" % (MODE_FILE.encode(), oid.encode(), EXTRAS_ITA))
    if cap.modes:
        note = b"".join(b"%o %s\0" % (perms, path) for path, perms in sorted(cap.modes.items()))
        oid = repo.text(["hash-object", "-w", "--stdin"], input=note)
        records.append(b"%s %s\t%s\0" % (MODE_FILE.encode(), oid.encode(), EXTRAS_MODES))
    tmp = tempfile.mkdtemp(prefix="ralph-extras-")
    try:
        index = os.path.join(tmp, "index")
        repo.run(["update-index", "-z", "--index-info"], input=b"".join(records), env={"GIT_INDEX_FILE": index})
        return repo.text(["write-tree"], env={"GIT_INDEX_FILE": index})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _write_snapshot(repo: Repo, cap: Capture, subject: str, fields: dict) -> tuple[str, str, str]:
    parents = [cap.head] if cap.head else []
    index_commit = _commit(repo, cap.index_tree, parents, "ralph snapshot: the index (staged changes)\n")
    fields = dict(fields)
    fields["Head"] = cap.head or "none"
    fields["Index"] = index_commit
    extras_tree = _extras_tree(repo, cap)
    extras = [_commit(repo, extras_tree, [], "ralph snapshot: ignored files, intent-to-add entries and modes\n")] if extras_tree else []
    if extras:
        fields["Extras"] = extras[0]
    fields["Files-Changed"] = str(_files_changed(repo, cap.head_tree, cap.tree))
    if cap.notes:
        fields["Note"] = "; ".join(cap.notes)
    from ralph.rules.redact import redact

    trailers = "".join(f"Ralph-{key}: {_one_line(redact(str(fields[key])) if key in FREE_TEXT_TRAILERS else fields[key])}\n"
                       for key in TRAILER_KEYS if fields.get(key) not in (None, ""))
    message = f"{_one_line(redact(subject), 200)}\n\n{trailers}"
    sha = _commit(repo, cap.tree, parents + [index_commit] + extras, message)
    snap_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + sha[:8]
    ref = REF_PREFIX + snap_id
    existing = repo.commit_exists(ref)
    if existing != sha:
        repo.run(["update-ref", "-m", "ralph snapshot", ref, sha, ""])
    _verify_snapshot(repo, ref, sha, cap)
    return snap_id, ref, sha


def _verify_snapshot(repo: Repo, ref: str, sha: str, cap: Capture) -> None:
    """The ref resolves, and every object a restore needs is readable."""
    if repo.commit_exists(ref) != sha:
        raise RollbackError(f"snapshot {ref} did not resolve to {sha} after writing it")
    wanted = [sha, cap.tree, cap.index_tree] + [e.oid for e in list(cap.entries.values()) + list(cap.extras.values()) if e.mode != MODE_GITLINK]
    out = repo.run(["cat-file", "--batch-check"], input="\n".join(wanted).encode() + b"\n")
    missing = [line for line in out.decode().splitlines() if line.endswith(" missing")]
    if missing:
        raise RollbackError(f"snapshot {ref} is incomplete ({len(missing)} objects unreadable, e.g. {missing[0]}); nothing was reset")
    listed = _split_z(repo.run(["ls-tree", "-r", "-z", "--name-only", cap.tree]))
    if len(listed) != len(cap.entries):
        raise RollbackError(f"snapshot {ref} lists {len(listed)} files, expected {len(cap.entries)}; nothing was reset")


def save_snapshot(root: str, message: str, *, kind: str = "manual", fields: dict | None = None) -> tuple[str, str, str]:
    """Save working tree + index to a new ref without touching either. -> (id, ref, sha)."""
    repo = Repo(root)
    data = dict(fields or {})
    data["Kind"] = kind
    return _write_snapshot(repo, capture(repo), message, data)


def _parse_commit(raw: bytes) -> tuple[str, list[str], int, str, dict]:
    header, _, body = raw.partition(b"\n\n")
    tree, parents, when = "", [], 0
    for line in header.split(b"\n"):
        key, _, value = line.partition(b" ")
        if key == b"tree":
            tree = value.decode()
        elif key == b"parent":
            parents.append(value.decode())
        elif key == b"committer":
            try:
                when = int(value.rsplit(b" ", 2)[-2])
            except (ValueError, IndexError):
                when = 0
    text = body.decode("utf-8", "replace")
    subject = text.split("\n", 1)[0]
    fields = {}
    for line in text.splitlines()[1:]:
        if line.startswith("Ralph-") and ": " in line:
            key, value = line[6:].split(": ", 1)
            fields[key] = value
    return tree, parents, when, subject, fields


def _snapshots(repo: Repo) -> list[Snapshot]:
    refs = repo.text(["for-each-ref", "--format=%(objectname) %(refname)", REF_PREFIX]).splitlines()
    if not refs:
        return []
    pairs = [line.split(" ", 1) for line in refs if " " in line]
    out = repo.run(["cat-file", "--batch"], input="".join(sha + "\n" for sha, _ in pairs).encode())
    found = []
    pos = 0
    for sha, ref in pairs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split(b" ")
        if len(header) < 3 or header[1] != b"commit":
            pos = end + 1
            continue
        size = int(header[2])
        raw = out[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1
        tree, parents, when, subject, fields = _parse_commit(raw)
        index_commit = fields.get("Index") or (parents[1] if len(parents) > 1 else "")
        extras_commit = fields.get("Extras", "") if fields.get("Extras", "") in parents else ""
        found.append(Snapshot(ref[len(REF_PREFIX):], ref, sha, when, subject, fields, tree, index_commit, extras_commit))
    found.sort(key=lambda s: (s.time, s.id))
    return found


def list_snapshots(root: str) -> list[Snapshot]:
    """Every saved snapshot, oldest first."""
    return _snapshots(Repo(root))


def find_snapshot(repo: Repo, wanted: str) -> Snapshot:
    snapshots = _snapshots(repo)
    key = wanted[len(REF_PREFIX):] if wanted.startswith(REF_PREFIX) else wanted
    exact = [s for s in snapshots if s.id == key]
    matches = exact or [s for s in snapshots if s.id.startswith(key) or s.id.endswith(key) or s.sha.startswith(key)] if key else []
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(s.id for s in snapshots[-20:]) or "none (no rollback has saved anything in this repository)"
    if not matches:
        raise RollbackError(f"no saved snapshot {wanted!r}; known ids: {known}")
    raise RollbackError(f"{wanted!r} matches {len(matches)} snapshots ({', '.join(s.id for s in matches[:10])}); give more of the id")


# ---- rollback: save, then reset to the checkpoint ----


def _dirty_submodules(repo: Repo) -> list[str]:
    """Submodules with a moved HEAD, modified content or untracked files."""
    out = repo.run(["status", "--porcelain=v2", "-z", "--no-renames", "--ignore-submodules=none", "--untracked-files=no"])
    dirty = []
    for record in _split_z(out):
        if not record.startswith(b"1 "):
            continue
        parts = record.split(b" ", 8)
        if len(parts) == 9 and parts[2].startswith(b"S") and parts[2] != b"S...":
            flags = parts[2].decode()
            what = [word for flag, word in zip(flags[1:], ("new commits", "modified content", "untracked files")) if flag != "."]
            dirty.append(f"{os.fsdecode(parts[8])} ({', '.join(what)})")
    return dirty


def _remove_empty_parents(repo: Repo, path: bytes) -> None:
    top = os.fsencode(repo.top)
    parent = os.path.dirname(repo.abspath(path))
    while parent != top and parent.startswith(top + b"/"):
        try:
            os.rmdir(parent)
        except OSError:
            return
        parent = os.path.dirname(parent)


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


class _Lock:
    """One rollback or restore at a time per repository (parallel hook processes).
    An O_EXCL file in the git dir, as git's own locks; a stale one (its holder
    is gone, or it is older than STALE_LOCK_SECONDS) is taken over."""

    __slots__ = ("path", "held")

    def __init__(self, repo: Repo) -> None:
        self.path = os.path.join(repo.git_dir, LOCK_NAME)
        self.held = False

    def __enter__(self) -> _Lock:
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


def save_and_restore(root: str, checkpoint: str, *, story: str, iteration: int, trigger: str, run_id: str = "") -> RollbackResult:
    """Save everything to refs/ralph/rollbacks/<id>, then reset the tree to `checkpoint`.

    Never raises: the result says what happened. Nothing is reset unless the
    snapshot is written and verified readable.
    """
    result = RollbackResult(checkpoint=checkpoint)
    try:
        repo = Repo(root)
        with _Lock(repo):
            _save_and_reset(repo, result, story, iteration, trigger, run_id)
    except Exception as e:  # noqa: BLE001 - the caller is a hook: report, never raise
        if not result.message:
            result.message = f"nothing was saved or reset: {e}"
    return result


def _save_and_reset(repo: Repo, result: RollbackResult, story: str, iteration: int, trigger: str, run_id: str) -> None:
    target = repo.commit_exists(result.checkpoint)
    if target is None:
        result.message = f"checkpoint {result.checkpoint[:12]} is not a commit in this repository; nothing was saved or reset"
        return
    result.checkpoint = target
    try:
        cap = capture(repo, _split_z(repo.run(["ls-tree", "-r", "-z", "--name-only", "--full-tree", target])))
        if not cap.dirty and cap.head == target:
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
        result.id, result.ref, result.sha = _write_snapshot(repo, cap, subject, dict(fields, Kind="rollback"))
        result.saved = True
        result.files_changed = _files_changed(repo, cap.head_tree, cap.tree)
    except Exception as e:  # noqa: BLE001
        result.message = f"nothing was reset: could not save the work first ({e})"
        return

    try:
        repo.run(["reset", "-q", "--hard", target])
        tracked = set(_split_z(repo.run(["ls-files", "-z"])))
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
            _remove_empty_parents(repo, entry.path)
        _restore_modes(repo, cap.modes, keep_exec_bits=True)
        now = repo.head()
        if now != target:
            raise RollbackError(f"HEAD is {now} after the reset, expected {target}")
    except Exception as e:  # noqa: BLE001
        result.message = f"the work is saved at {result.ref}, but resetting to {target[:12]} failed: {e}. Restore with `ralph rollbacks restore {result.id}`."
        return
    result.restored = True
    result.message = f"saved to {result.ref}; tree reset to checkpoint {target[:12]}"
    if skipped:
        result.message += f"; left {len(skipped)} file(s) that changed while saving: {', '.join(skipped[:5])}"


def _restore_modes(repo: Repo, modes: dict[bytes, int], keep_exec_bits: bool) -> None:
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


# ---- restore: bring a snapshot back ----


class Extras:
    """A snapshot's extras commit, read back."""

    __slots__ = ("ignored", "ita", "modes")

    def __init__(self) -> None:
        self.ignored: dict[bytes, tuple[str, str]] = {}
        self.ita: list[bytes] = []
        self.modes: dict[bytes, int] = {}


def _read_extras(repo: Repo, commit: str) -> Extras:
    extras = Extras()
    if not commit:
        return extras
    entries = _tree_entries(repo, repo.tree_of(commit))
    blobs = _read_blobs(repo, [entries[name][1] for name in (EXTRAS_ITA, EXTRAS_MODES) if name in entries])
    for path, (mode, oid) in entries.items():
        if path.startswith(EXTRAS_IGNORED):
            extras.ignored[path[len(EXTRAS_IGNORED):]] = (mode, oid)
    if EXTRAS_ITA in entries:
        extras.ita = _split_z(blobs[entries[EXTRAS_ITA][1]])
    if EXTRAS_MODES in entries:
        for record in _split_z(blobs[entries[EXTRAS_MODES][1]]):
            perms, _, path = record.partition(b" ")
            extras.modes[path] = int(perms, 8)
    return extras


def _extras_in_place(cap: Capture, extras: Extras) -> bool:
    for path, (mode, oid) in extras.ignored.items():
        have = cap.extras.get(path) or cap.entries.get(path)
        if have is None or (have.mode, have.oid) != (mode, oid):
            return False
    return set(cap.ita) == set(extras.ita) and all(cap.modes.get(p) == m for p, m in extras.modes.items())


def _apply_extras(repo: Repo, extras: Extras, notes: list[str]) -> None:
    """After the tree and index: intent-to-add entries, ignored files, modes."""
    present = [p for p in extras.ita if os.path.lexists(repo.abspath(p))]
    if present:
        repo.run(["add", "-N", "--", *[os.fsdecode(p) for p in present]])
    if len(present) < len(extras.ita):
        notes.append(f"{len(extras.ita) - len(present)} intent-to-add path(s) are not in the snapshot's files and stay unstaged")
    wanted = [(p, mode, oid) for p, (mode, oid) in extras.ignored.items()]
    blobs = _read_blobs(repo, [oid for _, _, oid in wanted])
    for path, mode, oid in wanted:
        full = repo.abspath(path)
        if os.path.isdir(full) and not os.path.islink(full):
            try:
                os.rmdir(full)  # an empty directory the tree left behind; a full one is never removed
            except OSError:
                notes.append(f"{os.fsdecode(path)} is a directory now; its saved ignored file was not written back")
                continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        _write_file(full, blobs[oid], mode)
    _restore_modes(repo, extras.modes, keep_exec_bits=False)


def _tree_entries(repo: Repo, tree: str) -> dict[bytes, tuple[str, str]]:
    found = {}
    for record in _split_z(repo.run(["ls-tree", "-r", "-z", "--full-tree", tree])):
        meta, _, path = record.partition(b"\t")
        mode, _kind, oid = meta.decode().split(" ")
        found[path] = (mode, oid)
    return found


def _read_blobs(repo: Repo, oids: list[str]) -> dict[str, bytes]:
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


def _write_file(path: bytes, data: bytes, mode: str) -> None:
    """Temp file beside it + rename; exec bit from the mode, the rest from the umask (as git does)."""
    tmp = path + b".ralph-restore-%d" % os.getpid()
    if mode == MODE_LINK:
        os.symlink(data, tmp)
    else:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_EXCL, 0o777 if mode == MODE_EXEC else 0o666)
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
    replace_or_discard(tmp, path)


def _conflicts(repo: Repo, current: dict[bytes, Entry], target: dict[bytes, tuple[str, str]], force: bool) -> list[str]:
    """Paths a restore cannot write without losing something not in any snapshot."""
    problems = []
    deleting = {p for p in current if p not in target}
    checked_dirs: set[bytes] = set()
    for path, (mode, _oid) in target.items():
        if mode == MODE_GITLINK:
            continue
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


def _apply_tree(repo: Repo, current: dict[bytes, Entry], target: dict[bytes, tuple[str, str]]) -> list[bytes]:
    """Write the target tree over the current entries. Untracked files that
    are not in the target and not in its way are left for the caller
    (returned): whether they go depends on the restored ignore rules."""
    target_dirs = {path[:i] for path in target for i in range(len(path)) if path[i:i + 1] == b"/"}
    deferred = []
    for path, entry in current.items():
        if path in target or entry.mode == MODE_GITLINK:
            continue
        if entry.untracked and path not in target_dirs:
            deferred.append(path)
            continue
        full = repo.abspath(path)
        if os.path.lexists(full) and not os.path.isdir(full) or os.path.islink(full):
            os.unlink(full)
            _remove_empty_parents(repo, path)
    wanted = []
    for path, (mode, oid) in target.items():
        have = current.get(path)
        if mode == MODE_GITLINK:
            os.makedirs(repo.abspath(path), exist_ok=True)
        elif have is None or have.mode != mode or have.oid != oid or not os.path.lexists(repo.abspath(path)):
            wanted.append((path, mode, oid))
    blobs = _read_blobs(repo, [oid for _, _, oid in wanted])
    for path, mode, oid in wanted:
        full = repo.abspath(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full)  # checked by _conflicts: holds only files being deleted (now gone)
        _write_file(full, blobs[oid], mode)
    return deferred


def _remove_unignored(repo: Repo, paths: list[bytes]) -> None:
    """Untracked files the snapshot does not have: removed (they are in the
    pre-restore snapshot), unless the restored ignore rules ignore them: an
    ignored file was there, untouched, when the snapshot was taken."""
    if not paths:
        return
    out = repo.run(["check-ignore", "-z", "--stdin"], input=b"".join(p + b"\0" for p in paths), ok=(0, 1))
    ignored = set(_split_z(out))
    for path in paths:
        if path in ignored:
            continue
        full = repo.abspath(path)
        if os.path.lexists(full) and (os.path.islink(full) or not os.path.isdir(full)):
            os.unlink(full)
            _remove_empty_parents(repo, path)


def restore_snapshot(root: str, id: str, *, force: bool = False) -> RestoreResult:
    """Put a snapshot's working tree and index back exactly. Dirty work is saved first.

    HEAD: restored too when the current HEAD is an ancestor of the snapshot's
    (the usual case after a rollback); if HEAD went elsewhere, only --force
    restores the files on top of the current HEAD. Raises RollbackError.
    """
    repo = Repo(root)
    with _Lock(repo):
        return _restore(repo, id, force)


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
    target = _tree_entries(repo, snap.tree)
    extras = _read_extras(repo, snap.extras_commit)
    cap = capture(repo, list(target) + list(extras.ignored))
    if not move_to and cap.tree == snap.tree and cap.index_tree == index_tree and _extras_in_place(cap, extras):
        return RestoreResult(snap.id, f"{snap.id} is already in place; nothing to do", None, "")
    problems = _conflicts(repo, cap.entries, target, force)
    if problems:
        raise RollbackError(f"cannot restore {snap.id}; nothing was changed: " + "; ".join(problems[:10]))
    pre = None
    if cap.dirty or cap.extras:
        fields = {"Trigger": f"before restoring {snap.id}"}
        pre_id, pre_ref, pre_sha = _write_snapshot(repo, cap, f"ralph pre-restore: work in progress before restoring {snap.id}", dict(fields, Kind="pre-restore"))
        pre = find_snapshot(repo, pre_id)
    if move_to:
        repo.run(["update-ref", "-m", f"ralph rollbacks restore {snap.id}", "HEAD", move_to, head or ""])
    leftovers = _apply_tree(repo, cap.entries, target)
    repo.run(["read-tree", index_tree])
    _remove_unignored(repo, leftovers)
    notes: list[str] = []
    _apply_extras(repo, extras, notes)
    repo.run(["update-index", "-q", "--refresh"], ok=(0, 1))
    after = capture(repo)
    if after.tree != snap.tree or after.index_tree != index_tree:
        saved = f" Your previous work is in {pre.ref}." if pre else ""
        raise RollbackError(f"restored {snap.id} but the result differs from the snapshot (tree {after.tree[:12]} vs {snap.tree[:12]}).{saved}")
    parts = [f"restored {snap.id} ({snap.fields.get('Files-Changed', '?')} file(s) changed against its base)"]
    if move_to:
        parts.append(f"HEAD moved to {move_to[:12]}")
    if pre:
        parts.append(f"your uncommitted work was saved first as {pre.id} (`ralph rollbacks restore {pre.id}` brings it back)")
    if base != head and not move_to:
        parts.append(f"HEAD stays at {head[:12] if head else 'unborn'}; `git diff` shows the restored changes against it")
    parts.extend(notes)
    return RestoreResult(snap.id, "; ".join(parts), pre, move_to)
