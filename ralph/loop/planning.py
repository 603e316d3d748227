"""One planning iteration: the agent writes or refines the plan. Nothing is
committed and no story is completed (a story the planner ticks done is put
back). The stage has converged once an iteration leaves a valid plan
unchanged."""
from __future__ import annotations

import hashlib
import time

from ralph.loop import guarding, hook_calls, prepare, waits
from ralph.loop.agent import run_agent
from ralph.loop.run import Finish, Iteration, Run
from ralph.plan import PlanError, load_stories, set_story_state
from ralph.run import records
from ralph.run.clock import utc_now


def plan_iteration(run: Run) -> bool:
    """True when the plan is valid and unchanged (converged)."""
    it = prepare.begin(run, None)
    before = plan_digest(run.plan_path)
    states_before = story_states(run.plan_path)
    if hook_calls.skipped_by_hook(run, it):
        return False
    try:
        prompt = prepare.plan_prompt(run, it)
        prepare.announce_planning(run, it)
        agent = run_agent(run, it, prompt)
    finally:
        it.log.close()
    if agent.error:
        raise Finish("error", agent.error)
    guarded = guarding.judge(run, it)
    changed = plan_digest(run.plan_path) != before
    result, valid = judge_plan(run, it, changed, states_before)
    if agent.interrupted:
        result = "interrupted"
    elif guarded:
        result = guarded
    elif agent.timed_out:
        run.fail("PLAN", "timeout", f"the planning agent was stopped after {it.stage.timeout_seconds:g}s")
    retry = waits.planning_retry(run, it, agent.outcome, result)  # a usage limit, transient error or hang
    record(run, it, retry.result if retry is not None else result)
    if agent.interrupted:
        run.check_stop_requests()
    if retry is not None:
        waits.wait(run, it, retry)
        return False
    return valid and not changed and not agent.timed_out and agent.exit_code == 0 and not guarded


def judge_plan(run: Run, it: Iteration, changed: bool, states_before: dict[str, str]) -> tuple[str, bool]:
    """(result, valid) of the plan the agent left; stories it ticked done are put back."""
    result = "plan_changed" if changed else "plan_unchanged"
    try:
        stories = run.stories()
        it.event["stories"] = len(stories)
        states_after = {s.id: s.state for s in stories}
        flipped = [sid for sid, st in states_after.items() if st == "done" and states_before.get(sid) not in (None, "done")]
        if flipped:  # planning never completes stories
            for sid in flipped:
                set_story_state(run.plan_path, sid, states_before[sid])
            run.fail("PLAN", "plan", f"the planning agent marked {', '.join(flipped)} done; reverted (only build iterations complete stories)")
    except FileNotFoundError:
        run.fail("PLAN", "plan", f"the planning agent did not write {run.plan_rel}")
        return "no_plan", False
    except PlanError as e:
        run.fail("PLAN", "plan", str(e))
        return "plan_invalid", False
    return result, True


def record(run: Run, it: Iteration, result: str) -> None:
    it.event.update(result=result, ended=utc_now(), duration_s=round(time.monotonic() - it.started, 3))
    records.append_event(run.state_dir, it.event)
    run.last_result = result
    run.last_event = it.event
    hook_calls.after_iteration(run, it, result)
    run.display.message(f"iteration {run.iteration}: {result}")


def plan_digest(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return hashlib.sha1(f.read()).hexdigest()
    except OSError:
        return ""


def story_states(path: str) -> dict[str, str]:
    try:
        return {s.id: s.state for s in load_stories(path)}
    except (OSError, PlanError):
        return {}
