"""report_blocked(story_id, reason, question): the agent cannot go on
without a person. The story is marked blocked ([!]) at once, the reason and
the question go to progress.md, and the call is recorded for the loop
(ralph.run.tool_calls), which, once the agent has stopped, saves the
iteration's work to a ref, fires the `story_blocked` hook point (so a
webhook can page someone) and goes on with the next story without spending
this one's remaining attempts. The Stop hook lets the agent stop.
"""
from __future__ import annotations

from ralph.mcp.context import Answer, ToolContext
from ralph.plan import PlanError, set_story_state
from ralph.run import tool_calls as records

NAME = "report_blocked"
DESCRIPTION = (
    "Report that the current story cannot be finished without a person: a decision only they can make, access or "
    "information you do not have, a requirement that contradicts the code. The story is marked blocked at once, your "
    "reason and question are passed to a person, and the loop moves on to the next story. After calling it, stop: end "
    "your turn without further changes. Do not use it for failing tests you could fix."
)
ARGUMENTS = {
    "story_id": "The current story's id, exactly as in the plan (e.g. US-001).",
    "reason": "What blocks the story, concretely (what you tried, what is missing).",
    "question": "The question a person must answer before the story can go on.",
}


def report_blocked(ctx: ToolContext, story_id: str, reason: str, question: str) -> Answer:
    if ctx.story_id is None:
        return Answer(ctx.no_story() + " Nothing was marked. Outside a loop run, ask the person directly.", True)
    refused = ctx.wrong_story(story_id)
    if refused:
        return Answer(refused, True)
    reason, question = reason.strip(), question.strip()
    if not reason:
        return Answer("report_blocked needs a reason: say what blocks the story. Nothing was marked.", True)
    run = ctx.run
    assert run is not None
    plan, progress = ctx.plan_path, ctx.progress_path
    try:
        set_story_state(plan, run.story_id, "blocked")
    except (OSError, PlanError) as e:
        return Answer(f"{run.story_id} could not be marked blocked in {ctx.shown(plan)}: {e}. "
                      "Say what blocks you in your last message and stop.", True)
    title = f": {run.story_title}" if run.story_title else ""
    body = f"Reason: {reason}" + (f"\nQuestion for a person: {question}" if question else "")
    records.append_progress(progress, f"{run.story_id}{title} blocked (report_blocked, iteration {run.iteration} of run {run.run_id})", body)
    records.append_call(ctx.state_dir, {"tool": NAME, "run_id": run.run_id, "iteration": run.iteration, "story": run.story_id,
                                        "reason": reason, "question": question})
    return Answer(
        f"{run.story_id} is marked blocked ([!]) in {ctx.shown(plan)}; your reason and question are in "
        f"{ctx.shown(progress)} and go to a person.\nStop now: end your turn without changing anything else. The loop "
        f"saves this iteration's work to a ref, resets the tree and goes on with the next story; {run.story_id} "
        "waits until a person answers and unblocks it."
    )
