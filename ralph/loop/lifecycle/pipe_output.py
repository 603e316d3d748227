"""`pipe_output = true`: a hook's output kept for the next agent prompt, one
entry appended to the pending buffer (ralph.loop.lifecycle.pending; temp
file + rename). Bounded: one hook's output beyond MAX_ENTRY_CHARS keeps its
head and tail; beyond MAX_TOTAL_CHARS the oldest entries go first, and the
prompt says how many. Everything kept (the output, the hook's label) is
redacted first: the buffer is a file, and its text reaches the prompt."""
from __future__ import annotations

import json

from ralph.loop.lifecycle.pending import clear, path_in, read
from ralph.redaction import redact
from ralph.state.files import atomic_write

MAX_ENTRY_CHARS = 8000  # one hook's output: its head and tail beyond this
MAX_TOTAL_CHARS = 32000  # the whole block: the oldest entries go first beyond this


def write(state_dir: str, entries: list[dict]) -> None:
    if not entries:
        clear(state_dir)
        return
    atomic_write(path_in(state_dir), json.dumps({"version": 1, "entries": entries}, ensure_ascii=False, indent=1) + "\n")


def shorten(text: str, limit: int = MAX_ENTRY_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f"\n[... {len(text) - 2 * half} characters cut ...]\n" + text[-half:]


def add(state_dir: str, entry: dict) -> None:
    """Append one hook's output; beyond the bound the oldest entries are dropped
    (and counted, so the prompt says so)."""
    entries = read(state_dir)
    # redacted first, then cut: a cut never leaves half a secret unrecognised
    entry = dict(entry, text=shorten(str(redact(entry["text"])).strip()), label=redact(str(entry.get("label", ""))))
    entries.append(entry)
    dropped = 0
    while len(entries) > 1 and sum(len(e["text"]) for e in entries) > MAX_TOTAL_CHARS:
        dropped += 1 + int(entries[0].get("dropped", 0))
        entries.pop(0)
    if dropped:
        entries[0]["dropped"] = int(entries[0].get("dropped", 0)) + dropped
    write(state_dir, entries)
