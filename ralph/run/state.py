"""`.ralph/run.json`: what the loop is doing right now.

Written by ralph-loop (temp file + fsync + rename) at the start of every
iteration and when the run finishes; read by the hooks on every prompt and
stop. Format, version 1:

    {
      "version": 1,
      "run_id": "20261121-235500-4f2a",      # one per ralph-loop invocation
      "status": "running",                    # "running" while an agent works; "finished" after
      "iteration": 3,                         # 1-based, counts across the run
      "story": {                              # the story this iteration works on
        "id": "US-001",
        "title": "Add a login page",
        "criteria": ["shows a form", "..."],  # acceptance criteria lines, may be []
        "source": ".ralph/plan.md"            # the plan file the story lives in (relative to the root)
      },
      "checkpoint": "<40-hex sha>",           # HEAD before the iteration: what a rollback restores
      "started": "2026-11-21T23:55:00Z",      # this iteration's start, UTC
      "pid": 12345,                           # the ralph-loop process
      "stage": "build",                       # "build" or "plan"
      "finish": null                          # or {"type": "complete"|..., "at": "...", "message": "..."}
    }

A run is *active* when status is "running" and both story.id and checkpoint
are present. Anything else (no file, a torn file, other values) is inactive:
hooks then behave as in an ordinary interactive session.
"""
import os

from ralph import fastjson

RUN_FILE = "run.json"
FORMAT_VERSION = 1


class ActiveRun:
    __slots__ = ("run_id", "iteration", "story_id", "story_title", "criteria", "source", "checkpoint", "stage", "raw")

    def __init__(self, raw: dict) -> None:
        story = raw["story"]
        self.raw = raw
        self.run_id = str(raw.get("run_id") or "")
        iteration = raw.get("iteration")
        self.iteration = iteration if isinstance(iteration, int) and not isinstance(iteration, bool) else 0
        self.story_id = story["id"]
        title = story.get("title")
        self.story_title = title if isinstance(title, str) else ""
        criteria = story.get("criteria")
        self.criteria = [c for c in criteria if isinstance(c, str)] if isinstance(criteria, list) else []
        source = story.get("source")
        self.source = source if isinstance(source, str) and source else ""
        self.checkpoint = raw["checkpoint"]
        stage = raw.get("stage")
        self.stage = stage if isinstance(stage, str) else "build"


def parse_active_run(text: str) -> ActiveRun | None:
    """Pure: the active run described by run.json's text, or None."""
    try:
        raw = fastjson.loads(text)
    except ValueError:
        return None
    if not isinstance(raw, dict) or raw.get("status") != "running":
        return None
    story = raw.get("story")
    if not isinstance(story, dict):
        return None
    if not isinstance(story.get("id"), str) or not story["id"]:
        return None
    checkpoint = raw.get("checkpoint")
    if not isinstance(checkpoint, str) or not checkpoint:
        return None
    return ActiveRun(raw)


def load_active_run(state_dir: str) -> ActiveRun | None:
    try:
        with open(os.path.join(state_dir, RUN_FILE), encoding="utf-8", errors="replace") as f:
            text = f.read(1024 * 1024)
    except OSError:
        return None
    return parse_active_run(text)
