"""The agent's tools: `ralph mcp`, a stdio MCP server (the official `mcp`
SDK, an optional extra) with complete_story, report_blocked, request_merge
and story_status.

Only ralph.mcp.server imports the SDK; the tools (one module each), the
project and run they act on (context), the files they share with the loop
(records) and the tree fingerprint (tree) are plain modules, so the loop,
the Stop hook and the tests use them without it. Nothing on a hook's hot
path imports the server.
"""
