"""`ralph init`: scaffold a project for ralph-loop. Creates `.ralph/plan.md`
(one example story), `.ralph/PROMPT.md` (the default prompt template, to
edit), a commented `ralph.toml` showing every hook key, the hooks directory
`.ralph/hooks/` (`started`, `next_iteration`, `finished`, `custom/notify`,
copied from the packaged templates in ralph/data/hooks/) and `.ralph/.gitignore` (run state out of git, hooks in).
Never overwrites: an existing file is left alone and reported."""
from __future__ import annotations

import argparse
import os
import sys

from ralph.state.locations import project_root

from ralph.loop.paths import GITIGNORE

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")

# (destination relative to the project root, packaged source relative to ralph/data, executable)
FILES: tuple[tuple[str, str, bool], ...] = (
    (".ralph/plan.md", "init/plan.md", False),
    (".ralph/PROMPT.md", "PROMPT.md", False),
    ("ralph.toml", "init/ralph.toml", False),
    (".ralph/hooks/started", "hooks/started", True),
    (".ralph/hooks/next_iteration", "hooks/next_iteration", True),
    (".ralph/hooks/finished", "hooks/finished", True),
    (".ralph/hooks/custom/notify", "hooks/custom/notify", True),
)


def create(path: str, data: bytes, executable: bool) -> bool:
    """Write `path` unless something is there already (O_EXCL: never overwrite,
    not even a file created a moment ago). True when created."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, 0o755 if executable else 0o644)
    try:
        os.link(tmp, path)  # fails if path exists: atomic create-if-absent
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)
    return True


def scaffold(root: str) -> tuple[list[str], list[str]]:
    """(created, kept) relative paths."""
    created, kept = [], []
    # run state stays out of git, the plan, prompt and hooks go in
    for rel, source, executable in ((".ralph/.gitignore", None, False), *FILES):
        if source is None:
            data = GITIGNORE.encode()
        else:
            with open(os.path.join(DATA, source), "rb") as f:
                data = f.read()
        path = os.path.join(root, rel)
        if os.path.lexists(path) or not create(path, data, executable):
            kept.append(rel)
        else:
            created.append(rel)
    return created, kept


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ralph init", description=__doc__.split("\n\n")[0])
    parser.add_argument("-C", "--directory", metavar="DIR", help="project directory (default: the git toplevel of the current one)")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.directory) if args.directory else project_root(os.getcwd())
    try:
        created, kept = scaffold(root)
    except OSError as e:
        sys.stderr.write(f"ralph init: cannot write in {root}: {e}\n")
        return 1
    out = sys.stdout
    for rel in created:
        out.write(f"created  {rel}\n")
    for rel in kept:
        out.write(f"kept     {rel} (exists; not overwritten)\n")
    if not created:
        out.write("nothing to do: every file is there already\n")
        return 0
    if "ralph.toml" in kept and ".ralph/PROMPT.md" in created:
        out.write("note: your ralph.toml was kept; to use .ralph/PROMPT.md set prompt = \".ralph/PROMPT.md\" in its [loop] table\n")
    out.write("next: write your stories in .ralph/plan.md, check with `ralph-loop --dry-run` and `ralph hooks list`, then run `ralph-loop`\n")
    return 0
