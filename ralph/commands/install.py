"""`ralph install` / `ralph uninstall`: put ralph's hook entries into a
settings file Claude Code really reads, or take exactly them out again.

The client reads hooks from (PROTOCOL.md §5, later wins for scalars, hook
arrays merge): `~/.claude/settings.json` (user; `$CLAUDE_CONFIG_DIR` moves
`~/.claude`), `.claude/settings.json` (project), `.claude/settings.local.json`
(local), `--settings`, managed settings, and plugins' `hooks/hooks.json`. It
does NOT read `~/.claude/settings.local.json`: hooks there never fire.

A merge keeps every other key and every other tool's hooks; our entries are
recognised by their command (`<something>/ralph <hook subcommand>` or the
`ralph-hook` launcher), wherever they sit, so a second run changes nothing
and an old or misplaced entry is replaced, not duplicated. Nothing is written
on bad input; every write is a temp file + rename after a timestamped backup.

Only the events the installed client knows are written (`claude --version`,
ralph.claude.protocol's table): a settings file naming an event a client
before 2.1.101 does not know makes that client run none of its hooks.

Edits keep the file's own text: ralph's entries go in and out with every
other byte as it was. Install remembers what it did beside the file
(`<file>.ralph-install.json`: whether it created the file, the backup of the
original, what it wrote), for ralph.commands.uninstall.

The entry table (HOOK_ENTRIES) is the one place our wiring is defined:
settings.example.json, hooks/hooks.json and the doctor follow it (tests keep
them in step).
"""
from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import shlex
import shutil
import sys
import time
from importlib import resources

from ralph import __version__
from ralph.claude.protocol import (
    CLIENT_EVENTS,
    EVENT_SINCE,
    HOOK_ENTRIES,
    NO_MATCHER_EVENTS,
    SUBCOMMANDS,
    client_release,
    events_of,
    release_text,
    skips_unknown_events,
)
from ralph.claude.settings_text import edited
from ralph.config.reading import load_config
from ralph.config.schema import ConfigError
from ralph.doctor.installed_client import client_version, find_client, missing_for, unknown_events, what_is_missing
from ralph.mcp import install as mcp_install
from ralph.mcp.launch import INSTALL_HINT as MCP_INSTALL_HINT
from ralph.mcp.launch import sdk_installed
from ralph.redaction import redact
from ralph.sandbox import merge_settings, probe, settings_layer
from ralph.state.files import atomic_write
from ralph.state.locations import config_path, ensure_state_gitignore, project_root

# what each event's matcher must let through for our handler to do its job
REQUIRED_TOOLS = {event: tuple(m.split("|")) for event, (m, _, _, _) in HOOK_ENTRIES.items() if m}

HOOK_SUBCOMMANDS = frozenset(SUBCOMMANDS)
LAUNCHER_NAME = "ralph-hook"
SCOPES = ("user", "project", "local")


class SettingsError(Exception):
    """A settings file we must not touch; the message names it (and the line)."""


# ---- where the client looks ---------------------------------------------------


