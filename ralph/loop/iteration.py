"""One build iteration: a fresh agent on one story, then the loop's
judgement. The agent only says a story is done (it ticks the plan); the
guard's record, the verify command and git decide whether it is.

    begin at a checkpoint -> prompt -> agent -> judge -> record

judge: the agent could not start; the guard failed the iteration (git
hooks/config changed, a merge or foreign commits, too many denials); the run
is being stopped; the story is left blocked by the agent (report_blocked:
its work saved and reset, the story_blocked point fired); the story is not
marked done (a usage limit, a transient API error or a hang:
ralph.loop.waits may retry it uncounted; the client's budget cap, timeout,
agent exit, incomplete); verify failed (rolled back, not run again when
complete_story passed on the very same tree); else it is committed.
"""
from __future__ import annotations

import time

from ralph.loop import agent_tools, guarding, hook_calls, prepare, verify, waits
from ralph.loop.agent import AgentRun, run_agent
from ralph.loop.agent_outcome import BUDGET, HUNG, TRANSIENT
from ralph.loop.commit import commit_story
from ralph.loop.run import Finish, Iteration, Run
from ralph.loop.usage import brief
from ralph.plan import Story, set_story_state, story_state
from ralph.redaction import redact
from ralph.rollback.git import Repo, RollbackError
from ralph.rollback.lock import wait_until_free
from ralph.run import records
from ralph.run.clock import utc_now
from ralph.run.failures import recent_failures


def build_iteration(run: Run, story: Story) -> bool:
    """One iteration; False when it did not count (a retry after a usage
    limit, a transient API error or a hang: not an attempt of the story, not
    story time, not against the iteration limits)."""
    budget = run.budget(story)
    budget.iterations += 1
    run.last_error = ""  # this iteration's failure, for its line on the terminal
    it = prepare.begin(run, story)
    if hook_calls.skipped_by_hook(run, it):
        return True
    retry = None
    try:
        verify.baseline(run, it)  # [tests] baseline = "verify": what fails before the agent starts
        prompt = prepare.story_prompt(run, it, budget.iterations)
        prepare.announce_story(run, it, budget.iterations)
        agent = run_agent(run, it, prompt)
        result = judge(run, it, agent)
        retry = waits.retry_for(run, result, agent.outcome)
    finally:
        it.log.close()
        if retry is None:
            budget.seconds += time.monotonic() - it.started
        else:
            budget.iterations -= 1
            run.uncounted += 1
    record(run, it, result, counted=retry is None)
    if retry is not None:
        waits.wait(run, it, retry)
    return retry is None


def judge(run: Run, it: Iteration, agent: AgentRun) -> str:
    """What the iteration achieved: its result (done, or why not)."""
    story = it.story
    assert story is not None
    wait_for_rollbacks(run)
    state = story_state(run.plan_path, story.id)
    if agent.error:
        it.event["error"] = agent.error
        run.fail(story.id, "agent_start", agent.error)
        return "agent_not_started"
    guarded = guarding.judge(run, it)
    if guarded:
        return guarded
    if agent.interrupted:
        if state == "done":  # claimed but never verified: not done
            set_story_state(run.plan_path, story.id, "todo")
        return "interrupted"
    if state != "done":
        return not_done(run, it, agent, state)
    # the agent says done: the verify command has the last word (complete_story's pass counts while the tree is the same)
    if it.stage.verify_command is None:
        it.event["verify"] = {"result": "skipped"}
    elif not agent_tools.verified_unchanged(run, it):
        failed = verify.verify_story(run, it)
        if failed:
            return failed
        merged = guarding.judge_history(run, it, "the verify command")  # it ran the agent's code
        if merged:
            return merged
    return commit_story(run, it)


def wait_for_rollbacks(run: Run) -> None:
    """A rollback a hook handed to the background may still be resetting the
    tree: the iteration is judged once it is done (its lock is free)."""
    try:
        busy = wait_until_free(Repo(run.root).git_dir)
    except RollbackError:
        return
    if busy:
        run.display.message(f"a rollback is still running ({busy}); judging the iteration anyway")


