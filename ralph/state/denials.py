"""`.ralph/protected/denials.jsonl`: the push/merge guard's denials during a
ralph-loop run. The PreToolUse hook appends one line per denial; the loop
reads them to end an iteration, to tell the next prompt why, and for
`ralph status`. `protected/` is read-only to the agent's Bash (the sandbox
layer); hooks, which write here, run outside the sandbox."""
import os
import time

from ralph import fastjson
from ralph.state.files import append_line, read_lines, rotate_if_larger

PROTECTED_DIR = "protected"
DENIALS_FILE = "denials.jsonl"
MAX_BYTES = 1024 * 1024  # bounded; the loop reads only the current run's lines
# Set by the loop in the agent's environment; the hook reads them.
ENV_RUN_ID = "RALPH_RUN_ID"
ENV_ITERATION = "RALPH_ITERATION"
ENV_MAX_DENIALS = "RALPH_MAX_DENIALS"
ENV_STORY = "RALPH_STORY"
# "1" when the agent has the tools of `ralph mcp` (set by the loop, and by the
# settings `ralph install --mcp` writes): a denial then names request_merge
ENV_AGENT_TOOLS = "RALPH_AGENT_TOOLS"
REQUEST_MERGE_HINT = ("Instead of pushing or merging, call the mcp__ralph__request_merge tool: it records the request "
                      "for the person (and the loop's end-of-run hand-off) and pushes nothing.")


def tools_active(environ: dict[str, str]) -> bool:
    return environ.get(ENV_AGENT_TOOLS) == "1"


def protected_dir(state_dir: str) -> str:
    return os.path.join(state_dir, PROTECTED_DIR)


def denials_path(state_dir: str) -> str:
    return os.path.join(protected_dir(state_dir), DENIALS_FILE)


def read_denials(state_dir: str, run_id: str | None = None, iteration: int | None = None,
                 story: str | None = None) -> list[dict]:
    """Denial records matching every criterion given (None: any); torn or odd lines skipped."""
    wanted = {k: v for k, v in (("run_id", run_id), ("iteration", iteration), ("story", story)) if v is not None}
    found = []
    for line in read_lines(denials_path(state_dir)):
        try:
            entry = fastjson.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(entry, dict) and all(entry.get(k) == v for k, v in wanted.items()):
            found.append(entry)
    return found


def append_denial(state_dir: str, run_id: str, iteration: int, story: str | None, session: str, command: str, reason: str) -> int:
    """Append one denial (command and reason already redacted); returns how
    many denials this run's iteration has now. Raises OSError."""
    path = denials_path(state_dir)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    rotate_if_larger(path, MAX_BYTES)
    append_line(path, fastjson.dumps({
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "run_id": run_id, "iteration": iteration,
        "story": story or None, "session": session, "command": command[:500], "reason": reason[:500],
    }))
    return len(read_denials(state_dir, run_id, iteration))


def denial_summary(denials: list[dict], limit: int = 5) -> str:
    """The denied commands and the guard's reasons, for failures.jsonl and the next prompt."""
    lines = []
    for entry in denials[-limit:]:
        lines.append(f"- `{str(entry.get('command', ''))[:200]}`: {str(entry.get('reason', ''))[:300]}")
    return "\n".join(lines)