def claude_dir(environ: dict[str, str] | os._Environ[str] = os.environ) -> str:
    return environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def settings_path(scope: str, root: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> str:
    if scope == "user":
        return os.path.join(claude_dir(environ), "settings.json")
    if scope == "project":
        return os.path.join(root, ".claude", "settings.json")
    if scope == "local":
        return os.path.join(root, ".claude", "settings.local.json")
    raise ValueError(scope)


MANAGED_SETTINGS = ("/Library/Application Support/ClaudeCode/managed-settings.json" if sys.platform == "darwin"
                    else "/etc/claude-code/managed-settings.json")


def settings_files(root: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> list[tuple[str, str, bool]]:
    """(label, path, read by the client) for every file that matters, in the
    client's precedence order, then the ones it ignores. A path listed twice
    (a project at ~, where .claude/ is also the user's dir) is listed once."""
    seen: set[str] = set()
    return [entry for entry in _settings_files(root, environ) if not (os.path.realpath(entry[1]) in seen or seen.add(os.path.realpath(entry[1])))]


def _settings_files(root: str, environ: dict[str, str] | os._Environ[str]) -> list[tuple[str, str, bool]]:
    return [
        ("user", settings_path("user", root, environ), True),
        ("project", settings_path("project", root, environ), True),
        ("local", settings_path("local", root, environ), True),
        ("managed", MANAGED_SETTINGS, True),
        ("user local (NOT read by Claude Code)", os.path.join(claude_dir(environ), "settings.local.json"), False),
    ]


# ---- reading and recognising ------------------------------------------------------


def read_settings(path: str) -> tuple[dict, str | None]:
    """(parsed object, original text); ({}, None) when the file does not exist.
    Raises SettingsError naming the file (and line) when it cannot be used."""
    try:
        with open(path, encoding="utf-8", newline="") as f:  # the text as it is: CRLF stays CRLF
            text = f.read()
    except FileNotFoundError:
        return {}, None
    except UnicodeDecodeError as e:
        raise SettingsError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); nothing was written") from None
    except OSError as e:
        raise SettingsError(f"{path}: cannot read: {e.strerror}; nothing was written") from None
    if not without_bom(text).strip():
        return {}, text
    try:
        data = json_of(text)
    except json.JSONDecodeError as e:
        raise SettingsError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}; fix the file (or move it away) and run again; nothing was written") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}:1: the settings file must hold a JSON object, not a {type(data).__name__}; nothing was written")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise SettingsError(f"{path}: \"hooks\" must be an object of event -> list; nothing was written")
    for event, groups in (hooks or {}).items():
        if not isinstance(groups, list):
            raise SettingsError(f"{path}: \"hooks\".{event} must be a list of matcher groups; nothing was written")
    return data, text


def is_ours(handler: object) -> bool:
    """A handler that runs ralph's hook dispatcher (or its launcher)."""
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    words = without_interpreter(words)
    if not words:
        return False
    program = os.path.basename(words[0].replace("${CLAUDE_PLUGIN_ROOT}", "").replace("$CLAUDE_PLUGIN_ROOT", ""))
    if program == LAUNCHER_NAME:
        return True
    return program in ("ralph", "ralph.exe") and len(words) > 1 and words[1] in HOOK_SUBCOMMANDS


def without_interpreter(words: list[str]) -> list[str]:
    """`python3 -IS /x/bin/ralph pre-tool` -> `/x/bin/ralph pre-tool`."""
    if words and os.path.basename(words[0]).startswith("python"):
        words = words[1:]
        while words and words[0].startswith("-"):
            words = words[1:]
    return words


def our_entries(data: dict) -> list[tuple[str, object, dict]]:
    """(event key as written, matcher, handler) for each of our handlers."""
    found = []
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            if not isinstance(group, dict):
                continue
            for handler in group.get("hooks") or []:
                if is_ours(handler):
                    found.append((event, group.get("matcher"), handler))
    return found


# ---- the client's matcher rules (PROTOCOL.md §5) --------------------------------


