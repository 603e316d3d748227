"""The pending buffer of `pipe_output` hook output, as the next prompt reads
it: `.ralph/hook_output.json`, FIFO, kept on disk so what a hook said before
a crash still reaches the next prompt of a resumed run. Drained into the
`{{hook_output}}` block of the next agent prompt, then dropped. Entries are
added, redacted, by ralph.loop.lifecycle.pipe_output.

Read with ralph.fastjson (exactly json.loads): `ralph-loop --dry-run` shows
the block, and importing `json` would cost it more than the reading."""
from __future__ import annotations

import os

from ralph import fastjson
from ralph.redaction import redact

PENDING_FILE = "hook_output.json"


def path_in(state_dir: str) -> str:
    return os.path.join(state_dir, PENDING_FILE)


def read(state_dir: str) -> list[dict]:
    """The pending entries, oldest first. An unreadable file is moved aside
    (kept for a person to look at) and counts as empty."""
    path = path_in(state_dir)
    try:
        with open(path, encoding="utf-8") as f:
            data = fastjson.loads(f.read())
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        try:
            os.replace(path, path + ".corrupt")
        except OSError:
            pass
        return []
    entries = data.get("entries") if isinstance(data, dict) else None
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("text"), str)] if isinstance(entries, list) else []


def clear(state_dir: str) -> None:
    try:
        os.unlink(path_in(state_dir))
    except FileNotFoundError:
        pass


def render(entries: list[dict]) -> str:
    """The prompt block for the entries ("" when there are none)."""
    if not entries:
        return ""
    parts = ["## Output from the project's hooks since the last iteration",
             "Lint and check hooks ran between iterations; fix what they report if it concerns your story."]
    for entry in entries:
        if entry.get("dropped"):
            parts.append(f"({entry['dropped']} older hook output(s) dropped: the buffer is bounded)")
        head = f"### {entry.get('point', 'hook')} · {redact(str(entry.get('label', '')))}"
        if entry.get("iteration") not in (None, ""):
            head += f" · iteration {entry['iteration']}"
        status = entry.get("status")
        if status and status != "success":
            head += f" · {status}" + (f" (exit {entry['exit']})" if entry.get("exit") not in (None, "") else "")
        parts.append(f"{head}\n```\n{redact(entry['text'])}\n```")  # (a buffer an older version wrote unredacted)
    return "\n\n".join(parts) + "\n"
