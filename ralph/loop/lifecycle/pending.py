"""The pending buffer of `pipe_output` hook output: FIFO, bounded, kept on
disk in `.ralph/hook_output.json` (temp file + rename), so what a hook said
before a crash still reaches the next prompt of a resumed run. Drained into
the `{{hook_output}}` block of the next agent prompt."""
from __future__ import annotations

import os

from ralph.state.files import atomic_write

PENDING_FILE = "hook_output.json"
MAX_ENTRY_CHARS = 8000  # one hook's output: its head and tail beyond this
MAX_TOTAL_CHARS = 32000  # the whole block: the oldest entries go first beyond this


def path_in(state_dir: str) -> str:
    return os.path.join(state_dir, PENDING_FILE)


def read(state_dir: str) -> list[dict]:
    """The pending entries, oldest first. An unreadable file is moved aside
    (kept for a person to look at) and counts as empty."""
    import json  # here: the dry run imports this module for PENDING_FILE

    path = path_in(state_dir)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
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


def write(state_dir: str, entries: list[dict]) -> None:
    import json

    path = path_in(state_dir)
    if not entries:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    atomic_write(path, json.dumps({"version": 1, "entries": entries}, ensure_ascii=False, indent=1) + "\n")


def shorten(text: str, limit: int = MAX_ENTRY_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f"\n[... {len(text) - 2 * half} characters cut ...]\n" + text[-half:]


def add(state_dir: str, entry: dict) -> None:
    """Append one hook's output; beyond the bound the oldest entries are dropped
    (and counted, so the prompt says so)."""
    entries = read(state_dir)
    entry = dict(entry, text=shorten(entry["text"].strip()))
    entries.append(entry)
    dropped = 0
    while len(entries) > 1 and sum(len(e["text"]) for e in entries) > MAX_TOTAL_CHARS:
        dropped += 1 + int(entries[0].get("dropped", 0))
        entries.pop(0)
    if dropped:
        entries[0]["dropped"] = int(entries[0].get("dropped", 0)) + dropped
    write(state_dir, entries)


def render(entries: list[dict]) -> str:
    """The prompt block for the entries ("" when there are none)."""
    if not entries:
        return ""
    parts = ["## Output from the project's hooks since the last iteration",
             "Lint and check hooks ran between iterations; fix what they report if it concerns your story."]
    for entry in entries:
        if entry.get("dropped"):
            parts.append(f"({entry['dropped']} older hook output(s) dropped: the buffer is bounded)")
        head = f"### {entry.get('point', 'hook')} · {entry.get('label', '')}"
        if entry.get("iteration") not in (None, ""):
            head += f" · iteration {entry['iteration']}"
        status = entry.get("status")
        if status and status != "success":
            head += f" · {status}" + (f" (exit {entry['exit']})" if entry.get("exit") not in (None, "") else "")
        parts.append(f"{head}\n```\n{entry['text']}\n```")
    return "\n\n".join(parts) + "\n"
