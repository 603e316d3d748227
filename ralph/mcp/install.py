"""`ralph install --mcp`: register `ralph mcp` in Claude Code's own MCP
configuration for interactive sessions, where `claude mcp add-json` would
put it (checked with the real client):

- user: `mcpServers` of `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`
  when that is set), every project;
- local: `projects[<root>].mcpServers` of the same file, this project, only you;
- project: `mcpServers` of `<root>/.mcp.json`, shared (the client asks each
  person to approve it once).

The settings file of the same scope gets `"env": {"RALPH_AGENT_TOOLS": "1"}`,
so the hooks know the tools are there (the guard's denials then name
request_merge). `ralph uninstall` takes both out again; `ralph doctor`
starts the server and lists its tools. Our entry is recognised by its
command (`<python> -P -m ralph mcp`, or `ralph mcp`). Every write: a timestamped
backup, then temp file + rename, the file's mode kept; nothing is written on
bad input.
"""
from __future__ import annotations

import copy
import difflib
import json
import os
import shutil
import sys
import time

from ralph.mcp.launch import SERVER_NAME, server_command
from ralph.state.denials import ENV_AGENT_TOOLS
from ralph.state.files import atomic_write

TIMEOUT_MS = 1_920_000  # the client's limit per tool call: the default verify timeout (30 min) and 2 min more
SCOPES = ("user", "project", "local")


class ConfigFileError(Exception):
    """A file we must not touch; the message names it (and the line)."""


def claude_json(environ: dict[str, str] | os._Environ[str]) -> str:
    home = environ.get("CLAUDE_CONFIG_DIR") or environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".claude.json")


def config_file(scope: str, root: str, environ: dict[str, str] | os._Environ[str]) -> str:
    return os.path.join(root, ".mcp.json") if scope == "project" else claude_json(environ)


def server_entry(python: str | None = None) -> dict:
    command, args = server_command(python)
    return {"type": "stdio", "command": command, "args": args, "timeout": TIMEOUT_MS}


def is_ours(entry: object) -> bool:
    """An MCP server entry that runs `ralph mcp`."""
    if not isinstance(entry, dict):
        return False
    words = [str(entry.get("command") or ""), *[str(a) for a in entry.get("args") or [] if isinstance(entry.get("args"), list)]]
    if words[-1:] != ["mcp"]:
        return False
    return words[-3:-1] == ["-m", "ralph"] or os.path.basename(words[0]) in ("ralph", "ralph.exe")  # `python [-P] -m ralph mcp`


def read_json(path: str) -> tuple[dict, str | None]:
    """(object, text); ({}, None) when the file does not exist. Raises ConfigFileError."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigFileError(f"{path}: cannot read: {e}; nothing was written") from None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigFileError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}; fix the file and run again; nothing was written") from None
    if not isinstance(data, dict):
        raise ConfigFileError(f"{path}:1: must hold a JSON object, not a {type(data).__name__}; nothing was written")
    return data, text


def servers(data: dict, scope: str, root: str) -> dict:
    """The `mcpServers` object of that scope in the file's data (empty when absent)."""
    holder = data
    if scope == "local":
        holder = (data.get("projects") or {}).get(root) or {}
    found = holder.get("mcpServers") if isinstance(holder, dict) else None
    return found if isinstance(found, dict) else {}


def with_server(data: dict, scope: str, root: str, entry: dict) -> dict:
    """A copy of `data` with our server (and no other entry of ours) in that scope."""
    result = without_server(data, scope, root)
    holder = result
    if scope == "local":
        projects = result.setdefault("projects", {})
        holder = projects.setdefault(root, {})
    mcp_servers = holder.get("mcpServers")
    if not isinstance(mcp_servers, dict):
        mcp_servers = holder["mcpServers"] = {}
    mcp_servers[SERVER_NAME] = entry
    return result


def without_server(data: dict, scope: str, root: str) -> dict:
    """A copy of `data` without our server entries in that scope."""
    result = copy.deepcopy(data)
    holder = result
    if scope == "local":
        holder = (result.get("projects") or {}).get(root)
    if isinstance(holder, dict) and isinstance(holder.get("mcpServers"), dict):
        holder["mcpServers"] = {name: entry for name, entry in holder["mcpServers"].items() if not is_ours(entry)}
    return result


