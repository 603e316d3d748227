"""`.ralph/failures.jsonl`: what went wrong, fed into the next prompt.

One JSON object per line, appended with O_APPEND; the file is rotated to
failures.jsonl.1 past MAX_BYTES so it stays bounded. Fields: at (UTC),
run_id, iteration, story, kind ("test_failure", "rollback", "verify",
"stop_incomplete", ...), summary (one line) and excerpt (bounded text). Every string is redacted
(ralph.redaction) and bounded before it is written.
"""
import os
import time

from ralph import fastjson
from ralph.redaction import redact
from ralph.state.files import append_line, read_lines, rotate_if_larger

FAILURES_FILE = "failures.jsonl"
MAX_BYTES = 1024 * 1024
MAX_EXCERPT = 4000
MAX_FIELD = 2000  # every other string in a record


def record_failure(state_dir: str, record: dict) -> None:
    path = os.path.join(state_dir, FAILURES_FILE)
    rotate_if_larger(path, MAX_BYTES)
    entry = {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    entry.update(record)
    excerpt = entry.pop("excerpt", None)
    entry = redact(entry, MAX_FIELD)
    if isinstance(excerpt, str):
        entry["excerpt"] = redact(excerpt, MAX_EXCERPT, tail=True)  # the end of an output says most
    append_line(path, fastjson.dumps(entry))


def recent_failures(state_dir: str, run_id: str | None = None, limit: int = 3) -> list[dict]:
    """The newest `limit` failure records (of one run when run_id is given), oldest first."""
    found: list[dict] = []
    for line in reversed(read_lines(os.path.join(state_dir, FAILURES_FILE), max_bytes=MAX_BYTES * 2)):
        try:
            entry = fastjson.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        if run_id is not None and entry.get("run_id") != run_id:
            continue
        found.append(entry)
        if len(found) >= limit:
            break
    found.reverse()
    return found


MAX_FAILURE_EXCERPT = 1500  # characters of one failure's excerpt in a prompt


def failure_context(state_dir: str, story_id: str | None, limit: int = 3) -> str:
    """The newest failures recorded for this story (any run), as prompt text."""
    found = [f for f in recent_failures(state_dir, None, limit=50) if story_id is None or f.get("story") == story_id]
    found = found[-limit:]
    if not found:
        return "(none)"
    parts = []
    for entry in found:
        head = f"- iteration {entry.get('iteration', '?')} ({entry.get('kind', 'failure')}): {entry.get('summary', '')}".rstrip()
        excerpt = entry.get("excerpt")
        if isinstance(excerpt, str) and excerpt.strip():
            text = excerpt.strip()
            if len(text) > MAX_FAILURE_EXCERPT:
                text = "…" + text[-MAX_FAILURE_EXCERPT:]
            head += "\n  ```\n" + "\n".join("  " + line for line in text.splitlines()) + "\n  ```"
        parts.append(head)
    return "\n".join(parts)
