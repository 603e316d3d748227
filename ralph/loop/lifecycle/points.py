"""The hook points of ralph-loop, their aliases from the hook systems users
already know, and the `.ralph/hooks/` executables that map onto them.

Every point is fired from exactly one line, in ralph/loop/hook_calls.py."""
from __future__ import annotations

# point -> when it fires (shown by `ralph hooks list` and in the README)
POINTS: dict[str, str] = {
    "session_start": "once, before the first iteration",
    "pre_iteration": "before each agent run (output with pipe_output reaches that same prompt)",
    "post_iteration": "after each iteration, whatever its result",
    "on_task_complete": "a story was verified and committed",
    "stage_complete": "a pipeline stage ended",
    "story_blocked": "a story was marked blocked: by its budget, the guard, or the agent (report_blocked: REASON, QUESTION)",
    "usage_limit": "the agent hit the account's usage limit: the loop waits for the reset, then runs the same story again",
    "on_error": "an iteration failed: agent crashed, timed out or could not start, verify failed (rolled back), commit refused",
    "session_end": "always, once the finish type is known (also on Ctrl-C and on a hook abort)",
}

# names from fresher, the unified hook system and iteratr
ALIASES: dict[str, str] = {
    "on_session_start": "session_start",
    "on_iteration_start": "pre_iteration",
    "on_iteration_complete": "post_iteration",
    "on_stage_complete": "stage_complete",
    "on_session_complete": "session_end",
    "started": "session_start",
    "next_iteration": "pre_iteration",
    "finished": "session_end",
}

# executables in .ralph/hooks/ (fresher's contract) -> point
DIR_HOOKS: dict[str, str] = {
    "started": "session_start",
    "next_iteration": "pre_iteration",
    "finished": "session_end",
}

# points whose pipe_output has no later prompt to reach: logged only
NO_PIPE = ("session_end",)


def canonical(name: str) -> str | None:
    """The point a config name or alias stands for; None when unknown."""
    if name in POINTS:
        return name
    return ALIASES.get(name)
