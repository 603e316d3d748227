"""Budgets, checked before each iteration.

Per story: `max_iterations_per_story` iterations and `max_minutes_per_story`
minutes in this run, and `max_cost_usd_per_story` dollars. A story that used
one up without being verified done is marked blocked; the run skips it, or
stops (`on_story_exhausted = "stop"`).

Per run: `max_cost_usd` (--max-cost-usd) dollars and `max_tokens`
(--max-tokens) input + output tokens; once one is spent the run finishes
`budget`. The figures are the client's (ralph.loop.usage), and they carry
over from earlier runs until a run completes: a run started again after a
budget stop says at its start what was spent before and what is left
(`carried_line`), and a budget finish says how much of the spend was earlier
runs'. When the agent is Claude Code, what is left of the tightest dollar
budget goes to it as `--max-budget-usd`, so the cap also holds inside one
iteration.
"""
from __future__ import annotations

from ralph.loop import hook_calls
from ralph.loop.agent_command import has_flag, with_flags
from ralph.loop.run import Finish, Run
from ralph.loop.usage import format_cost, format_tokens
from ralph.plan import Story, set_story_state
from ralph.run.clock import format_duration

BUDGET_FLAG = "--max-budget-usd"


def exhausted(run: Run, story: Story) -> bool:
    """True when the story used up a budget (it is then marked blocked).
    Ends the run (finish budget) when a run budget is spent."""
    check_run(run)
    budget = run.budget(story)
    max_iterations = run.settings["max_iterations_per_story"]
    max_seconds = float(run.settings["max_minutes_per_story"]) * 60
    max_cost = run.settings["max_cost_usd_per_story"]
    spent = run.usage.story_cost(story.id)
    why = key = ""
    if max_iterations and budget.iterations >= max_iterations:
        why, key = f"used its {max_iterations} iteration(s)", "max_iterations_per_story"
    elif max_seconds and budget.seconds >= max_seconds:
        why, key = f"used its {run.settings['max_minutes_per_story']} minute(s) ({format_duration(budget.seconds)})", "max_minutes_per_story"
    elif max_cost is not None and spent >= max_cost:
        why, key = f"spent {format_cost(spent)} of its {format_cost(float(max_cost))} cost budget", "max_cost_usd_per_story"
    if not why:
        return False
    set_story_state(run.plan_path, story.id, "blocked")
    summary = f"{story.id} {why} without being verified done; marked blocked ([!]) in {run.plan_rel}"
    run.fail(story.id, "budget", summary)
    hook_calls.story_blocked(run, story.id, story.title, why, "budget", budget=key, iterations=budget.iterations,
                             seconds=round(budget.seconds, 1), cost_usd=round(spent, 6))
    run.display.message(summary)
    run.no_progress = 0
    if run.settings["on_story_exhausted"] == "stop":
        raise Finish("blocked", summary)
    return True


def check_run(run: Run) -> None:
    """Finish `budget` when the run's cost or token budget is spent."""
    max_cost = run.settings["max_cost_usd"]
    max_tokens = run.settings["max_tokens"]
    totals = run.usage
    cost_before, tokens_before = run.carried
    if max_cost is not None and totals.cost_usd >= max_cost:
        raise Finish("budget", f"the agents cost {format_cost(totals.cost_usd)} (the client's estimate from list prices"
                               f"{split(format_cost(cost_before), format_cost(totals.cost_usd - cost_before)) if cost_before else ''}), "
                               f"max_cost_usd is {format_cost(float(max_cost))}; raise it (--max-cost-usd) to go on")
    if max_tokens is not None and totals.tokens >= max_tokens:
        raise Finish("budget", f"the agents used {format_tokens(totals.tokens)} input + output tokens ({totals.tokens}"
                               f"{split(str(tokens_before), str(totals.tokens - tokens_before)) if tokens_before else ''}), "
                               f"max_tokens is {max_tokens}; raise it (--max-tokens) to go on")


def split(before: str, now: str) -> str:
    return f": {before} in earlier runs, which count until a run completes, {now} in this one"


def carried_line(run: Run) -> str:
    """At the start of a run that carries over what earlier runs spent: how
    much, and what is left of each run budget ("" when nothing was carried)."""
    cost, tokens = run.carried
    if not cost and not tokens:
        return ""
    spent = ", ".join(part for part in (format_cost(cost) if cost else "", f"{format_tokens(tokens)} tokens" if tokens else "") if part)
    line = f"budget: earlier runs that did not complete spent {spent}; it counts toward this run's budgets until a run completes"
    left = []
    spent_up = []
    max_cost = run.settings["max_cost_usd"]
    max_tokens = run.settings["max_tokens"]
    if max_cost is not None:
        left.append(f"{format_cost(max(0.0, float(max_cost) - cost))} of max_cost_usd {format_cost(float(max_cost))}")
        if cost >= max_cost:
            spent_up.append("--max-cost-usd")
    if max_tokens is not None:
        left.append(f"{max(0, max_tokens - tokens)} of max_tokens {max_tokens}")
        if tokens >= max_tokens:
            spent_up.append("--max-tokens")
    if left:
        line += f"; left: {' and '.join(left)}"
    if spent_up:
        line += f"; nothing left, so the run stops at once: raise {' or '.join(spent_up)} to go on"
    return line


def left_usd(run: Run, story: Story | None) -> float | None:
    """What is left of the tightest dollar budget (run, or the story's); None without one."""
    left = []
    if run.settings["max_cost_usd"] is not None:
        left.append(float(run.settings["max_cost_usd"]) - run.usage.cost_usd)
    if story is not None and run.settings["max_cost_usd_per_story"] is not None:
        left.append(float(run.settings["max_cost_usd_per_story"]) - run.usage.story_cost(story.id))
    return max(0.0, min(left)) if left else None


def budget_flags(command: list[str] | str, run: Run, story: Story | None) -> list[str] | str:
    """`--max-budget-usd <left>` for Claude Code, unless the command sets its own."""
    left = left_usd(run, story)
    if left is None or has_flag(command, BUDGET_FLAG):
        return command
    return with_flags(command, BUDGET_FLAG, f"{left:.6f}".rstrip("0").rstrip(".") or "0")
