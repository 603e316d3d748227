"""The run branch: the loop commits on a branch of its own, never on the
person's, and refuses to start on a tree with their uncommitted work.

- `[loop] branch = "auto"` (the default): `ralph/<name>`, where the name is
  prd.json's `branchName` (taken as the whole branch name, as the Ralph
  prd.json format means it), else a slug of the plan's title (prd.json's
  `project`, plan.md's first `# ` heading), else of the plan file's name (or
  its `PRD-N` folder). It is created from the starting HEAD the first time;
  a later run finds it and goes on there (switching to it if needed). The
  branch the person was on is never moved: the run's commits land on the run
  branch only.
- `branch = "current"`: commit on whatever is checked out (the old way).
- any other value: that branch name, created or resumed the same way.
- A dirty tree (a change outside `.ralph/`, untracked files included) stops
  the run before anything happens, with the list of files, unless
  `--allow-dirty`: the agent's commits must not carry the person's work.

Also the commit's diffstat for the iteration's event (the report shows it).
"""
from __future__ import annotations

import hashlib
import json
import os
import re

from ralph.run.git import run as run_git
from ralph.run.proc import git

AUTO = "auto"
CURRENT = "current"
PREFIX = "ralph/"
SHOWN_DIRTY = 20  # files named in the refusal; the rest are counted
MAX_SLUG = 60
NOTHING_LEFT = {"files": 0, "digest": ""}  # no earlier run left work in the tree
MAX_FINGERPRINT_FILES = 5000


class BranchError(Exception):
    """The run cannot start on its branch: why, for the person."""


class RunBranch:
    """Which branch the run commits on, and how it came to be checked out."""

    __slots__ = ("name", "action", "previous", "base")

    def __init__(self, name: str, action: str, previous: str, base: str) -> None:
        self.name = name  # "" on a detached HEAD with branch = "current"
        self.action = action  # "created", "resumed", "current"
        self.previous = previous  # the branch checked out when the run started ("" when detached)
        self.base = base  # HEAD when the run started

    def event_fields(self) -> dict:
        return {"branch": self.name, "branch_action": self.action, "previous_branch": self.previous or None,
                "base": self.base}

    def describe(self) -> str:
        if self.action == "created":
            return f"on a new branch {self.name}, from {self.previous or self.base[:12]} (which stays where it is)"
        if self.action == "resumed":
            return f"on the run branch {self.name} (resumed)"
        return f"on the current branch {self.name}" if self.name else "on a detached HEAD"


# ---- the dirty tree ----


def status_entries(root: str, *pathspec: str) -> list[tuple[str, str]]:
    """(XY, path) of each change git status reports (paths relative to the
    repository's top; untracked files one by one). Raises BranchError."""
    done = run_git(root, ["status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all", "--", *pathspec])
    if not done.ok:
        raise BranchError(f"git status failed: {done.err.decode('utf-8', 'replace')[-500:]}")
    entries = done.out.decode("utf-8", "surrogateescape").split("\0")
    return [(entry[:2], entry[3:]) for entry in entries if len(entry) > 3]


def top_level(root: str) -> str:
    code, top = git(root, "rev-parse", "--show-toplevel")
    return top.strip() if code == 0 else root


def dirty_files(root: str, state_rel: str = ".ralph") -> list[str]:
    """Paths (relative to the repository's top) with changes git would commit
    or add: modified, staged, deleted, untracked; `.ralph/` left out."""
    skip = os.path.relpath(os.path.join(root, state_rel), top_level(root)).replace(os.sep, "/").rstrip("/") + "/"
    return [path for _, path in status_entries(root) if not (path + "/").startswith(skip)]


def fingerprint(root: str, files: list[str]) -> dict:
    """What these changed files hold now, as one digest: the next run
    accepts a tree that still holds exactly this (the previous run's own
    unfinished work)."""
    if len(files) > MAX_FINGERPRINT_FILES:  # not the few files of an unfinished story: the next run asks the person
        return {"files": len(files), "digest": ""}
    top = top_level(root)
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0")
        try:
            with open(os.path.join(top, path), "rb") as f:
                digest.update(hashlib.file_digest(f, "sha256").digest())
        except IsADirectoryError:
            digest.update(b"directory")
        except OSError:
            digest.update(b"absent")
    return {"files": len(files), "digest": digest.hexdigest()}


def refuse_dirty(files: list[str], left: dict | None = None) -> str:
    shown = "\n".join(f"  {path}" for path in files[:SHOWN_DIRTY])
    more = f"\n  ... and {len(files) - SHOWN_DIRTY} more" if len(files) > SHOWN_DIRTY else ""
    since = ""
    if left and left.get("files"):
        since = (f" (the last run left {left['files']} changed file(s) of its own unfinished work; "
                 "the tree no longer holds exactly that)")
    return (f"the working tree has {len(files)} uncommitted change(s) outside .ralph/{since}; the agent's commits would "
            f"carry them:\n{shown}{more}\ncommit or stash them first (git stash -u), or pass --allow-dirty to run anyway")


# ---- the branch's name ----


def slug(text: str) -> str:
    """A branch-name word of a title: lower case, [a-z0-9._-], dashes between words."""
    words = re.sub(r"[^a-z0-9._]+", "-", text.lower()).strip("-._")
    return re.sub(r"-{2,}", "-", words)[:MAX_SLUG].rstrip("-._")


