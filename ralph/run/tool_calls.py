"""The files the agent's tools share with the loop.

In `protected/` of the state directory (read-only to the agent's Bash and
Edit/Write when the loop's sandbox layer is on, like ralph.toml itself):

- `agent-tools.json`: the loop's word on the iteration the tools serve
  (run, iteration, story, stage, attempt and budget, the verify command with
  its timeout and sandbox prefix, plan, progress and log paths). Written by
  the loop before each agent run (temp file + rename).
- `agent-tool-calls.jsonl`: what the tools did that the loop acts on: a
  complete_story whose verify passed (with the tree it passed on) and a
  report_blocked (reason, question). One JSON line each, O_APPEND.
- `mcp-config.json`: the `--mcp-config` file the loop hands Claude Code.

In the state directory itself, the run's contract with the hand-off:
`merge_requests.jsonl`, one line per request_merge call
({run_id, iteration, story, summary, at}).

Light on purpose: the Stop hook reads the blocked record.
"""
import os
import time

from ralph import fastjson
from ralph.redaction import redact
from ralph.state.denials import protected_dir
from ralph.state.files import append_line, atomic_write, read_json_object, read_lines, rotate_if_larger

ITERATION_FILE = "agent-tools.json"
CALLS_FILE = "agent-tool-calls.jsonl"
MCP_CONFIG_FILE = "mcp-config.json"
MERGE_REQUESTS_FILE = "merge_requests.jsonl"
MAX_BYTES = 1024 * 1024
MAX_TEXT = 4000  # a summary, reason or question as recorded

COMPLETE = "complete_story"
BLOCKED = "report_blocked"
def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def iteration_path(state_dir: str) -> str:
    return os.path.join(protected_dir(state_dir), ITERATION_FILE)


def calls_path(state_dir: str) -> str:
    return os.path.join(protected_dir(state_dir), CALLS_FILE)


def merge_requests_path(state_dir: str) -> str:
    return os.path.join(state_dir, MERGE_REQUESTS_FILE)


def write_iteration(state_dir: str, context: dict) -> None:
    """Not redacted: it holds the verify command as the loop runs it (a
    redacted command would run differently), the user's own configuration
    like ralph.toml; so the file is 0600."""
    os.makedirs(protected_dir(state_dir), exist_ok=True)
    atomic_write(iteration_path(state_dir), fastjson.dumps(context) + "\n", mode=0o600)


def read_iteration(state_dir: str, run_id: str, iteration: int) -> dict | None:
    """The loop's context for this run and iteration; None when it is missing,
    torn, or describes another iteration."""
    context = read_json_object(iteration_path(state_dir))
    if context is None or context.get("run_id") != run_id or context.get("iteration") != iteration:
        return None
    return context


def append_call(state_dir: str, record: dict) -> None:
    """One tool call the loop acts on (the caller fills run_id, iteration, story, tool)."""
    path = calls_path(state_dir)
    rotate_if_larger(path, MAX_BYTES)
    entry = {"at": utc_now()}
    entry.update(record)
    append_line(path, fastjson.dumps(redact(entry, MAX_TEXT)))


def calls(state_dir: str, run_id: str, iteration: int, story: str, tool: str) -> list[dict]:
    """The recorded calls of `tool` for this story in this run's iteration, oldest first."""
    found = []
    for line in read_lines(calls_path(state_dir), max_bytes=MAX_BYTES * 2):
        try:
            entry = fastjson.loads(line)
        except (ValueError, RecursionError):
            continue
        if (isinstance(entry, dict) and entry.get("tool") == tool and entry.get("run_id") == run_id
                and entry.get("iteration") == iteration and entry.get("story") == story):
            found.append(entry)
    return found


def last_call(state_dir: str, run_id: str, iteration: int, story: str, tool: str) -> dict | None:
    found = calls(state_dir, run_id, iteration, story, tool)
    return found[-1] if found else None


def append_progress(path: str, heading: str, body: str) -> None:
    """One dated entry in progress.md (the next prompts read its end)."""
    entry = f"\n## {utc_now()} {heading}\n{redact(body.strip(), MAX_TEXT)}\n"
    if not os.path.exists(path):
        entry = "# Progress\n" + entry
    append_line(path, entry)


def append_merge_request(state_dir: str, record: dict) -> None:
    append_line(merge_requests_path(state_dir), fastjson.dumps(redact(record, MAX_TEXT)))


def merge_requests(state_dir: str, run_id: str | None = None) -> list[dict]:
    """The recorded merge requests (of one run when given), oldest first."""
    found = []
    for line in read_lines(merge_requests_path(state_dir)):
        try:
            entry = fastjson.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(entry, dict) and (run_id is None or entry.get("run_id") == run_id):
            found.append(entry)
    return found
