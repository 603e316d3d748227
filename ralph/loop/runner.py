"""The loop: for each stage, pick the next story, run a fresh agent on it,
verify, commit, mark it done; stop with a finish type and an exit code.

    run_loop: start -> each stage (build: next story -> iteration; plan:
              planning iterations) -> final finish -> end

One build iteration is ralph.loop.iteration, one planning iteration
ralph.loop.planning; what the run holds is ralph.loop.run.

Files written (all under `.ralph/`, all by temp file + rename or O_APPEND):
run.json (every iteration start and the finish), events.jsonl (one line per
iteration, wait, stage end and run end), failures.jsonl (via
ralph.run.failures), logs/<run>/<iteration>-<story>.log, runs/<run>/ (the
report, ralph.loop.delivery), loop.lock (ralph.loop.recovery), the plan's
checkboxes and progress.md; the whole list is in docs/loop.md.
"""
from __future__ import annotations

import os
import time

from ralph.config.schema import ConfigError
from ralph.loop import budgets, delivery, hook_calls, preflight, recovery, sandbox_layer, set_aside, waits
from ralph.loop.display import Display, format_duration
from ralph.loop.iteration import build_iteration
from ralph.loop.planning import plan_iteration
from ralph.loop.run import FINISH_EXIT, Finish, Run, exit_code
from ralph.plan import PlanError, Story
from ralph.run import paths, records
from ralph.run.clock import utc_now
from ralph.run.proc import GitError, Interrupts, head_sha
from ralph.run.settings import LoopSettings


def run_loop(settings: LoopSettings, plan_path: str, display: Display, clock: waits.Clock | None = None) -> int:
    """The whole run; its exit code. A second loop on the same project is
    refused before it reads or writes any state of the running one.
    `clock`: the wall clock and sleeping of waits (tests pass a fake)."""
    interrupts = Interrupts()  # SIGINT/SIGTERM stop the run (their handlers are the loop's while it runs)
    run = Run(settings, plan_path, display, interrupts, clock or waits.Clock())
    lock = recovery.LoopLock(run.state_dir)
    try:
        lock.acquire()
    except recovery.AnotherLoopRunning as e:
        return refused(display, e)
    except OSError as e:
        display.message(f"finished: error — cannot take {lock.path}: {e.strerror or e}")
        display.close()
        return FINISH_EXIT["error"]
    interrupts.install()
    try:
        try:
            start(run)
            for index in range(run.stage_index, len(settings.stages)):
                run_stage(run, index)
                if settings.once:
                    break
            raise final_finish(run)
        except recovery.AnotherLoopRunning as e:  # one recorded in run.json that took no lock (an older version)
            return refused(display, e)
        except Finish as finish:
            return end(run, finish)
        except (GitError, PlanError, ConfigError, OSError) as e:
            return end(run, Finish("error", str(e)))
    finally:
        interrupts.restore()
        if interrupts.watchdog is not None:
            interrupts.watchdog.close()
        lock.release()
        display.close()


def refused(display: Display, refusal: recovery.AnotherLoopRunning) -> int:
    """Another loop runs here: say so and stop, writing nothing (no finish in
    run.json, no event, no hook): its state is the running loop's."""
    display.message(f"refused: {refusal}")
    display.close()
    return FINISH_EXIT["error"]


def start(run: Run) -> None:
    """Before the first iteration: a commit to roll back to, what a killed run
    left put right, what would fail every iteration (preflight), the sandbox
    layer, the lifecycle hooks, the stage to start in."""
    head_sha(run.root)
    recovery.recover_from_crash(run)
    preflight.check(run)  # what would fail in every iteration ends the run now, with its reason
    branch = delivery.start(run)  # a dirty tree refused; the run branch checked out (with its own .ralph/.gitignore)
    paths.ensure_gitignore(run.root, run.state_dir)
    run.sandbox = sandbox_layer.prepare(run)
    hook_calls.load(run)
    if budgets.carried_line(run):
        run.display.message(budgets.carried_line(run))
    records.append_event(run.state_dir, {
        "event": "run_start", "run_id": run.run_id, "at": run.started_at, "plan": run.plan_rel,
        "stages": [s.name for s in run.settings.stages], "stories": plan_states(run), **branch,
    })
    run.stage_index = records.resume_stage_index(run.state_dir, run.settings.stages)  # session_start sees it
    hook_calls.session_start(run)


def run_stage(run: Run, index: int) -> None:
    run.stage_index = index
    run.stage = stage = run.settings.stages[index]
    run.no_progress = 0
    if stage.mode == "plan":
        run_plan_stage(run)
    else:
        run_build_stage(run)
    records.append_event(run.state_dir, {
        "event": "stage_complete", "run_id": run.run_id, "stage": stage.name,
        "mode": stage.mode, "at": utc_now(), "iterations": run.iteration, "stories": plan_states(run),
    })
    hook_calls.stage_complete(run)


def run_build_stage(run: Run) -> None:
    """Story after story until none is left to do, or a limit ends the run."""
    stage_iterations = 0
    while True:
        run.check_stop_requests()
        story = next_story(run, stage_iterations)
        if story is None:
            return
        if budgets.exhausted(run, story):
            continue
        if build_iteration(run, story):  # a retry after a usage limit, transient error or hang does not count
            stage_iterations += 1
        budgets.check_run(run)  # a spent budget is the finish, not "no progress"
        limit = run.settings["no_progress_limit"]
        if limit and run.no_progress >= limit:
            raise Finish("no_changes", f"no progress in {run.no_progress} iteration(s) in a row (no commit, no story state change); last story: {story.id}")


