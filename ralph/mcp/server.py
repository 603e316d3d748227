"""`ralph mcp`: the stdio MCP server of the agent's tools, on the official SDK
(`mcp.server.mcpserver.MCPServer`). The only module that imports the SDK,
which is the optional extra `ralph-hooks[mcp]`: without it SDK_MISSING says
why and `ralph mcp` says how to install it.

Each tool finds its project and run at the moment it is called
(ralph.mcp.context) and answers with text and is_error; a crash in a tool is
an error answer naming it, never a dead server. (No `from __future__ import
annotations` here: the SDK reads the tools' annotations, with their
descriptions, when they are registered.)
"""
from collections.abc import Callable
from typing import Annotated

from ralph import __version__
from ralph.mcp import complete_story, context, launch, report_blocked, request_merge, story_status
from ralph.mcp.context import Answer, ToolContext

try:
    from mcp.server.mcpserver import MCPServer
    from mcp_types import CallToolResult, TextContent
    from pydantic import Field

    SDK_MISSING = ""
except ImportError as e:  # the optional extra is not installed
    SDK_MISSING = str(e) or "No module named 'mcp'"

INSTALL_HINT = "pip install 'ralph-hooks[mcp]' (the official MCP SDK, `mcp` on PyPI) into the environment that runs ralph"
SERVER_NAME = "ralph"
INSTRUCTIONS = (
    "Tools of ralph-loop, the loop that runs this session on one story of a plan. story_status shows the story, "
    "its criteria and why earlier attempts failed; complete_story finishes it (it runs the verify command itself); "
    "report_blocked hands a story that needs a person back to them; request_merge asks for work to go upstream "
    "instead of pushing."
)
TOOL_NAMES = (complete_story.NAME, report_blocked.NAME, request_merge.NAME, story_status.NAME)
assert TOOL_NAMES == launch.TOOL_NAMES  # the names are the interface; doctor checks them without the SDK


def answer(tool: str, act: Callable[[ToolContext], Answer], find: Callable[[], ToolContext]) -> "CallToolResult":
    """Run one tool against the context found now; any crash becomes an error answer."""
    try:
        result = act(find())
    except Exception as e:  # noqa: BLE001 - the agent must hear what went wrong, and the server must live on
        result = Answer(f"{tool} failed inside ralph: {type(e).__name__}: {e}. Nothing more was changed by this call.", True)
    return CallToolResult(content=[TextContent(type="text", text=result.text)], is_error=result.is_error)


def described(text: str) -> object:
    return Field(description=text)


def build_server(find: Callable[[], ToolContext] = context.find) -> "MCPServer":
    """The server with its four tools; `find` gives each call its context."""
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    done = complete_story.ARGUMENTS
    blocked = report_blocked.ARGUMENTS
    merge = request_merge.ARGUMENTS

    @server.tool(name=complete_story.NAME, description=complete_story.DESCRIPTION)
    def complete_story_tool(story_id: Annotated[str, described(done["story_id"])],
                            summary: Annotated[str, described(done["summary"])],
                            tests_passed: Annotated[bool, described(done["tests_passed"])]) -> CallToolResult:
        return answer(complete_story.NAME, lambda ctx: complete_story.complete_story(ctx, story_id, summary, tests_passed), find)

    @server.tool(name=report_blocked.NAME, description=report_blocked.DESCRIPTION)
    def report_blocked_tool(story_id: Annotated[str, described(blocked["story_id"])],
                            reason: Annotated[str, described(blocked["reason"])],
                            question: Annotated[str, described(blocked["question"])]) -> CallToolResult:
        return answer(report_blocked.NAME, lambda ctx: report_blocked.report_blocked(ctx, story_id, reason, question), find)

    @server.tool(name=request_merge.NAME, description=request_merge.DESCRIPTION)
    def request_merge_tool(story_id: Annotated[str, described(merge["story_id"])],
                           summary: Annotated[str, described(merge["summary"])]) -> CallToolResult:
        return answer(request_merge.NAME, lambda ctx: request_merge.request_merge(ctx, story_id, summary), find)

    @server.tool(name=story_status.NAME, description=story_status.DESCRIPTION)
    def story_status_tool() -> CallToolResult:
        return answer(story_status.NAME, story_status.story_status, find)

    return server


def serve() -> None:
    """Serve on stdin/stdout until the client closes them."""
    build_server().run("stdio")
