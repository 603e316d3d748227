"""What a rollback keeps: the loop's and the person's records in the tree.

A rollback undoes the agent's changes since the checkpoint, nothing else.
The plan and progress.md are committed files, so the reset would take them
back to the checkpoint too, though while an iteration runs the loop writes
its records there (a story the agent reported blocked, with its reason and
question; notes) and a person may edit the plan. So each is read just
before the reset and put back after it, with one change: the agent's claim
on its own story. A story it marked done goes back to its state at the
checkpoint (todo); a blocked mark stays until a person answers it.

On a real conflict both are kept and the result says so:
- a plan that no longer reads as a plan: the checkpoint's plan is put back
  (the loop must read one), the file as it was is in the rollback ref;
- a progress.md whose earlier lines were removed or rewritten: the file as
  it was, with the checkpoint's lines it lacks appended under a heading.
"""
from __future__ import annotations

import os
import stat

from ralph.plan import plan_format
from ralph.rollback.git import Repo
from ralph.state.files import atomic_write
from ralph.story import PlanError

LOST_LINES_HEADING = "\n## Lines of the checkpoint's progress.md missing before the rollback of {story} (kept by ralph)\n\n"


class KeptFiles:
    """The plan and progress file a rollback leaves as they were, and the
    story whose state the rollback may take back (paths: absolute, or
    relative to the repository's top)."""

    __slots__ = ("plan", "progress", "story")

    def __init__(self, plan: str | None, progress: str | None, story: str) -> None:
        self.plan = plan
        self.progress = progress
        self.story = story


class Before:
    """A kept file as it was just before the reset: its path in the tree,
    its bytes (None: it was not there) and permission bits."""

    __slots__ = ("path", "data", "perms")

    def __init__(self, path: str, data: bytes | None, perms: int) -> None:
        self.path = path
        self.data = data
        self.perms = perms


def read_before(repo: Repo, kept: KeptFiles) -> dict[str, Before]:
    """'plan' / 'progress' -> the file before the reset; a file outside the
    repository (which no reset touches) or a symbolic link is left out."""
    found = {}
    top = os.path.realpath(repo.top)
    for name in ("plan", "progress"):
        path = getattr(kept, name)
        if not path:
            continue
        full = os.path.join(top, path) if not os.path.isabs(path) else path
        full = os.path.join(os.path.realpath(os.path.dirname(full)), os.path.basename(full))
        if os.path.relpath(full, top).startswith(".."):
            continue
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            found[name] = Before(full, None, 0o644)
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        with open(full, "rb") as f:
            found[name] = Before(full, f.read(), stat.S_IMODE(st.st_mode))
    return found


def put_back(repo: Repo, before: dict[str, Before], story: str, ref: str, checkpoint: str) -> tuple[list[str], list[str]]:
    """After the reset: the plan and progress as they were (see the module's
    docstring). -> (the files put back, the conflicts met, as sentences)."""
    kept: list[str] = []
    conflicts: list[str] = []
    for name, old in before.items():
        if old.data is None:
            continue  # not there before the reset: what the reset left stays
        now = _read(old.path)
        shown = os.path.relpath(old.path, os.path.realpath(repo.top))
        base = _at_checkpoint(repo, checkpoint, shown)
        if name == "plan":
            wanted, conflict = _plan(old.path, old.data, now, base, story)
            if conflict:
                conflicts.append(f"{shown}: {conflict}; the checkpoint's plan is back, the plan as it was before the rollback "
                                 f"is in {ref} (`git show {ref}:{shown}`)")
        else:
            wanted, conflict = _progress(old.data, base, story)
            if conflict:
                conflicts.append(f"{shown}: {conflict}")
        if wanted is not None and wanted != now:
            atomic_write(old.path, wanted, mode=old.perms)
            kept.append(shown)
    return kept, conflicts


def _plan(path: str, before: bytes, now: bytes | None, base: bytes | None, story: str) -> tuple[bytes | None, str]:
    """The plan to keep: as it was before, the story's done mark undone.
    (None, why) when it no longer reads as a plan and what the reset left stays."""
    fmt = plan_format(path)
    text = before.decode("utf-8", "surrogateescape")
    try:
        states = {s.id: s.state for s in fmt.parse(text, path)}
    except PlanError as e:
        states, problem = {}, str(e)[:200]
    else:
        problem = "" if states else "it has no stories"
    if problem:
        if now is None:
            return before, ""  # nothing else to put there
        return None, f"it no longer reads as a plan ({problem})"
    if states.get(story) != "done":
        return before, ""
    was = "todo"  # an iteration begins on a story that is not done
    if base is not None:
        try:
            was = next((s.state for s in fmt.parse(base.decode("utf-8", "surrogateescape"), path) if s.id == story), "todo")
        except PlanError:
            pass
    if was == "done":
        return before, ""
    return fmt.rewrite_state(text, story, was, path).encode("utf-8", "surrogateescape"), ""


def _progress(before: bytes, base: bytes | None, story: str) -> tuple[bytes, str]:
    """progress.md as it was; the checkpoint's lines it lacks appended."""
    if base is None or before.startswith(base):
        return before, ""
    have = set(before.splitlines())
    lost = [line for line in base.splitlines() if line.strip() and line not in have]
    if not lost:
        return before, ""
    tail = b"" if before.endswith(b"\n") or not before else b"\n"
    heading = LOST_LINES_HEADING.format(story=story).encode()
    return (before + tail + heading + b"\n".join(lost) + b"\n",
            f"{len(lost)} line(s) of the checkpoint's file were missing before the rollback; both are kept: "
            "the file as it was, those lines appended under a heading")


def _at_checkpoint(repo: Repo, checkpoint: str, path: str) -> bytes | None:
    """The file at the checkpoint as a checkout writes it (git's filters and
    line endings applied, as the file before the reset has them); None when
    the checkpoint has no such file."""
    spec = f"{checkpoint}:{path}"
    if repo.run(["cat-file", "-t", spec], ok=(0, 128)).strip() != b"blob":
        return None
    return repo.run(["cat-file", "--filters", spec])


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
