"""`ralph init`: scaffold a project for ralph-loop. Creates `.ralph/plan.md`
(one example story), `.ralph/PROMPT.md` (the default prompt template, to
edit), a commented `ralph.toml` showing every hook key, the hooks directory
`.ralph/hooks/` (`started`, `next_iteration`, `finished`, `custom/notify`,
copied from the packaged templates in ralph/data/hooks/) and `.ralph/.gitignore` (run state out of git, hooks in).
Never overwrites: an existing file is left alone and reported.

ralph.toml's defaults are not typed in its template: a `#default
<table>.<key>` line of ralph/data/init/ralph.toml becomes the key's help and
its default as the schema declares it (ralph.config.registry), so the file
cannot show a default the code does not have.

What init creates must be committed before the first run: ralph-loop refuses
an uncommitted ralph.toml, and its commit of the first story takes in
everything of `.ralph/` git does not ignore. So init commits the files it
created as one commit of their own (`--commit`, or yes when asked on a
terminal), with `git commit -- <those paths>`: whatever else is staged or
changed stays as it was. Otherwise, or when git cannot, it prints the one
command that does.

`--notify slack|discord|ntfy` adds a ready webhook preset (ralph/data/notify/)
to ralph.toml: a session_end hook that posts the run's report in a few lines.
It is appended (temp file + rename), once: a ralph.toml that has the
preset's hook already is left as it is."""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import textwrap
from typing import TextIO

from ralph.config.registry import tables
from ralph.config.schema import Key
from ralph.run.paths import GITIGNORE
from ralph.run.proc import git
from ralph.state.files import atomic_write
from ralph.state.locations import project_root

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


# ---- ralph.toml's defaults, from the schema ----

DEFAULT_LINE = "#default "
HELP_WIDTH = 88


def declared_keys() -> dict[str, Key]:
    """"<table>.<key>" -> its declaration, for every table ralph.toml may hold
    (the first declaration of a name: [[hooks.<point>]]'s common keys)."""
    keys: dict[str, Key] = {}
    for table in tables():
        for key, declared in table.keys.items():
            keys.setdefault(f"{table.name}.{key}", declared)
    return keys


