"""PostToolUse on Read and the edit tools: remember what the session read or
wrote, for read-before-edit."""
from ralph.claude.protocol import HookCall, Outcome, allow
from ralph.rules.read_before_edit import EDIT_TOOLS
from ralph.state import reads

# tool -> where its response names the file it touched (the input as fallback)
RESPONSE_PATH = {
    "Read": ("file", "filePath"),
    "Edit": ("filePath",),
    "MultiEdit": ("filePath",),
    "Write": ("filePath",),
    "NotebookEdit": ("notebook_path",),
}


def touched_path(tool_name: str, tool_input: dict, tool_response: object) -> str | None:
    value: object = tool_response
    for key in RESPONSE_PATH[tool_name]:
        value = value.get(key) if isinstance(value, dict) else None
    if isinstance(value, str) and value:
        return value
    fallback = tool_input.get(EDIT_TOOLS.get(tool_name, "file_path")) or tool_input.get("file_path")
    return fallback if isinstance(fallback, str) and fallback else None


def handle(call: HookCall) -> Outcome:
    path = touched_path(call.tool_name, call.tool_input, call.payload.get("tool_response"))
    if path is not None:
        identity = reads.identify(path, call.cwd)
        if identity.exists:
            reads.record(call.state_dir, call.session_id, identity)
            call.log_extra["recorded"] = identity.path
    return allow()
