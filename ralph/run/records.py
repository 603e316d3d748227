"""The loop's records: `.ralph/run.json` (temp file + fsync + rename, format in
ralph.run.state), `.ralph/events.jsonl` (one JSON line per iteration, stage end
and run end, O_APPEND) and progress.md notes."""
from __future__ import annotations

import json
import os
import secrets
import time

from ralph.redaction import redact
from ralph.run.clock import utc_now
from ralph.run.paths import EVENTS_FILE
from ralph.run.settings import Stage
from ralph.run.state import FORMAT_VERSION, RUN_FILE
from ralph.state.files import append_line, atomic_write, read_json_object, read_lines


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


def write_run_state(state_dir: str, state: dict) -> None:
    body = {"version": FORMAT_VERSION}
    body.update(redact(state, items=None))  # whole lists: the report and `ralph status` count them
    atomic_write(os.path.join(state_dir, RUN_FILE), json.dumps(body, indent=2, ensure_ascii=False) + "\n")


def read_run_state(state_dir: str) -> dict | None:
    return read_json_object(os.path.join(state_dir, RUN_FILE))


def append_event(state_dir: str, event: dict, limit: int | None = None) -> None:
    """`limit`: characters kept per string (ralph.rules.redact.FIELD_LIMIT when None)."""
    # whole lists (a plan's 500 stories): the report counts what it reads here; the
    # writers cap what they mean to cap (diffstat paths, denials) and record the count
    append_line(os.path.join(state_dir, EVENTS_FILE), json.dumps(redact(event, limit, items=None), ensure_ascii=False))


def read_events(state_dir: str) -> list[dict]:
    events = []
    for line in read_lines(os.path.join(state_dir, EVENTS_FILE)):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def append_progress(path: str, story_id: str, title: str, iteration: int, run_id: str, notes: str = "") -> None:
    """One dated entry per finished story: the next stories' prompts read it."""
    entry = f"\n## {utc_now()} {story_id}: {title}\nDone in iteration {iteration} of run {run_id}."
    if notes:
        entry += " " + notes
    if not os.path.exists(path):
        entry = "# Progress\n" + entry
    append_line(path, entry + "\n")


def resume_stage_index(state_dir: str, stages: list[Stage]) -> int:
    """A pipeline resumes at the stage the previous run stopped in (run.json)."""
    if len(stages) < 2:
        return 0
    previous = read_run_state(state_dir) or {}
    finish = previous.get("finish") or {}
    name = previous.get("stage_name")
    if finish.get("type") == "complete" or not name:
        return 0
    for index, stage in enumerate(stages):
        if stage.name == name:
            return index
    return 0
