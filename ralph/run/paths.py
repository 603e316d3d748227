"""Where the loop finds its plan and writes its files (all under `.ralph/`)."""
from __future__ import annotations

import os

from ralph.state.files import atomic_write
from ralph.state.locations import STATE_GITIGNORE as GITIGNORE  # the one .ralph/.gitignore

PLAN_CANDIDATES = ("plan.md", "prd.json")
# A multi-PRD folder's name, as this regular expression defines it; read by
# hand (prd_number(); tests/test_loop_units.py holds it to the expression):
# `ralph-loop --dry-run` finds the plan through here, and importing `re` would
# cost it more than the finding.
PRD_DIR = r"^PRD-(\d+)$"
EVENTS_FILE = "events.jsonl"
ABORT_FILE = "abort"
LOGS_DIR = "logs"


def discover_plan(state_dir: str) -> str | None:
    """`.ralph/plan.md`, else `.ralph/prd.json`, else the highest-numbered
    `.ralph/PRD-N/` folder holding one (the layout of multi-PRD projects)."""
    for name in PLAN_CANDIDATES:
        path = os.path.join(state_dir, name)
        if os.path.isfile(path):
            return path
    numbered: list[tuple[int, str]] = []
    try:
        entries = os.listdir(state_dir)
    except OSError:
        return None
    for entry in entries:
        number = prd_number(entry)
        if number is not None:
            numbered.append((number, entry))
    for _, entry in sorted(numbered, reverse=True):
        for name in PLAN_CANDIDATES:
            path = os.path.join(state_dir, entry, name)
            if os.path.isfile(path):
                return path
    return None


def prd_number(name: str) -> int | None:
    """The number in a `PRD-<digits>` name (PRD_DIR's group 1), None when it does not match."""
    if name.endswith("\n"):  # `$` also matches before a final newline
        name = name[:-1]
    digits = name[4:]
    # `\d` is a Unicode decimal digit: str.isdecimal()
    return int(digits) if name.startswith("PRD-") and digits.isdecimal() else None


def progress_path_for(plan_path: str) -> str:
    return os.path.join(os.path.dirname(plan_path), "progress.md")


def relative(root: str, path: str) -> str:
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def ensure_gitignore(root: str, state_dir: str) -> None:
    """Keep run state out of `git add -A`; plans and progress stay committed."""
    path = os.path.join(state_dir, ".gitignore")
    if not os.path.exists(path) and os.path.realpath(state_dir) == os.path.realpath(os.path.join(root, ".ralph")):
        atomic_write(path, GITIGNORE)


# where a run's story lives when run.json names no source
DEFAULT_PLAN_FILES = (".ralph/plan.md", ".ralph/prd.json")


def plan_file(root: str, source: str) -> str | None:
    """The plan file of a loop run's story: its `source`, else the default plan files."""
    for candidate in (source,) if source else DEFAULT_PLAN_FILES:
        path = candidate if os.path.isabs(candidate) else os.path.join(root, candidate)
        if os.path.exists(path):
            return path
    return None
