"""`ralph mcp`: serve the agent's tools (complete_story, report_blocked,
request_merge, story_status) over stdio, for Claude Code. ralph-loop starts
it for its agent; `ralph install --mcp` registers it for interactive
sessions. See ralph.mcp."""
from __future__ import annotations

import argparse
import sys

from ralph.mcp import server


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ralph mcp",
        description="Serve the agent's tools over stdio (the MCP protocol): " + ", ".join(server.TOOL_NAMES)
        + ". Claude Code starts it; ralph-loop registers it for its agent, `ralph install --mcp` for interactive sessions.",
    )
    parser.parse_args(argv)
    if server.SDK_MISSING:
        where = ("the single binary leaves it out; use ralph-hooks installed with pip" if getattr(sys, "frozen", False)
                 else server.SDK_MISSING)
        sys.stderr.write(f"ralph mcp: the MCP SDK is not installed ({where}).\nInstall it: {server.INSTALL_HINT}\n")
        return 1
    server.serve()
    return 0