def plan_names(plan_path: str) -> tuple[str, str]:
    """(prd.json's branchName, the plan's title), each "" when it has none."""
    try:
        with open(plan_path, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
    except OSError:
        return "", ""
    if plan_path.endswith(".json"):
        try:
            data = json.loads(text) if text else {}
        except ValueError:
            return "", ""
        if not isinstance(data, dict):
            return "", ""
        named = data.get("branchName")
        title = data.get("project") or data.get("description")
        return (named.strip() if isinstance(named, str) else "", title.strip() if isinstance(title, str) else "")
    for line in text.splitlines():
        if line.startswith("# "):
            return "", line[2:].strip()
    return "", ""


def plan_title(plan_path: str) -> str:
    return plan_names(plan_path)[1]


def plan_branch(plan_path: str) -> str:
    """`ralph/<name>` for the plan (see the module docstring)."""
    named, title = plan_names(plan_path)
    if named:
        return named
    name = slug(title)
    if not name:
        folder = os.path.basename(os.path.dirname(plan_path))
        stem = os.path.splitext(os.path.basename(plan_path))[0]
        name = slug(folder if folder.startswith("PRD-") else stem) or "run"
    return PREFIX + name


def wanted_branch(setting: str, plan_path: str) -> str | None:
    """The branch the run should commit on; None for the current one."""
    if setting == CURRENT:
        return None
    return plan_branch(plan_path) if setting == AUTO else setting


# ---- checking it out ----


def current_branch(root: str) -> str:
    code, out = git(root, "symbolic-ref", "-q", "--short", "HEAD")
    return out.strip() if code == 0 else ""


def branch_exists(root: str, name: str) -> bool:
    return git(root, "show-ref", "--verify", "-q", f"refs/heads/{name}")[0] == 0


def prepare(root: str, setting: str, plan_path: str, allow_dirty: bool, state_rel: str = ".ralph",
            accepted: dict | None = NOTHING_LEFT) -> RunBranch:
    """Refuse a dirty tree (unless allow_dirty), then check out the run
    branch: created from HEAD, or resumed. `accepted`: the fingerprint()
    of what the previous run left in the tree (a tree holding exactly that
    is not refused); None accepts any tree. Raises BranchError."""
    if not allow_dirty and accepted is not None:
        dirty = dirty_files(root, state_rel)
        if dirty:
            now = fingerprint(root, dirty)
            if not now["digest"] or now != {"files": accepted.get("files"), "digest": accepted.get("digest")}:
                raise BranchError(refuse_dirty(dirty, accepted))
    code, base = git(root, "rev-parse", "--verify", "-q", "HEAD")
    base = base.strip() if code == 0 else ""
    previous = current_branch(root)
    name = wanted_branch(setting, plan_path)
    if name is None:
        return RunBranch(previous, "current", previous, base)
    if git(root, "check-ref-format", "--branch", name)[0] != 0:
        raise BranchError(f"{name!r} is not a valid branch name (from [loop] branch or the plan's branchName); "
                          "set [loop] branch = \"ralph/<name>\" in ralph.toml")
    if name == previous:
        return RunBranch(name, "resumed", previous, base)
    if branch_exists(root, name):
        clear_state_copies(root, name, state_rel)
        code, out = git(root, "checkout", "-q", name)
        action = "resumed"
    else:
        code, out = git(root, "checkout", "-q", "-b", name)
        action = "created"
    if code != 0:
        raise BranchError(f"could not check out the run branch {name}: {out[-800:]}")
    return RunBranch(name, action, previous, base)


def clear_state_copies(root: str, name: str, state_rel: str) -> None:
    """Untracked files in `.ralph/` that the run branch has, byte for byte
    (`.ralph/.gitignore`, written again on the person's branch when the
    state directory is opened), would stop git from switching to it: they
    go, and the switch brings them back as they were. Any other file stays,
    and git says which one is in the way."""
    top = top_level(root)
    for code, path in status_entries(root, state_rel):
        if code != "??":
            continue
        found, blob = git(root, "rev-parse", "-q", "--verify", f"refs/heads/{name}:{path}")
        if found != 0:
            continue
        same, here = git(root, "hash-object", "--", os.path.join(top, path))
        if same == 0 and here.strip() == blob.strip():
            os.unlink(os.path.join(top, path))


# ---- what a commit changed ----


def diffstat(root: str, rev: str = "HEAD", limit: int = 50) -> dict:
    """Files, insertions and deletions of one commit (against its first
    parent), with up to `limit` paths; {} when git cannot say."""
    code, out = git(root, "show", "--no-renames", "--numstat", "--format=", "-z", rev)
    if code != 0:
        return {}
    files, added, deleted = [], 0, 0
    for entry in out.split("\0"):
        parts = entry.strip("\n").split("\t")
        if len(parts) != 3 or not parts[2]:
            continue
        plus, minus, path = parts
        binary = plus == "-"
        files.append({"path": path, "added": None if binary else int(plus), "deleted": None if binary else int(minus)})
        if not binary:
            added += int(plus)
            deleted += int(minus)
    return {"files": len(files), "insertions": added, "deletions": deleted, "paths": files[:limit]}