def matcher_matches(matcher: object, tool: str) -> bool:
    """Does the client run a hook with this matcher for `tool`?"""
    if matcher is None or matcher in ("", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    if re.fullmatch(r"[A-Za-z0-9_|, -]+", matcher):
        names = {part.strip() for part in re.split(r"[|,]", matcher)}
        return tool in names
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False  # the client skips a hook whose matcher does not compile


# ---- building ------------------------------------------------------------------------


def entry_point(binary: str | None = None) -> str:
    """The absolute path of the `ralph` the hooks should run."""
    if binary:
        return os.path.abspath(os.path.expanduser(binary))
    if getattr(sys, "frozen", False):
        return os.path.abspath(sys.executable)
    invoked = sys.argv[0] if sys.argv else ""
    if os.path.basename(invoked) in ("ralph", "ralph-loop") and os.path.isfile(invoked):
        return os.path.join(os.path.dirname(os.path.abspath(invoked)), "ralph")
    beside = os.path.join(os.path.dirname(sys.executable), "ralph")
    if os.path.isfile(beside):
        return beside
    found = shutil.which("ralph")
    return os.path.abspath(found) if found else beside


def python_of(script: str) -> str | None:
    """The interpreter of a Python script (its #! line), None for a binary."""
    try:
        with open(script, "rb") as f:
            first = f.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!") or b"python" not in first:
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
        found = shutil.which(words[0]) if words else None
        return found or sys.executable
    return words[0] if words and os.path.isabs(words[0]) else sys.executable


def command_prefix(program: str) -> str:
    """What a hook command starts with. A Python `ralph` runs as
    `<python> -IS <ralph>`: without site, start-up costs less than a bare
    `python -I -c pass` (pip drops flags from #! lines, so they go here)."""
    if program.startswith("${"):
        # "${CLAUDE_PLUGIN_ROOT}"/hooks/ralph-hook: the shell expands it, spaces and all
        variable, rest = program.split("}", 1)
        return f'"{variable}}}"{rest}'
    python = python_of(program) if os.path.isabs(program) else None
    if python:
        return f"{shlex.quote(python)} -IS {shlex.quote(program)}"
    return shlex.quote(program)


def hook_command(program: str, subcommand: str) -> str:
    return f"{command_prefix(program)} {subcommand}"


def wanted_hooks(program: str, events: frozenset[str] | None = None) -> dict[str, list[dict]]:
    """Our hook groups, event -> [group], running `program <subcommand>`;
    only for `events` (the client's) when given."""
    wanted: dict[str, list[dict]] = {}
    for event, (matcher, subcommand, timeout, on_failure) in HOOK_ENTRIES.items():
        if events is not None and event not in events:
            continue
        handler: dict = {"type": "command", "command": hook_command(program, subcommand), "timeout": timeout}
        if on_failure:
            handler["onFailure"] = on_failure
        group: dict = {"matcher": matcher} if matcher else {}
        group["hooks"] = [handler]
        wanted[event] = [group]
    return wanted


def without_ours(data: dict) -> dict:
    """A copy of `data` minus our handlers (and the groups and event lists
    that held nothing else); everything else untouched, in its order."""
    result = dict(data)
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return result
    new_hooks: dict = {}
    for event, groups in hooks.items():
        kept_groups = []
        touched = False
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                kept = [h for h in group["hooks"] if not is_ours(h)]
                if len(kept) != len(group["hooks"]):
                    touched = True
                    if not kept:
                        continue
                    group = dict(group, hooks=kept)
            kept_groups.append(group)
        if kept_groups or not touched:
            new_hooks[event] = kept_groups
    if new_hooks or not our_entries(data):
        result["hooks"] = new_hooks
    else:
        del result["hooks"]
    return result


def merged(data: dict, program: str, events: frozenset[str] | None = None) -> dict:
    result = without_ours(data)
    hooks = dict(result.get("hooks") or {})
    for event, groups in wanted_hooks(program, events).items():
        hooks[event] = [*hooks.get(event, []), *groups]
    result["hooks"] = hooks
    return result


def render(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


BOM = "\ufeff"


def without_bom(text: str) -> str:
    return text[1:] if text.startswith(BOM) else text


def json_of(text: str) -> object:
    """A settings file's JSON; a byte order mark before it is allowed (and kept in the text)."""
    return json.loads(without_bom(text))


def settings_text(old: str | None, wanted: dict, add: dict[str, list[dict]]) -> str:
    """The new file: `old` with ralph's entries taken out and `add` put in,
    every other byte kept (its byte order mark and CRLF line endings too);
    a fresh rendering of `wanted` when there is no old text or the edit
    would not mean exactly `wanted`."""
    body = without_bom(old or "")
    if body.strip():
        # JSON holds no raw line break inside a string: every one is layout, so a
        # file of CRLF lines is edited as LF lines and given its CRLF back
        crlf = "\r\n" in body and body.count("\r\n") == body.count("\n")
        try:
            text = edited(body.replace("\r\n", "\n") if crlf else body, is_ours, add)
            if json.loads(text) == wanted:
                return old[: len(old) - len(body)] + (text.replace("\n", "\r\n") if crlf else text)  # type: ignore[index]
        except ValueError:
            pass
    return render(wanted)


# ---- what install did, for uninstall -------------------------------------------------

RECORD_SUFFIX = ".ralph-install.json"


def record_path(path: str) -> str:
    return path + RECORD_SUFFIX


def digest(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_record(path: str) -> dict | None:
    """What install recorded beside `path`, or None (absent, unreadable)."""
    try:
        with open(record_path(path), encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("path") == os.path.abspath(path) else None


def missing_dirs(path: str) -> list[str]:
    """The directories above `path` that do not exist yet, deepest first."""
    missing = []
    directory = os.path.dirname(os.path.abspath(path))
    while directory and not os.path.isdir(directory):
        missing.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return missing


def write_record(path: str, old: str | None, new: str, backup: str | None, made: list[str]) -> None:
    """Remember the original: kept from the last record when the file still
    held what ralph wrote then (a re-install), else this write's."""
    previous = read_record(path)
    if previous and old is not None and previous.get("written") == digest(old):
        created, backup, made = bool(previous.get("created")), previous.get("backup"), previous.get("made_dirs") or []
    else:
        created = old is None
    record = {"path": os.path.abspath(path), "created": created, "backup": backup, "made_dirs": made,
              "written": digest(new), "by": f"ralph-hooks {__version__}"}
    atomic_write(record_path(path), json.dumps(record, indent=1) + "\n")


def diff(path: str, old: str | None, new: str) -> str:
    """The change as a unified diff, to print: redacted (a settings file's
    `env` may hold a token)."""
    lines = difflib.unified_diff((old or "").splitlines(True), new.splitlines(True),
                                 fromfile=path if old is not None else "/dev/null", tofile=path)
    return redact("".join(lines))


def write_settings(path: str, text: str | bytes, existed: bool) -> str | None:
    """Back up the current file (timestamped, beside it), then replace it
    atomically. Returns the backup's path."""
    backup = None
    if existed:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = f"{path}.ralph-backup-{stamp}"
        number = 1
        while os.path.exists(backup):
            number += 1
            backup = f"{path}.ralph-backup-{stamp}-{number}"
        shutil.copy2(path, backup)
    mode = None
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        pass
    atomic_write(path, text)
    if mode is not None:
        os.chmod(path, mode)
    return backup


# ---- findings: entries that would not run -----------------------------------------


def findings_for(path: str, data: dict, read_by_client: bool, environ: dict[str, str] | os._Environ[str] = os.environ,
                 release: tuple[int, int, int] | None = None) -> list[str]:
    """Why ralph entries in this file would not do their job, each with a fix
    (`release`: the client's, when known)."""
    problems: list[str] = []
    entries = our_entries(data)
    if not entries:
        return problems
    if not read_by_client:
        problems.append(f"{path}: {len(entries)} ralph hook entr{'y' if len(entries) == 1 else 'ies'} here never run: "
                        "Claude Code does not read this file. Fix: `ralph install --user --move` (writes them to "
                        f"{os.path.join(claude_dir(environ), 'settings.json')} and removes them here)")
        return problems
    seen_commands: set[str] = set()
    for event, matcher, handler in entries:
        if event not in CLIENT_EVENTS:
            close = difflib.get_close_matches(event, CLIENT_EVENTS, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(f"{path}: hooks.{event}: no such Claude Code event, this entry never runs{hint} Fix: ralph install (replaces it)")
            continue
        if event not in events_of(release):
            effect = ("this entry never runs" if skips_unknown_events(release)
                      else "and a file naming an event the client does not know makes it run NONE of the file's hooks")
            problems.append(f"{path}: hooks.{event}: Claude Code {release_text(release)} has no such event (it came in "
                            f"{release_text(EVENT_SINCE[event])}), {effect}. Fix: ralph install (writes only the events this client knows)")
            continue
        if event in REQUIRED_TOOLS and event not in NO_MATCHER_EVENTS:
            missing = [tool for tool in REQUIRED_TOOLS[event] if not matcher_matches(matcher, tool)]
            if missing:
                problems.append(f"{path}: hooks.{event} matcher {matcher!r} never matches {', '.join(missing)} "
                                f"(the client tests it against tool_name: exact names for plain words, else an unanchored regex). "
                                f"Fix: ralph install (sets matcher {HOOK_ENTRIES[event][0]!r})")
        command = handler.get("command", "")
        if command in seen_commands:
            continue
        seen_commands.add(command)
        problems.extend(command_problems(path, event, command, environ))
        timeout = handler.get("timeout")
        if timeout is not None and (not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout > 600 or timeout < 1):
            problems.append(f"{path}: hooks.{event} timeout {timeout!r} is not a sensible number of seconds "
                            f"(the unit is seconds; over 600 looks like milliseconds). Fix: ralph install (sets {HOOK_ENTRIES.get(event, (0, 0, 30))[2]})")
    return problems


def command_problems(path: str, event: str, command: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:
        return [f"{path}: hooks.{event} command {command!r} is not valid shell quoting. Fix: ralph install"]
    problems = []
    if words and os.path.basename(words[0]).startswith("python"):
        rest = without_interpreter(words)
        if rest:  # the interpreter must exist too; then check the script below
            if not (os.path.isfile(words[0]) and os.access(words[0], os.X_OK)) and shutil.which(words[0], path=environ.get("PATH")) is None:
                problems.append(f"{path}: hooks.{event} runs {words[0]}, which does not exist: the client lets every tool call through. "
                                "Fix: reinstall ralph-hooks, then `ralph install`")
            if not os.path.isfile(rest[0]):
                problems.append(f"{path}: hooks.{event} runs {rest[0]}, which does not exist: the client lets every tool call through. "
                                "Fix: reinstall ralph-hooks, then `ralph install`")
            return problems
    program = words[0] if words else ""
    if "$" in program:
        return []  # ${CLAUDE_PLUGIN_ROOT} and the like: resolved by the client
    if os.sep not in program:
        found = shutil.which(program, path=environ.get("PATH"))
        if found is None:
            return [f"{path}: hooks.{event} runs `{program}`, which is not on PATH: the client cannot start it "
                    "(and lets every tool call through). Fix: ralph install (writes the absolute path)"]
        return [f"{path}: hooks.{event} runs `{program}` by name: it only works when the client's PATH has it "
                f"(here: {found}). Fix: ralph install (writes the absolute path)"]
    if not os.path.isfile(program):
        return [f"{path}: hooks.{event} runs {program}, which does not exist: the client lets every tool call through. "
                "Fix: reinstall ralph-hooks, then `ralph install` (or `ralph install --binary PATH`)"]
    if not os.access(program, os.X_OK):
        return [f"{path}: hooks.{event} runs {program}, which is not executable. Fix: chmod +x {shlex.quote(program)}"]
    return []


# ---- the commands ----------------------------------------------------------------------


def scope_of(args: argparse.Namespace) -> str:
    return "project" if args.project else "local" if args.local else "user"


def add_scope_flags(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="~/.claude/settings.json, every project (default)")
    where.add_argument("--project", action="store_true", help=".claude/settings.json, shared with the team")
    where.add_argument("--local", action="store_true", help=".claude/settings.local.json, this project, only you")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ralph install",
        description="Merge ralph's hook entries into a settings file Claude Code reads. "
        "Keeps every other key and tool's hooks; a second run changes nothing.",
    )
    add_scope_flags(parser)
    parser.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    parser.add_argument("--binary", metavar="PATH", help="the ralph executable the hooks run (default: this one)")
    parser.add_argument("--move", action="store_true", help="also remove ralph entries from files Claude Code ignores")
    parser.add_argument("--plugin", metavar="DIR", help="write a Claude Code plugin to DIR instead (load it with claude --plugin-dir DIR)")
    parser.add_argument("--sandbox", action="store_true",
                        help="also merge the Bash sandbox settings ralph wants for this project (with --project or --local; needs bubblewrap and socat)")
    parser.add_argument("--client", metavar="PATH", help="the Claude Code executable whose events to write (default: claude on PATH)")
    parser.add_argument("--mcp", action="store_true",
                        help="also register `ralph mcp`, the agent's tools, in Claude Code's MCP servers of that scope (needs ralph-hooks[mcp])")
    args = parser.parse_args(argv)
    if args.sandbox and not (args.project or args.local):
        parser.error("--sandbox writes paths of this project: use it with --project or --local")
    program = entry_point(args.binary)
    if not os.path.isfile(program) or not os.access(program, os.X_OK):
        sys.stderr.write(f"ralph install: {program} is not an executable file; give the ralph to run with --binary PATH\n")
        return 2
    if args.mcp and (args.plugin or not sdk_installed()):
        sys.stderr.write("ralph install: --mcp " + ("registers a server in a settings scope, not in a plugin" if args.plugin else
                         f"needs the MCP SDK, which is not installed here: {MCP_INSTALL_HINT}") + "; nothing was written\n")
        return 2
    release, status = client_for_install(args.client)
    if status:
        return status
    if args.plugin:
        return write_plugin(args.plugin, program, args.dry_run, events_of(release))
    root = project_root(os.getcwd())
    scope = scope_of(args)
    path = settings_path(scope, root)
    try:
        data, old = read_settings(path)
    except SettingsError as e:
        sys.stderr.write(f"ralph install: {e}\n")
        return 1
    fixed = findings_for(path, data, True, release=release)
    events = events_of(release)
    wanted = merged(data, program, events)
    if args.sandbox:
        layer = sandbox_layer(root)
        if layer is None:
            return 1
        wanted = merge_settings(wanted, layer)
    if args.mcp:
        wanted = mcp_install.with_tools_env(wanted)
    new = settings_text(old, wanted, wanted_hooks(program, events))
    status = 0
    if old is not None and (new == old or wanted == data):
        print(f"ralph hooks already installed in {path}; nothing changed")
    else:
        shown = diff(path, old, new)
        sys.stdout.write(shown)
        if args.dry_run:
            print(f"(dry run: {path} not written)")
        else:
            try:
                made = missing_dirs(path)
                previous = read_record(path)
                own_write = previous is not None and old is not None and previous.get("written") == digest(old)
                backup = write_settings(path, new, old is not None and not own_write)
                write_record(path, old, new, backup, made)
            except OSError as e:
                sys.stderr.write(f"ralph install: cannot write {path}: {e.strerror or e}; nothing was changed\n")
                return 1
            print(f"installed ralph hooks in {path} ({scope} settings){f'; backup: {backup}' if backup else ''}")
            for problem in fixed:
                print(f"  replaced an entry that would not have worked: {problem}")
    foreign = unknown_events(wanted, release)
    if foreign and not skips_unknown_events(release):
        sys.stderr.write(f"ralph install: WARNING: {path} also names hook events Claude Code {release_text(release)} does not know "
                         f"({', '.join(foreign)}): this client then runs NO hook from the file, ralph's included. "
                         "Remove those entries or update Claude Code.\n")
        status = 1
    state = os.path.join(root, ".ralph")
    if not args.dry_run and os.path.isdir(state) and not os.path.lexists(os.path.join(state, ".gitignore")):
        ensure_state_gitignore(state)
        print(f"wrote {state}/.gitignore (keeps hook logs and session state out of `git add -A`)")
    status = max(status, handle_ignored(root, args))
    if args.mcp:
        status = max(status, mcp_install.install(scope, root, python_of(program), os.environ, args.dry_run))
    ignored = {p for _, p, read in settings_files(root) if not read}
    for label, other, read in settings_files(root):
        if not read or other == path or other in ignored:
            continue
        try:
            other_data, _ = read_settings(other)
        except SettingsError:
            continue
        if our_entries(other_data):
            how = f" `ralph uninstall --{label}` removes those." if label in SCOPES else ""
            print(f"note: {other} ({label} settings) also has ralph entries; both run.{how}")
    return status


def client_for_install(explicit: str | None) -> tuple[tuple[int, int, int] | None, int]:
    """(the client's release or None, exit status when install must stop),
    saying on stdout what this client gets and what it cannot have."""
    binary = find_client(explicit)
    if binary is None:
        print("note: no Claude Code found (`claude` on PATH): writing the entries of current releases. A client before "
              f"{release_text(EVENT_SINCE['PostToolUseFailure'])} runs NO hook from a file naming PostToolUseFailure: "
              "there, run `ralph install --client PATH` (or with `claude` on PATH).")
        return None, 0
    text, why = client_version(binary)
    release = client_release(text)
    if release is None:
        if explicit:
            sys.stderr.write(f"ralph install: cannot tell the release of {binary}: {why or text!r}; nothing was written\n")
            return None, 2
        print(f"note: cannot tell the release of {binary} ({why or text!r}): writing the entries of current releases")
        return None, 0
    if release < EVENT_SINCE["PreToolUse"]:
        sys.stderr.write(f"ralph install: Claude Code {release_text(release)} has no hooks (they came in "
                         f"{release_text(EVENT_SINCE['PreToolUse'])}); update it. Nothing was written\n")
        return release, 1
    missing = missing_for(release)
    print(f"Claude Code {release_text(release)} ({binary})" + (f": not writing {', '.join(missing)}" if missing else ""))
    for event in missing:
        print(f"  {what_is_missing(event, release)}. Update Claude Code for that.")
    return release, 0


def sandbox_layer(root: str) -> dict | None:
    """The sandbox settings for `root` (ralph.sandbox), after one probe shows
    the sandbox runs here; None (and why, on stderr) when it cannot."""
    works, found = probe()
    if not works:
        sys.stderr.write(f"ralph install: the Bash sandbox cannot run here: {found}; nothing was written\n")
        return None
    try:
        return settings_layer(root, load_config(root), config_path(root))
    except ConfigError as e:
        sys.stderr.write(f"ralph install: {e}; nothing was written\n")
        return None


def handle_ignored(root: str, args: argparse.Namespace) -> int:
    """Offer (or, with --move, do) the move out of files the client ignores."""
    status = 0
    for label, path, read in settings_files(root):
        if read:
            continue
        try:
            data, old = read_settings(path)
        except SettingsError as e:
            sys.stderr.write(f"ralph install: warning: {e}\n")
            continue
        if not our_entries(data):
            continue
        for problem in findings_for(path, data, False):
            print(f"warning: {problem}")
        move = args.move
        if not move and not args.dry_run and sys.stdin.isatty():
            answer = input(f"Remove the ralph entries from {path} (they never run there)? [y/N] ")
            move = answer.strip().lower() in ("y", "yes")
        if not move:
            continue
        new = render(without_ours(data))
        sys.stdout.write(diff(path, old, new))
        if args.dry_run:
            print(f"(dry run: {path} not written)")
            continue
        try:
            backup = write_settings(path, new, True)
            print(f"removed ralph entries from {path}; backup: {backup}")
        except OSError as e:
            sys.stderr.write(f"ralph install: cannot write {path}: {e.strerror or e}\n")
            status = 1
    return status


# ---- the plugin ---------------------------------------------------------------------------

PLUGIN_NAME = "ralph-hooks"
LAUNCHER_COMMAND = "${CLAUDE_PLUGIN_ROOT}/hooks/" + LAUNCHER_NAME


def plugin_manifest() -> dict:
    return {
        "name": PLUGIN_NAME,
        "version": __version__,
        "description": "Read-before-edit, push/merge guard, test-run feedback and rollback, stop gate (ralph-hooks)",
    }


def plugin_hooks(events: frozenset[str] | None = None) -> dict:
    """hooks/hooks.json: the same entries, through the fail-closed launcher
    (only `events`, the client's, when given: 2.0.25 - 2.0.55 take
    --plugin-dir but run none of a plugin's hooks when it names PostToolUseFailure)."""
    return {"hooks": wanted_hooks(LAUNCHER_COMMAND, events)}


def launcher_text(program: str | None = None) -> str:
    """The launcher script; `program` bakes in the ralph it runs by default."""
    text = resources.files("ralph").joinpath("data", LAUNCHER_NAME).read_text(encoding="utf-8")
    if program:
        text = text.replace("\ndefault_ralph=\n", f"\ndefault_ralph={shlex.quote(program)}\n", 1)
    return text


def write_plugin(directory: str, program: str, dry_run: bool, events: frozenset[str] | None = None) -> int:
    files = {
        os.path.join(".claude-plugin", "plugin.json"): json.dumps(plugin_manifest(), indent=2) + "\n",
        os.path.join("hooks", "hooks.json"): render(plugin_hooks(events)),
        os.path.join("hooks", LAUNCHER_NAME): launcher_text(program),
    }
    for rel, text in files.items():
        path = os.path.join(directory, rel)
        try:
            with open(path, encoding="utf-8") as f:
                old = f.read()
        except OSError:
            old = None
        if old == text:
            continue
        sys.stdout.write(diff(path, old, text))
        if not dry_run:
            atomic_write(path, text)
            if rel.endswith(LAUNCHER_NAME):
                os.chmod(path, 0o755)
    where = os.path.abspath(directory)
    print(f"{'(dry run) ' if dry_run else ''}plugin in {where}: load it with `claude --plugin-dir {shlex.quote(where)}`")
    return 0
