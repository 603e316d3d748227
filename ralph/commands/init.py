"""`ralph init`: scaffold a project for ralph-loop. Creates `.ralph/plan.md`
(one example story), `.ralph/PROMPT.md` (the default prompt template, to
edit), a commented `ralph.toml` showing every hook key, the hooks directory
`.ralph/hooks/` (`started`, `next_iteration`, `finished`, `custom/notify`,
copied from the packaged templates in ralph/data/hooks/) and `.ralph/.gitignore` (run state out of git, hooks in).
Never overwrites: an existing file is left alone and reported.

`--notify slack|discord|ntfy` adds a ready webhook preset (ralph/data/notify/)
to ralph.toml: a session_end hook that posts the run's report in a few lines.
It is appended (temp file + rename), once: a ralph.toml that has the
preset's hook already is left as it is."""
from __future__ import annotations

import argparse
import os
import sys

from ralph.state.files import atomic_write
from ralph.state.locations import project_root

from ralph.run.paths import GITIGNORE

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


# --notify: service -> (the preset's file in ralph/data/notify/, the variable the person sets)
NOTIFY = {"slack": ("slack.toml", "SLACK_WEBHOOK_URL"), "discord": ("discord.toml", "DISCORD_WEBHOOK_URL"),
          "ntfy": ("ntfy.toml", "NTFY_TOPIC")}


def add_notify(root: str, service: str) -> bool:
    """Append the service's preset to ralph.toml; False when it is there already."""
    source, _ = NOTIFY[service]
    with open(os.path.join(DATA, "notify", source), encoding="utf-8") as f:
        preset = f.read()
    path = os.path.join(root, "ralph.toml")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if f'name = "notify-{service}"' in text:
        return False
    atomic_write(path, text + ("" if text.endswith("\n") or not text else "\n") + preset)
    return True


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ralph init", description=__doc__.split("\n\n")[0])
    parser.add_argument("-C", "--directory", metavar="DIR", help="project directory (default: the git toplevel of the current one)")
    parser.add_argument("--notify", choices=sorted(NOTIFY), help="add a webhook preset that posts the run's report when a run ends")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.directory) if args.directory else project_root(os.getcwd())
    try:
        created, kept = scaffold(root)
        notified = add_notify(root, args.notify) if args.notify else None
    except OSError as e:
        sys.stderr.write(f"ralph init: cannot write in {root}: {e}\n")
        return 1
    out = sys.stdout
    for rel in created:
        out.write(f"created  {rel}\n")
    for rel in kept:
        out.write(f"kept     {rel} (exists; not overwritten)\n")
    if notified is not None:
        variable = NOTIFY[args.notify][1]
        if notified:
            out.write(f"added    the {args.notify} notification to ralph.toml ([[hooks.session_end]] notify-{args.notify}); "
                      f"set {variable} in the environment ralph-loop runs in\n")
        else:
            out.write(f"kept     ralph.toml (it has the {args.notify} notification already)\n")
    if not created:
        if not notified:
            out.write("nothing to do: every file is there already\n")
        return 0
    if "ralph.toml" in kept and ".ralph/PROMPT.md" in created:
        out.write("note: your ralph.toml was kept; to use .ralph/PROMPT.md set prompt = \".ralph/PROMPT.md\" in its [loop] table\n")
    out.write("next: write your stories in .ralph/plan.md, check with `ralph-loop --dry-run` and `ralph hooks list`, then run `ralph-loop`\n")
    return 0
