"""Before the agent runs: the iteration begins at a checkpoint (HEAD, what a
failed iteration is rolled back to) with its own log file, run.json naming it
(what the next run reads if this one is killed) and its events.jsonl line
begun; then its prompt is rendered and the iteration announced."""
from __future__ import annotations

import os
import time

from ralph.loop import prompt as prompts
from ralph.loop.run import Iteration, Run
from ralph.plan import Story
from ralph.run import paths
from ralph.run import records
from ralph.run.clock import utc_now
from ralph.run.proc import RedactedLog, head_sha, process_identity
from ralph.run.settings import resolve


def begin(run: Run, story: Story | None) -> Iteration:
    """A new iteration of the current stage on `story` (None: planning)."""
    stage = run.stage
    assert stage is not None
    run.iteration += 1
    checkpoint = head_sha(run.root)
    started_at = utc_now()
    started = time.monotonic()
    log_path, log = open_log(run, story.id if story is not None else "plan")
    write_state(run, story, checkpoint, started_at, log_path)
    event: dict = {"event": "iteration", "run_id": run.run_id, "iteration": run.iteration, "stage": stage.name}
    if story is None:
        event.update(mode="plan", story=None)
    else:
        event.update(story=story.id, title=story.title)
    event.update(started=started_at, checkpoint=checkpoint, log=paths.relative(run.root, log_path))
    return Iteration(story, stage, checkpoint, started_at, started, log_path, log, event)


def open_log(run: Run, name: str) -> tuple[str, RedactedLog]:
    os.makedirs(run.log_dir, exist_ok=True)
    path = os.path.join(run.log_dir, f"{run.iteration:03d}-{name}.log")
    return path, RedactedLog(open(path, "ab"))


def write_state(run: Run, story: Story | None, checkpoint: str, started: str, log: str) -> None:
    stage = run.stage
    assert stage is not None
    run.state = {
        "run_id": run.run_id,
        "status": "running",
        "iteration": run.iteration,
        "story": None if story is None else {
            "id": story.id, "title": story.title, "criteria": story.criteria, "source": run.plan_rel,
        },
        "checkpoint": checkpoint,
        "started": started,
        "pid": os.getpid(),
        "loop": process_identity(os.getpid()),  # the next run tells a live loop from a killed one
        "stage": stage.mode,
        "stage_name": stage.name,
        "run_started": run.started_at,
        "log": paths.relative(run.root, log),
        "usage": run.usage.to_json(),  # the run's totals so far (ralph.loop.usage)
        "waiting": None,
        "branch": run.branch,
        "finish": None,
    }
    records.write_run_state(run.state_dir, run.state)


def story_prompt(run: Run, it: Iteration, attempt: int) -> str:
    """The build prompt; hook output waiting for it is delivered (and dropped)."""
    assert it.story is not None
    text = prompts.story_prompt(
        root=run.root, state_dir=run.state_dir, plan_path=run.plan_path, progress_path=run.progress_path,
        template_path=resolve(run.root, it.stage.prompt) if it.stage.prompt else None,
        verify_command=it.stage.verify_command, story=it.story, iteration=run.iteration,
        story_iteration=attempt, run_id=run.run_id, stage=it.stage.name,
        hook_output=prompts.pending_hook_output(run.state_dir),
    )
    prompts.clear_hook_output(run.state_dir)  # delivered: the hook output is in this prompt
    return text


def plan_prompt(run: Run, it: Iteration) -> str:
    text = prompts.plan_prompt(
        root=run.root, state_dir=run.state_dir, plan_path=run.plan_path, progress_path=run.progress_path,
        template_path=resolve(run.root, it.stage.prompt) if it.stage.prompt else None,
        verify_command=run.settings["verify_command"], iteration=run.iteration, run_id=run.run_id,
        stage=it.stage.name, hook_output=prompts.pending_hook_output(run.state_dir),
    )
    prompts.clear_hook_output(run.state_dir)  # delivered: it is in this prompt
    return text


def announce_story(run: Run, it: Iteration, attempt: int) -> None:
    """The iteration's line, the status line and the log's first line."""
    story = it.story
    assert story is not None
    run.display.message(f"iteration {run.iteration}: {story.id}: {story.title} (attempt {attempt})")
    status_line(run, story.id)
    it.log.write(f"=== ralph-loop {run.run_id} iteration {run.iteration} {story.id} {it.started_at}\n".encode())


def announce_planning(run: Run, it: Iteration) -> None:
    run.display.message(f"iteration {run.iteration}: planning ({it.stage.name}) -> {run.plan_rel}")
    status_line(run, "planning")


def status_line(run: Run, story: str) -> None:
    stage = run.stage
    assert stage is not None
    limit = run.settings.max_total_iterations or stage.max_iterations
    run.display.status(
        f"ralph-loop {stage.name} · iteration {run.iteration}/{limit} · {story} · {{elapsed}}"
        + (f" · last: {run.last_result}" if run.last_result else "")
    )
