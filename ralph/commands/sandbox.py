"""`ralph sandbox`: the Claude Code sandbox settings ralph wants, and why.

    ralph sandbox print     the settings layer as JSON (what ralph-loop passes with --settings)
    ralph sandbox explain   every entry of that layer with the reason for it, and whether it can run here
    ralph sandbox check     one sandboxed probe: exit 0 when bubblewrap works, 1 with the fix when not
"""
from __future__ import annotations

import json
import os
import sys

from ralph.config.reading import load_config
from ralph.config.schema import ConfigError
from ralph.sandbox import explained_layer, probe
from ralph.state.locations import config_path, project_root

USAGE = """\
usage: ralph sandbox print|explain|check [-C DIR]

  print     the Claude Code settings layer ralph wants for an unattended agent
            (JSON; merge it into a settings file or pass it with --settings)
  explain   each entry of that layer and why it is there, then whether the
            sandbox can run on this machine
  check     run one sandboxed probe; exit 0 when it works, 1 (with the fix) when not

The layer is built from the repository (its remotes, its .git directory) and
the [sandbox] table of ralph.toml; see docs/sandbox.md.
"""


def main(argv: list[str]) -> int:
    args = list(argv)
    directory = None
    if "-C" in args:
        at = args.index("-C")
        if at + 1 >= len(args):
            sys.stderr.write("ralph sandbox: -C needs a directory\n")
            return 2
        directory = args[at + 1]
        del args[at:at + 2]
    if len(args) != 1 or args[0] not in ("print", "explain", "check"):
        sys.stderr.write(USAGE)
        return 0 if args and args[0] in ("-h", "--help", "help") else 2
    action = args[0]
    if action == "check":
        ok, message = probe()
        (sys.stdout if ok else sys.stderr).write(f"sandbox {'ok' if ok else 'UNAVAILABLE'}: {message}\n")
        return 0 if ok else 1

    root = os.path.abspath(directory) if directory else project_root(os.getcwd())
    try:
        layer, reasons = explained_layer(root, load_config(root), config_path(root))
    except ConfigError as e:
        sys.stderr.write(f"ralph sandbox: {e}\n")
        return 2
    if action == "print":
        sys.stdout.write(json.dumps(layer, indent=2) + "\n")
        return 0
    return explain(root, reasons)


def explain(root: str, reasons: list[tuple[str, str, str]]) -> int:
    out = sys.stdout
    out.write(f"Claude Code sandbox settings for {root} (ralph sandbox print shows them as JSON)\n")
    current = None
    for number, (setting, value, why) in enumerate(reasons):
        if setting != current:
            out.write(f"\nsandbox.{setting}\n")
            current = setting
        out.write(f"  {value}\n")
        following = reasons[number + 1] if number + 1 < len(reasons) else None
        if following is None or following[0] != setting or following[2] != why:  # one reason per run of entries
            out.write(f"      {why}\n")
    ok, message = probe()
    out.write(f"\nOn this machine: {'the sandbox can run' if ok else 'the sandbox CANNOT run'}: {message}\n")
    out.write("Hooks run outside the sandbox; the guard (ralph explain CMD) stays the first line, "
              "the sandbox makes a missed disguise harmless.\n")
    return 0