def not_done(run: Run, it: Iteration, agent: AgentRun, state: str | None) -> str:
    """The agent ended without marking its story done: why, as a result."""
    story = it.story
    assert story is not None
    if state == "blocked":  # report_blocked, or [!] by hand: saved, reset, and the run moves on
        agent_tools.story_blocked(run, it)
        return "blocked_by_agent"
    tail = agent.output[-3000:]
    kind = agent.outcome.kind
    if kind in waits.RESULTS:  # waits.retry_for decides whether it counts
        if kind == HUNG:
            run.fail(story.id, "hung", f"the agent printed nothing for {run.settings['idle_timeout_seconds']:g}s and was stopped", tail)
        elif kind == TRANSIENT:
            run.fail(story.id, "transient", f"the agent ended on a transient API error: {agent.outcome.detail}", tail)
        return waits.RESULTS[kind]
    if kind == BUDGET:
        run.fail(story.id, "budget", f"the agent was stopped at its cost budget (--max-budget-usd): {agent.outcome.detail}", tail)
        return "budget_exhausted"
    if agent.timed_out:
        run.fail(story.id, "timeout", f"the agent was stopped after {it.stage.timeout_seconds:g}s without finishing {story.id}", tail)
        return "timeout"
    if agent.exit_code != 0:
        run.fail(story.id, "agent_exit", f"the agent exited with code {agent.exit_code} without finishing {story.id}", tail)
        return "agent_failed"
    if not stop_hook_recorded(run, story.id):
        run.fail(story.id, "incomplete", f"the agent ended without marking {story.id} done in {run.plan_rel}", tail)
    return "incomplete"


def stop_hook_recorded(run: Run, story_id: str) -> bool:
    """Did the Stop hook already record this iteration as incomplete?"""
    for entry in recent_failures(run.state_dir, run.run_id, limit=5):
        if entry.get("kind") == "stop_incomplete" and entry.get("iteration") == run.iteration and entry.get("story") == story_id:
            return True
    return False


def failure_reason(run: Run) -> str:
    """This iteration's last recorded failure (the loop's or a hook's), in one
    line: its summary and, from its excerpt, the last `fatal:`/`error:` line
    (what git or the tool said)."""
    entries = [e for e in recent_failures(run.state_dir, run.run_id, limit=10) if e.get("iteration") == run.iteration]
    if not entries:
        return one_line(run.last_error)
    last = entries[-1]
    text = str(last.get("summary") or "")
    said = [line.strip() for line in str(last.get("excerpt") or "").splitlines()
            if line.strip().lower().startswith(("fatal:", "error:"))]
    if said and said[-1] not in text:
        text += f": {said[-1]}"
    return one_line(text)


def one_line(text: str, limit: int = 300) -> str:
    text = str(redact(" ".join(text.split())))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def record(run: Run, it: Iteration, result: str, counted: bool = True) -> None:
    """The iteration's events.jsonl line, the guard's count of stuck
    iterations, the hooks after it, and the run's progress count (an
    iteration that does not count is not "no progress")."""
    story = it.story
    assert story is not None
    state_after = story_state(run.plan_path, story.id)
    it.event.update(result=result, story_state=state_after, ended=utc_now(),
                    duration_s=round(time.monotonic() - it.started, 3))
    if not counted:
        it.event["attempt_counted"] = False
    records.append_event(run.state_dir, it.event)
    run.last_result = result
    guarding.count_stuck(run, story.id, story.title, result)
    run.last_event = it.event
    hook_calls.after_iteration(run, it, result)
    committed = result == "done"
    if counted:
        run.no_progress = 0 if committed or state_after != story.state else run.no_progress + 1
    usage = brief(it.event.get("usage"))
    reason = "" if committed else failure_reason(run)
    run.display.message(f"iteration {run.iteration}: {story.id}: {result}" + (f" ({it.event['commit'][:12]})" if committed else "")
                        + (f" — {reason}" if reason else "") + (f" · {usage}" if usage else ""))
    if result == "interrupted":
        run.check_stop_requests()
    if result == "agent_not_started":
        raise Finish("error", it.event.get("error", "the agent could not be started"))
