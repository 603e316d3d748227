"""story_status(): what the agent would otherwise guess: the current story
and its criteria, its state in the plan, the attempt and the budget left,
the verify command, and the failures of earlier attempts as the next prompt
would show them."""
from __future__ import annotations

import time

from ralph.config.schema import ConfigError
from ralph.mcp.context import Answer, ToolContext
from ralph.plan import story_state
from ralph.quoting import format_command
from ralph.run.failures import failure_context

NAME = "story_status"
DESCRIPTION = (
    "Show the current story: its id, title and acceptance criteria, its state in the plan, which attempt this is and "
    "how much of its budget is left, the verify command complete_story runs, and why earlier attempts failed. "
    "Ask it instead of guessing."
)


def story_status(ctx: ToolContext) -> Answer:
    if ctx.story_id is None:
        return Answer(ctx.no_story() + verify_line(ctx))
    run = ctx.run
    assert run is not None
    plan = ctx.plan_path
    lines = [f"Current story: {run.story_id}" + (f": {run.story_title}" if run.story_title else ""),
             f"State in {ctx.shown(plan)}: {story_state(plan, run.story_id) or 'not found'}",
             "Acceptance criteria:"]
    lines += [f"- {c}" for c in run.criteria] or ["- (none listed: the title is the requirement)"]
    lines.append(f"Run {run.run_id}, iteration {run.iteration}.")
    if ctx.loop is not None:
        lines.append(budget_line(ctx.loop))
    lines.append(verify_line(ctx).strip())
    lines.append(f"Failures of earlier attempts at {run.story_id}:")
    lines.append(failure_context(ctx.state_dir, run.story_id))
    return Answer("\n".join(lines))


def budget_line(loop: dict) -> str:
    attempt = int(loop.get("attempt") or 1)
    most = int(loop.get("max_iterations_per_story") or 0)
    if most:
        left = max(0, most - attempt)
        text = f"Attempt {attempt} of at most {most} ({left} more after this one)."
    else:
        text = f"Attempt {attempt} (no limit on attempts)."
    minutes = float(loop.get("max_minutes_per_story") or 0)
    started = loop.get("started_epoch")
    used = float(loop.get("seconds_used") or 0) + (time.time() - float(started) if isinstance(started, (int, float)) else 0)
    if minutes:
        text += f" Time: {used / 60:.0f} of {minutes:g} minutes used, {max(0.0, minutes - used / 60):.0f} left."
    timeout = loop.get("agent_timeout_seconds")
    if isinstance(timeout, (int, float)) and isinstance(started, (int, float)):
        text += f" This agent run ends after {timeout / 60:g} minutes ({max(0.0, (timeout - (time.time() - started)) / 60):.0f} left)."
    return text


def verify_line(ctx: ToolContext) -> str:
    try:
        setup = ctx.verify_setup()
    except ConfigError as e:
        return f"\nralph.toml cannot be read: {e}"
    if setup.command is None:
        return "\nNo verify command is configured: complete_story has nothing to run." if ctx.story_id else ""
    sandboxed = ", sandboxed without network" if setup.prefix else ""
    return f"\nVerify command (complete_story runs it): `{format_command(setup.command)}` ({setup.where}, timeout {setup.timeout:g}s{sandboxed})"
