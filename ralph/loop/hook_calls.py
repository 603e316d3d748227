"""The loop's side of its lifecycle hooks (ralph.loop.lifecycle): the engine
loaded once per run, and every hook point fired from exactly one line here,
with the run's context. A hook abort ends the run (finish type hook_abort);
`.ralph/hooks/next_iteration` exiting 1 skips an iteration."""
from __future__ import annotations

import os
import time

from ralph.loop import delivery
from ralph.loop.lifecycle.engine import FireResult, load_engine
from ralph.loop.prompt import pending_hook_output
from ralph.loop.run import Finish, Iteration, Run
from ralph.run import paths
from ralph.run import records
from ralph.run.clock import utc_now
from ralph.run.proc import git

# iteration results that fire the on_error hook point
ERROR_RESULTS = ("agent_not_started", "agent_failed", "timeout", "verify_failed", "commit_failed", "plan_invalid", "no_plan")


def load(run: Run) -> None:
    """The hook engine, kept only when some hook is configured; ConfigError lists every hook error."""
    engine = load_engine(run.root, run.settings.config_path, state_dir=run.state_dir, run_id=run.run_id,
                         log_dir=run.log_dir, display=run.display, stopping=lambda: run.interrupts.stopping)
    if engine.hooks.all() or engine.hooks.warnings:
        run.hooks = engine
    # now, not at the first fire: a lone non-executable hook makes no point fire
    engine.warn_once()


def fire(run: Run, point: str, **extra: object) -> FireResult | None:
    """Fire one hook point with the loop's context (a callable value is
    computed only when a hook runs); a hook abort ends the run."""
    if run.hooks is None or not run.hooks.has(point) or (run.interrupts.stopping and point != "session_end"):
        return None
    extra = {k: (v() if callable(v) else v) for k, v in extra.items()}
    fired = run.hooks.fire(point, loop_context(run, **extra))
    if fired.abort and point != "session_end":
        raise Finish("hook_abort", f"aborted by a hook: {fired.abort}")
    return fired


def session_start(run: Run) -> None:
    fire(run, "session_start")


def stage_complete(run: Run) -> None:
    fire(run, "stage_complete")


def skipped_by_hook(run: Run, it: Iteration) -> bool:
    """Fire pre_iteration. True when `.ralph/hooks/next_iteration` exited 1:
    the iteration is recorded as skipped and no agent runs."""
    try:
        pre = fire(run, "pre_iteration", story=it.story)
    except BaseException:
        it.log.close()
        raise
    if pre is None or not pre.skip:
        return False
    it.log.close()
    it.event.update(result="skipped_by_hook", ended=utc_now(), duration_s=round(time.monotonic() - it.started, 3))
    records.append_event(run.state_dir, it.event)
    run.last_result, run.last_event = "skipped_by_hook", it.event
    run.no_progress += 1
    run.display.message(f"iteration {run.iteration}: skipped by .ralph/hooks/next_iteration")
    return True


def after_iteration(run: Run, it: Iteration, result: str) -> None:
    """on_task_complete or on_error, then post_iteration."""
    run.iteration_logs.append((it.stage.name, os.path.abspath(it.log_path)))
    changed = lambda: changed_files(run.root, it.checkpoint)  # noqa: E731 - computed only when a hook runs
    if result == "done":
        fire(run, "on_task_complete", story=it.story, changed_files=changed)
    elif result in ERROR_RESULTS or it.event.get("agent_timed_out"):
        fire(run, "on_error", story=it.story, changed_files=changed, error=it.event.get("error") or run.last_error or result)
    fire(run, "post_iteration", story=it.story, changed_files=changed)


BLOCKED_TEXT = 4000  # characters of a reason or question: as report_blocked records them, so the report shows them whole


def story_blocked(run: Run, story_id: str, title: str, reason: str, by: str, question: str = "", **detail: object) -> None:
    """A story was marked blocked ([!]) by its budget, the guard or the agent:
    its events.jsonl line, then the story_blocked point (a webhook can page someone)."""
    event: dict = {"event": "story_blocked", "run_id": run.run_id, "story": story_id, "at": utc_now(), "reason": reason, "by": by}
    if question:
        event["question"] = question
    event.update(detail)
    records.append_event(run.state_dir, event, BLOCKED_TEXT)
    fire(run, "story_blocked", story_id=story_id, story_title=title, reason=reason, question=question)
def usage_limit(run: Run, reset_at: str, wait_seconds: float, reason: str) -> None:
    """The run waits for a usage limit (ralph.loop.waits): when it resets, how long, what the client said."""
    fire(run, "usage_limit", reset_at=reset_at, wait_seconds=wait_seconds, reason=reason)


def session_end(run: Run, finish: Finish, elapsed: float) -> None:
    """session_end always runs (its failures change nothing); then the
    fire-and-forget hooks are stopped and leftover hook output is shown."""
    if run.hooks is None:
        return
    try:
        fire(run, "session_end", finish_type=finish.type, finish_message=finish.message,
             total_iterations=run.iteration, total_commits=len(run.done_this_run), duration=round(elapsed, 3),
             **delivery.session_end_context(run))
    except Exception as e:  # noqa: BLE001 - the run is over; report, never crash the finish
        run.display.message(f"hooks: session_end failed: {e}")
    finally:
        run.hooks.close()
    left = pending_hook_output(run.state_dir)
    if left:
        run.display.message(f"hook output not yet seen by the agent (kept in {paths.relative(run.root, run.state_dir)}/hook_output.json for the next run's first prompt):\n{left.rstrip()}")


def changed_files(root: str, checkpoint: str) -> list[str]:
    code, out = git(root, "diff", "--name-only", checkpoint)
    return out.splitlines() if code == 0 else []


def loop_context(run: Run, **extra: object) -> dict:
    """The context of the running loop (ralph.loop.lifecycle.context.VARIABLES),
    plus point-specific values."""
    stages = run.settings.stages
    index = run.stage_index
    stage = run.stage or (stages[index] if index < len(stages) else None)
    next_stage = stages[index + 1].name if stage is not None and index + 1 < len(stages) else ""
    limit = run.settings.max_total_iterations or (stage.max_iterations if stage is not None else 0)
    last = run.last_event or {}
    story = extra.pop("story", None)  # a Story, or None outside a build iteration
    context: dict = {
        "session": run.run_id,
        "stage": stage.name if stage is not None else "",
        "next_stage": next_stage,
        "mode": stage.mode if stage is not None else "",
        "iteration": run.iteration,
        "max_iterations": limit,
        "project_dir": run.root,
        "log_dir": run.log_dir,
        "plan_file": os.path.abspath(run.plan_path),
        "progress_file": os.path.abspath(run.progress_path),
        "started_at": run.started_at,
        "last_exit_code": last.get("agent_exit", ""),
        "last_duration": last.get("duration_s", ""),
        "last_result": run.last_result,
        "commits_made": len(run.done_this_run),
        "stage_outputs": [log for name, log in run.iteration_logs if stage is not None and name == stage.name],
    }
    if story is not None:
        context["story_id"] = story.id
        context["story_title"] = story.title
    elif last.get("story"):
        context["story_id"] = last.get("story")
        context["story_title"] = last.get("title", "")
    context.update(extra)
    return context