def toml_value(value: object) -> str:
    """`value` as TOML writes it (the kinds a default takes)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {toml_value(item)}" for key, item in value.items()) + " }" if value else "{}"
    raise TypeError(f"no TOML form for the default {value!r}")


def default_lines(name: str, keys: dict[str, Key]) -> list[str]:
    """A `#default <table>.<key>` line of the template as the file shows it:
    the key's help, then the key commented out with its default (or that it
    is unset by default)."""
    declared = keys.get(name)
    if declared is None:
        raise KeyError(f"ralph/data/init/ralph.toml: {DEFAULT_LINE}{name}: no such key in ralph's config schema")
    key = name.rpartition(".")[2]
    lines = textwrap.wrap(declared.help, HELP_WIDTH - 2, initial_indent="# ", subsequent_indent="# ") if declared.help else []
    if declared.default is None:
        lines.append(f"# {key}: unset by default")
    else:
        lines.append(f"# {key} = {toml_value(declared.default)}")
    return lines


def render_config(template: str) -> str:
    """The template with each `#default <table>.<key>` line replaced by default_lines()."""
    keys = declared_keys()
    out: list[str] = []
    for line in template.splitlines():
        if line.startswith(DEFAULT_LINE):
            if out and out[-1] and not out[-1].startswith("["):
                out.append("")  # one key's lines apart from the one before
            out += default_lines(line[len(DEFAULT_LINE):].strip(), keys)
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def config_text() -> bytes:
    with open(os.path.join(DATA, "init", "ralph.toml"), encoding="utf-8") as f:
        return render_config(f.read()).encode("utf-8")


def scaffold(root: str) -> tuple[list[str], list[str]]:
    """(created, kept) relative paths."""
    created, kept = [], []
    # run state stays out of git, the plan, prompt and hooks go in
    for rel, source, executable in ((".ralph/.gitignore", None, False), *FILES):
        if source is None:
            data = GITIGNORE.encode()
        elif rel == "ralph.toml":
            data = config_text()
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


# ---- committing what init created ----

COMMIT_MESSAGE = "ralph init: the plan, prompt, hooks and ralph.toml of ralph-loop"
# git's marks of an operation in progress (a commit now would land inside it)
IN_PROGRESS = (("MERGE_HEAD", "a merge"), ("CHERRY_PICK_HEAD", "a cherry-pick"), ("REVERT_HEAD", "a revert"),
               ("rebase-merge", "a rebase"), ("rebase-apply", "a rebase or `git am`"), ("BISECT_LOG", "a bisect"))


def in_git(root: str) -> bool:
    return git(root, "rev-parse", "--show-toplevel")[0] == 0


def untracked(root: str, paths: list[str]) -> list[str]:
    """Those of `paths` git would add: untracked and not ignored (in their order)."""
    code, out = git(root, "ls-files", "-z", "--others", "--exclude-standard", "--", *paths)
    found = set(out.split("\0")) if code == 0 else set()
    return [path for path in paths if path in found]


def why_not_commit(root: str) -> str:
    """Why init must not commit here now ("" when it may): an operation in
    progress, or no branch checked out."""
    for name, what in IN_PROGRESS:
        code, path = git(root, "rev-parse", "--git-path", name)
        if code == 0 and os.path.exists(os.path.join(root, path)):
            return f"{what} is in progress"
    if git(root, "symbolic-ref", "-q", "HEAD")[0] != 0:
        return "HEAD is detached (no branch checked out)"
    return ""


def commit_created(root: str, paths: list[str]) -> tuple[bool, str]:
    """Commit `paths` (untracked until now) as one commit of their own.
    `git commit -- <paths>` commits only them: what else is staged or
    changed stays as it was. (True, the commit's short hash) or (False,
    git's message), the paths unstaged again."""
    code, out = git(root, "add", "--", *paths)
    if code == 0:
        code, out = git(root, "commit", "-q", "-m", COMMIT_MESSAGE, "--", *paths)
        if code == 0:
            return True, git(root, "rev-parse", "--short", "HEAD")[1]
    git(root, "rm", "-q", "--cached", "--ignore-unmatch", "--", *paths)
    return False, out


def commit_command(root: str, paths: list[str]) -> str:
    """The one shell command that commits `paths` as init would, from the current directory."""
    here = os.path.abspath(os.getcwd())
    prefix = "git" if os.path.realpath(here) == os.path.realpath(root) else f"git -C {shlex.quote(root)}"
    quoted = " ".join(shlex.quote(path) for path in paths)
    return f"{prefix} add -- {quoted} && {prefix} commit -m {shlex.quote(COMMIT_MESSAGE)} -- {quoted}"


def ask(question: str) -> bool:
    try:
        return input(question).strip().lower() in ("", "y", "yes")
    except EOFError:
        return False


def commit_step(root: str, created: list[str], wanted: bool | None, out: TextIO) -> int:
    """Commit what init created (wanted: --commit / --no-commit; None: ask on
    a terminal, else do not), or print the command that does. 1 when
    --commit was asked and could not be done."""
    if not in_git(root):
        out.write("note: not a git repository: ralph-loop works in one. `git init`, then commit these files: "
                  f"{commit_command(root, created)}\n")
        return 1 if wanted else 0
    paths = untracked(root, created)
    if not paths:
        return 0
    reason = why_not_commit(root)
    if wanted is None and not reason and sys.stdin.isatty() and sys.stdout.isatty():
        wanted = ask(f"Commit these {len(paths)} file(s) as one commit of their own (nothing else you changed goes in)? [Y/n] ")
    if wanted and not reason:
        done, said = commit_created(root, paths)
        if done:
            out.write(f"committed the {len(paths)} file(s) as {said} \"{COMMIT_MESSAGE}\"; "
                      "anything else you had changed or staged is as it was\n")
            return 0
        lines = [line for line in said.splitlines() if line.strip()][-8:]
        out.write("git could not commit them:\n    " + "\n    ".join(lines) + "\n")
    elif reason:
        out.write(f"not committed: {reason}.\n")
    else:
        out.write("not committed (`ralph init --commit` commits them).\n")
    out.write(f"{why_commit(paths)} Commit them first, as one commit of their own:\n  {commit_command(root, paths)}\n")
    return 1 if wanted else 0


def why_commit(paths: list[str]) -> str:
    """What the first run does with these files left uncommitted."""
    sweeps = "its first commit would take in the new files of .ralph/ with the agent's work"
    if "ralph.toml" in paths:
        return f"ralph-loop refuses to start while ralph.toml is uncommitted, and {sweeps}."
    return f"ralph-loop's {sweeps}."


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ralph init", description=__doc__.split("\n\n")[0])
    parser.add_argument("-C", "--directory", metavar="DIR", help="project directory (default: the git toplevel of the current one)")
    parser.add_argument("--notify", choices=sorted(NOTIFY), help="add a webhook preset that posts the run's report when a run ends")
    committing = parser.add_mutually_exclusive_group()
    committing.add_argument("--commit", dest="commit", action="store_true", default=None,
                            help="commit the files init creates as one commit of their own (asked on a terminal)")
    committing.add_argument("--no-commit", dest="commit", action="store_false",
                            help="leave them uncommitted and print the command that commits them")
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
    status = commit_step(root, created, args.commit, out)
    if "ralph.toml" in kept and ".ralph/PROMPT.md" in created:
        out.write("note: your ralph.toml was kept; to use .ralph/PROMPT.md set prompt = \".ralph/PROMPT.md\" in its [loop] table\n")
    out.write("next: write your stories in .ralph/plan.md and your test command as verify_command in ralph.toml (commit "
              "them), check with `ralph-loop --dry-run` and `ralph hooks list`, then run `ralph-loop`\n")
    return status
