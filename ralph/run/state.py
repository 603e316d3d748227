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

A run whose loop died without writing its finish is finished by whoever
finds it (the next ralph-loop, `ralph status`): status "finished", finish
type "crashed" (CRASHED), with "found_by" and, once a ralph-loop has put
right what it left (ralph.loop.recovery), "recovered_by": that run's id.

A run is *active* when status is "running", both story.id and checkpoint
are present, and its loop is alive: it holds `.ralph/loop.lock` (flock(2),
taken by ralph-loop for its whole run and released by the kernel however the
loop dies). A loop killed by SIGKILL, the OOM killer or a full disk leaves
"running" behind; its run is not active, and the next `ralph-loop` or `ralph
status` finishes it as `crashed`. Anything else (no file, a torn file, other
values, no live loop) is inactive: hooks then behave as in an ordinary
interactive session (no Stop gate, no story, no rollback of a person's work).
"""
import os

from ralph import fastjson

RUN_FILE = "run.json"
LOOP_LOCK_FILE = "loop.lock"  # ralph.loop.recovery.LoopLock holds it for the whole run
CRASHED = "crashed"  # the finish type of a run whose loop died without writing its own
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
    run = parse_active_run(text)
    if run is None or not loop_holds_lock(state_dir):
        return None  # run.json's "running" alone is a dead loop's word
    return run


def loop_holds_lock(state_dir: str) -> bool:
    """Does a live ralph-loop hold `.ralph/loop.lock` now? A probe: a shared
    non-blocking flock, dropped at once by closing the file. The loop holds
    the lock exclusively, so the probe fails exactly while the loop lives
    (whoever its pid now belongs to). No file, no flock on this system or
    this file system: no loop can run here."""
    try:
        import fcntl  # only when run.json says running: an interactive session never pays for it
    except ImportError:
        return False
    try:
        fd = os.open(os.path.join(state_dir, LOOP_LOCK_FILE), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False
