"""Snapshots as refs: the commits under refs/ralph/rollbacks/<id> (their shape is
in the ralph.rollback docstring): writing one and checking it is complete,
listing them, finding one by id, reading its extras back."""
from __future__ import annotations

import os
import shutil
import tempfile
import time

from ralph.redaction import redact
from ralph.rollback.capture import Capture, capture
from ralph.rollback.git import MODE_FILE, MODE_GITLINK, Repo, RollbackError, read_blobs, split_z, tree_entries

REF_PREFIX = "refs/ralph/rollbacks/"
SNAPSHOT_AUTHOR = {
    "GIT_AUTHOR_NAME": "ralph-hooks",
    "GIT_AUTHOR_EMAIL": "ralph-hooks@localhost",
    "GIT_COMMITTER_NAME": "ralph-hooks",
    "GIT_COMMITTER_EMAIL": "ralph-hooks@localhost",
}
TRAILER_KEYS = ("Story", "Iteration", "Trigger", "Run", "Kind", "Head", "Index", "Extras", "Files-Changed", "Note")
FREE_TEXT_TRAILERS = ("Story", "Iteration", "Trigger", "Run", "Note")  # redacted; the others are ids and counts
EXTRAS_IGNORED = b"ignored/"
EXTRAS_ITA = b"intent-to-add"
EXTRAS_MODES = b"modes"


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


class Extras:
    """A snapshot's extras commit, read back."""

    __slots__ = ("ignored", "ita", "modes")

    def __init__(self) -> None:
        self.ignored: dict[bytes, tuple[str, str]] = {}
        self.ita: list[bytes] = []
        self.modes: dict[bytes, int] = {}


def _commit(repo: Repo, tree: str, parents: list[str], message: str) -> str:
    args = ["commit-tree", tree]
    for parent in parents:
        args += ["-p", parent]
    return repo.text(args, input=message.encode("utf-8", "surrogateescape"), env=SNAPSHOT_AUTHOR)


def files_changed(repo: Repo, base_tree: str, tree: str) -> int:
    if base_tree == tree:
        return 0
    return len(split_z(repo.run(["diff-tree", "-r", "-z", "--no-renames", "--name-only", base_tree, tree])))


def _extras_tree(repo: Repo, cap: Capture) -> str:
    """The tree of the extras commit (see the ralph.rollback docstring); "" when there is nothing to hold."""
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


def write_snapshot(repo: Repo, cap: Capture, subject: str, fields: dict, ref: str = "") -> tuple[str, str, str]:
    """The capture as a snapshot commit under `ref` (default: a new
    refs/ralph/rollbacks/<id>), verified readable; (id, ref, sha)."""
    parents = [cap.head] if cap.head else []
    index_commit = _commit(repo, cap.index_tree, parents, "ralph snapshot: the index (staged changes)\n")
    fields = dict(fields)
    fields["Head"] = cap.head or "none"
    fields["Index"] = index_commit
    extras_tree = _extras_tree(repo, cap)
    extras = [_commit(repo, extras_tree, [], "ralph snapshot: ignored files, intent-to-add entries and modes\n")] if extras_tree else []
    if extras:
        fields["Extras"] = extras[0]
    fields["Files-Changed"] = str(files_changed(repo, cap.head_tree, cap.tree))
    if cap.notes:
        fields["Note"] = "; ".join(cap.notes)
    trailers = "".join(f"Ralph-{key}: {one_line(redact(str(fields[key])) if key in FREE_TEXT_TRAILERS else fields[key])}\n"
                       for key in TRAILER_KEYS if fields.get(key) not in (None, ""))
    message = f"{one_line(redact(subject), 200)}\n\n{trailers}"
    sha = _commit(repo, cap.tree, parents + [index_commit] + extras, message)
    snap_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + sha[:8]
    ref = ref or REF_PREFIX + snap_id
    existing = repo.commit_exists(ref)
    if existing != sha:
        repo.run(["update-ref", "-m", "ralph snapshot", ref, sha, ""])
    _verify_snapshot(repo, ref, sha, cap)
    return snap_id, ref, sha


def _verify_snapshot(repo: Repo, ref: str, sha: str, cap: Capture) -> None:
    """The ref resolves, and every object a restore needs is readable: the
    ones this capture wrote (the index's own were checked by write-tree)."""
    if repo.commit_exists(ref) != sha:
        raise RollbackError(f"snapshot {ref} did not resolve to {sha} after writing it")
    wanted = [sha, cap.tree, cap.index_tree] + [e.oid for e in list(cap.entries.values()) + list(cap.extras.values())
                                                if e.mode != MODE_GITLINK and e.looked]
    out = repo.run(["cat-file", "--batch-check"], input="\n".join(wanted).encode() + b"\n")
    missing = [line for line in out.decode().splitlines() if line.endswith(" missing")]
    if missing:
        raise RollbackError(f"snapshot {ref} is incomplete ({len(missing)} objects unreadable, e.g. {missing[0]}); nothing was reset")
    listed = split_z(repo.run(["ls-tree", "-r", "-z", "--name-only", cap.tree]))
    if len(listed) != len(cap.entries):
        raise RollbackError(f"snapshot {ref} lists {len(listed)} files, expected {len(cap.entries)}; nothing was reset")


def save_snapshot(root: str, message: str, *, kind: str = "manual", fields: dict | None = None) -> tuple[str, str, str]:
    """Save working tree + index to a new ref without touching either. -> (id, ref, sha)."""
    repo = Repo(root)
    data = dict(fields or {})
    data["Kind"] = kind
    return write_snapshot(repo, capture(repo), message, data)


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


def all_snapshots(repo: Repo) -> list[Snapshot]:
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
    return all_snapshots(Repo(root))


def find_snapshot(repo: Repo, wanted: str) -> Snapshot:
    snapshots = all_snapshots(repo)
    key = wanted[len(REF_PREFIX):] if wanted.startswith(REF_PREFIX) else wanted
    exact = [s for s in snapshots if s.id == key]
    matches = exact or [s for s in snapshots if s.id.startswith(key) or s.id.endswith(key) or s.sha.startswith(key)] if key else []
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(s.id for s in snapshots[-20:]) or "none (no rollback has saved anything in this repository)"
    if not matches:
        raise RollbackError(f"no saved snapshot {wanted!r}; known ids: {known}")
    raise RollbackError(f"{wanted!r} matches {len(matches)} snapshots ({', '.join(s.id for s in matches[:10])}); give more of the id")


def read_extras(repo: Repo, commit: str) -> Extras:
    extras = Extras()
    if not commit:
        return extras
    entries = tree_entries(repo, repo.tree_of(commit))
    blobs = read_blobs(repo, [entries[name][1] for name in (EXTRAS_ITA, EXTRAS_MODES) if name in entries])
    for path, (mode, oid) in entries.items():
        if path.startswith(EXTRAS_IGNORED):
            extras.ignored[path[len(EXTRAS_IGNORED):]] = (mode, oid)
    if EXTRAS_ITA in entries:
        extras.ita = split_z(blobs[entries[EXTRAS_ITA][1]])
    if EXTRAS_MODES in entries:
        for record in split_z(blobs[entries[EXTRAS_MODES][1]]):
            perms, _, path = record.partition(b" ")
            extras.modes[path] = int(perms, 8)
    return extras


def one_line(value: object, limit: int = 300) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