def with_tools_env(settings: dict) -> dict:
    """Settings whose `env` tells the hooks the tools are there."""
    result = dict(settings)
    env = dict(result.get("env") or {}) if isinstance(result.get("env"), dict) else {}
    env[ENV_AGENT_TOOLS] = "1"
    result["env"] = env
    return result


def without_tools_env(settings: dict) -> dict:
    result = dict(settings)
    env = result.get("env")
    if isinstance(env, dict) and ENV_AGENT_TOOLS in env:
        env = {k: v for k, v in env.items() if k != ENV_AGENT_TOOLS}
        if env:
            result["env"] = env
        else:
            del result["env"]
    return result


def render(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write(path: str, old: str | None, new: str, dry_run: bool) -> str:
    """Print the diff; unless dry, back up and replace the file. What happened, in words."""
    shown = "".join(difflib.unified_diff((old or "").splitlines(True), new.splitlines(True),
                                         fromfile=path if old is not None else "/dev/null", tofile=path))
    print(shown, end="")
    if dry_run:
        return f"(dry run: {path} not written)"
    backup = ""
    mode = 0o600 if os.path.basename(path) == ".claude.json" else 0o644
    if old is not None:
        mode = os.stat(path).st_mode & 0o777
        backup = f"{path}.ralph-backup-{time.strftime('%Y%m%d-%H%M%S')}"
        number = 1
        while os.path.exists(backup):
            number += 1
            backup = f"{path}.ralph-backup-{time.strftime('%Y%m%d-%H%M%S')}-{number}"
        shutil.copy2(path, backup)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    atomic_write(path, new, mode=mode)
    return f"wrote {path}" + (f"; backup: {backup}" if backup else "")


def install(scope: str, root: str, python: str | None, environ: dict[str, str] | os._Environ[str], dry_run: bool) -> int:
    """Add our server to that scope's MCP configuration; 0, or 1 with the reason on stderr."""
    path = config_file(scope, root, environ)
    try:
        data, old = read_json(path)
    except ConfigFileError as e:
        sys.stderr.write(f"ralph install --mcp: {e}\n")
        return 1
    wanted = with_server(data, scope, root, server_entry(python))
    if old is not None and wanted == data:
        print(f"ralph mcp already registered in {path} ({scope}); nothing changed")
        return 0
    try:
        done = write(path, old, render(wanted), dry_run)
    except OSError as e:
        sys.stderr.write(f"ralph install --mcp: cannot write {path}: {e.strerror or e}; nothing was changed\n")
        return 1
    print(f"registered `ralph mcp` (the agent's tools) for {scope} sessions: {done}")
    if scope == "project":
        print("note: Claude Code asks each person once to approve a project's .mcp.json server")
    return 0


def uninstall(scope: str, root: str, environ: dict[str, str] | os._Environ[str], dry_run: bool) -> int:
    path = config_file(scope, root, environ)
    try:
        data, old = read_json(path)
    except ConfigFileError as e:
        sys.stderr.write(f"ralph uninstall: {e}\n")
        return 1
    if not any(is_ours(entry) for entry in servers(data, scope, root).values()):
        return 0
    try:
        done = write(path, old, render(without_server(data, scope, root)), dry_run)
    except OSError as e:
        sys.stderr.write(f"ralph uninstall: cannot write {path}: {e.strerror or e}; nothing was changed\n")
        return 1
    print(f"removed `ralph mcp` from the {scope} MCP servers: {done}")
    return 0


def registered(root: str, environ: dict[str, str] | os._Environ[str]) -> list[tuple[str, str, dict]]:
    """(scope, file, entry) of every registration of ours; unreadable files are skipped."""
    found = []
    for scope in SCOPES:
        path = config_file(scope, root, environ)
        try:
            data, _ = read_json(path)
        except ConfigFileError:
            continue
        found += [(scope, path, entry) for entry in servers(data, scope, root).values() if is_ours(entry)]
    return found
