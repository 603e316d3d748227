"""Starting `ralph mcp` from outside: is the SDK there, the command that
runs the server with this very installation of ralph, and one real stdio
round trip (initialize, then tools/list) for `ralph doctor` and the tests.
Plain JSON-RPC over pipes: the check does not trust the SDK it checks."""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from importlib.util import find_spec

from ralph import __version__

INSTALL_HINT = "pip install 'ralph-hooks[mcp]'"
SERVER_NAME = "ralph"  # the client names its tools mcp__ralph__<tool>
TOOL_NAMES = ("complete_story", "report_blocked", "request_merge", "story_status")  # the server's, in its order
PROTOCOL_VERSION = "2025-06-18"
START_TIMEOUT_SECONDS = 60.0


def sdk_installed() -> bool:
    """Is the MCP SDK importable here (found, not imported)?"""
    if getattr(sys, "frozen", False):
        return False  # the binary leaves the SDK out (build.spec)
    try:
        return find_spec("mcp") is not None and find_spec("mcp.server.mcpserver") is not None
    except (ImportError, ValueError):
        return False


def server_command(python: str | None = None) -> tuple[str, list[str]]:
    """(command, args) that start `ralph mcp` with this installation of ralph:
    its interpreter running the package (`python -P -m ralph mcp`); the binary itself when frozen."""
    if getattr(sys, "frozen", False):
        return sys.executable, ["mcp"]
    # -P: the project directory, where the client starts it, is not on sys.path
    # (a project with its own `ralph/` would shadow the package); unlike
    # PYTHONSAFEPATH it does not reach the verify command the server runs
    return python or sys.executable, ["-P", "-m", "ralph", "mcp"]


class Listing:
    """What one round trip found."""

    __slots__ = ("ok", "tools", "error", "seconds")

    def __init__(self, ok: bool, tools: list[str], error: str, seconds: float) -> None:
        self.ok = ok
        self.tools = tools
        self.error = error
        self.seconds = seconds


def list_tools(command: str, args: list[str], env: dict[str, str] | None = None, cwd: str | None = None,
               timeout: float = START_TIMEOUT_SECONDS) -> Listing:
    """Start the server, initialize, list its tools, close its stdin."""
    started = time.monotonic()
    try:
        proc = subprocess.Popen([command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=cwd, env=env)
    except OSError as e:
        return Listing(False, [], f"cannot start {command}: {e.strerror or e}", 0.0)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    deadline = started + timeout
    try:
        send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "ralph doctor", "version": __version__}}})
        reply = receive(proc, 1, deadline)
        if "error" in reply:
            raise ProtocolError(f"initialize failed: {reply['error']}")
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        reply = receive(proc, 2, deadline)
        tools = [t.get("name") for t in (reply.get("result") or {}).get("tools") or [] if isinstance(t, dict)]
        return Listing(True, [str(t) for t in tools], "", time.monotonic() - started)
    except (ProtocolError, OSError, ValueError) as e:
        stderr = drain_stderr(proc)
        return Listing(False, [], f"{e}{': ' + stderr if stderr else ''}", time.monotonic() - started)
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class ProtocolError(Exception):
    pass


def send(proc: subprocess.Popen, message: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def receive(proc: subprocess.Popen, wanted: int, deadline: float) -> dict:
    """The response to request `wanted` (notifications and logs in between skipped)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buffer = b""
    while True:
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == wanted:
                return message
        left = deadline - time.monotonic()
        if left <= 0:
            raise ProtocolError(f"no answer within {START_TIMEOUT_SECONDS:g}s")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            raise ProtocolError(f"the server exited (code {proc.wait()}) before answering")
        buffer += chunk


def drain_stderr(proc: subprocess.Popen) -> str:
    assert proc.stderr is not None
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    lines = proc.stderr.read(64 * 1024).decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""