def next_story(run: Run, stage_iterations: int) -> Story | None:
    """The first story to do by priority; None when every story is done or
    blocked, or when this stage used up its own max_iterations (only the stage
    ends: the next one runs; after the last, final_finish says max_iterations).
    At the run's cap (--max-iterations, --once) the whole run ends."""
    stories = run.stories()
    todo = [s for s in stories if s.state == "todo"]
    if not todo:
        return None
    if run_cap_reached(run) or (run.settings.once and stage_iterations):
        done = sum(1 for s in stories if s.state == "done")
        raise Finish("max_iterations", f"{done}/{len(stories)} stories done after {run.iteration} iteration(s); next: {todo[0].id}")
    if iteration_limit_reached(run, stage_iterations):
        return None
    return todo[0]


def run_plan_stage(run: Run) -> None:
    """Let the agent write or refine the plan; no commits, no stories marked.
    Ends after the stage's iterations, or early once an iteration leaves a
    valid plan unchanged."""
    stage = run.stage
    assert stage is not None
    stage_iterations = 0
    while True:
        run.check_stop_requests()
        if iteration_limit_reached(run, stage_iterations) or (run.settings.once and stage_iterations):
            break
        budgets.check_run(run)
        uncounted = run.uncounted
        if plan_iteration(run):
            break
        if run.uncounted == uncounted:  # a retry after a usage limit, transient error or hang does not count
            stage_iterations += 1
    try:
        stories = run.stories()
    except FileNotFoundError:
        raise Finish("error", f"the {stage.name} stage ended without a plan at {run.plan_rel}") from None
    if not stories:
        raise Finish("error", f"the {stage.name} stage ended with no stories in {run.plan_rel}")


def iteration_limit_reached(run: Run, stage_iterations: int) -> bool:
    assert run.stage is not None
    return stage_iterations >= run.stage.max_iterations or run_cap_reached(run)


def run_cap_reached(run: Run) -> bool:
    """--max-iterations: counted iterations across the whole run."""
    cap = run.settings.max_total_iterations
    return cap is not None and run.iteration - run.uncounted >= cap


def final_finish(run: Run) -> Finish:
    """After the last stage: complete, or blocked when stories were skipped."""
    try:
        stories = run.stories()
    except (OSError, PlanError) as e:
        return Finish("error", str(e))
    done = sum(1 for s in stories if s.state == "done")
    blocked = [s.id for s in stories if s.state == "blocked"]
    todo = [s.id for s in stories if s.state == "todo"]
    summary = f"{done}/{len(stories)} stories done"
    last = run.settings.stages[-1] if run.settings.stages else None
    if todo and last is not None and last.mode == "build" and not run.settings.once:
        # a build stage ends with stories to do only at its own max_iterations
        return Finish("max_iterations", f"{summary} after {run.iteration} iteration(s); the {last.name} stage used its "
                                        f"max_iterations ({last.max_iterations}); next: {todo[0]}")
    if todo:  # --once, or a pipeline that ends with a plan stage
        return Finish("max_iterations" if run.settings.once else "complete", f"{summary}; next: {todo[0]}")
    if blocked:
        return Finish("blocked", f"{summary}; blocked: {', '.join(blocked)}")
    return Finish("complete", summary)


def end(run: Run, finish: Finish) -> int:
    """The finish in run.json and events.jsonl, the hand-off and report, the
    person's changes put back (--allow-dirty: after the run's own leftovers
    are recorded, so the next run does not take them for the run's),
    session_end, the last line; the exit code."""
    code = exit_code(finish, run.interrupts.signum)
    elapsed = time.monotonic() - run.started
    state = dict(run.state or {"run_id": run.run_id, "iteration": run.iteration, "story": None,
                               "checkpoint": None, "run_started": run.started_at, "branch": run.branch})
    state.update({
        "status": "finished",
        "pid": os.getpid(),
        "usage": run.usage.to_json(),
        "waiting": None,
        "finish": {"type": finish.type, "at": utc_now(), "message": finish.message,
                   "exit_code": code, "iterations": run.iteration, "done": run.done_this_run},
    })
    try:
        records.write_run_state(run.state_dir, state)
        records.append_event(run.state_dir, {
            "event": "finish", "run_id": run.run_id, "type": finish.type, "message": finish.message,
            "exit_code": code, "at": utc_now(), "iterations": run.iteration, "elapsed_s": round(elapsed, 3),
            "stories": plan_states(run),
        })
    except OSError as e:
        run.display.message(f"could not record the finish in {run.state_dir}: {e}")
    problem = delivery.finish(run, finish)  # the hand-off, the report
    if run.set_aside is not None:
        set_aside.put_back(run, run.set_aside)
        run.set_aside = None
    hook_calls.session_end(run, finish, elapsed)
    run.display.message(
        f"finished: {finish.type} — {finish.message}{problem} ({run.iteration} iteration(s), {format_duration(elapsed)}, exit {code})"
    )
    for line in (delivery.report_line(run), delivery.checkout_line(run)):
        if line:
            run.display.message(line)
    return code


def plan_states(run: Run) -> list[dict] | None:
    """Each story of the plan with its state now: at the start, a stage's end and the finish (the
    report's stories done, blocked and left, also of a run killed before its finish). None: no plan yet."""
    try:
        return [{"id": s.id, "title": s.title, "state": s.state} for s in run.stories()]
    except (OSError, PlanError):
        return None

