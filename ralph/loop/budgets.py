"""Per-story budgets: `max_iterations_per_story` iterations and
`max_minutes_per_story` minutes. A story that used one up without being
verified done is marked blocked; the run skips it, or stops
(`on_story_exhausted = "stop"`)."""
from __future__ import annotations

from ralph.loop import hook_calls
from ralph.loop.display import format_duration
from ralph.loop.run import Finish, Run
from ralph.plan import Story, set_story_state


def exhausted(run: Run, story: Story) -> bool:
    """True when the story used up a budget (it is then marked blocked)."""
    budget = run.budget(story)
    max_iterations = run.settings["max_iterations_per_story"]
    max_seconds = float(run.settings["max_minutes_per_story"]) * 60
    why = ""
    if max_iterations and budget.iterations >= max_iterations:
        why = f"used its {max_iterations} iteration(s)"
    elif max_seconds and budget.seconds >= max_seconds:
        why = f"used its {run.settings['max_minutes_per_story']} minute(s) ({format_duration(budget.seconds)})"
    if not why:
        return False
    set_story_state(run.plan_path, story.id, "blocked")
    summary = f"{story.id} {why} without being verified done; marked blocked ([!]) in {run.plan_rel}"
    run.fail(story.id, "budget", summary)
    hook_calls.story_blocked(run, story.id, story.title, why, "budget", iterations=budget.iterations,
                             seconds=round(budget.seconds, 1))
    run.display.message(summary)
    run.no_progress = 0
    if run.settings["on_story_exhausted"] == "stop":
        raise Finish("blocked", summary)
    return True
