"""The context every hook gets: environment variables (RALPH_*), the same
values as one JSON object on stdin (ralph.loop.lifecycle.engine.stdin_json),
and the names templates and `when` conditions may use. One table, so the
three never disagree. The loop fills it in (ralph.loop.hook_calls.loop_context)."""
from __future__ import annotations

from ralph.run.clock import utc_now

# context key -> (environment variable, what it is). The key is also the
# template name: {{iteration}} and ${ITERATION} both read RALPH_ITERATION.
VARIABLES: dict[str, tuple[str, str]] = {
    "hook_point": ("RALPH_HOOK_POINT", "the point being fired (session_start, ...)"),
    "session": ("RALPH_SESSION", "the run id"),
    "stage": ("RALPH_STAGE", "the current stage's name"),
    "next_stage": ("RALPH_NEXT_STAGE", "the next stage's name (empty after the last one)"),
    "mode": ("RALPH_MODE", "build or plan"),
    "iteration": ("RALPH_ITERATION", "iteration number across the run (0 before the first)"),
    "max_iterations": ("RALPH_MAX_ITERATIONS", "the iteration limit of the stage (or of the run with --max-iterations)"),
    "project_dir": ("RALPH_PROJECT_DIR", "absolute project root"),
    "log_dir": ("RALPH_LOG_DIR", "this run's log directory"),
    "plan_file": ("RALPH_PLAN_FILE", "absolute path of the plan"),
    "progress_file": ("RALPH_PROGRESS_FILE", "absolute path of progress.md"),
    "spec_dir": ("RALPH_SPEC_DIR", "absolute path of the directory that holds the plan (and the PRD beside it)"),
    "status_file": ("RALPH_STATUS_FILE", "absolute path of run.json: the run's state (status, iteration, story, finish)"),
    "context_file": ("RALPH_CONTEXT_FILE", "absolute path of a JSON file holding this context (the object on stdin)"),
    "stage_outputs": ("RALPH_STAGE_OUTPUTS", "the current stage's iteration logs in this run so far, one absolute path per line"),
    "started_at": ("RALPH_STARTED_AT", "when the run started (UTC, ISO 8601)"),
    "story_id": ("RALPH_STORY_ID", "the current story's id"),
    "story_title": ("RALPH_STORY_TITLE", "the current story's title"),
    "last_exit_code": ("RALPH_LAST_EXIT_CODE", "the agent's exit code in the last iteration"),
    "last_duration": ("RALPH_LAST_DURATION", "seconds the last iteration took"),
    "last_result": ("RALPH_LAST_RESULT", "the last iteration's result (done, verify_failed, ...)"),
    "commits_made": ("RALPH_COMMITS_MADE", "stories committed so far in this run"),
    "changed_files": ("RALPH_CHANGED_FILES", "files changed by the last iteration, one per line"),
    "error": ("RALPH_ERROR", "on_error: what went wrong"),
    "reason": ("RALPH_REASON", "story_blocked: why the story is blocked; usage_limit: what the client said about the limit"),
    "question": ("RALPH_QUESTION", "story_blocked: the agent's question for a person (empty unless it used report_blocked)"),
    "finish_type": ("RALPH_FINISH_TYPE", "session_end: complete, error, max_iterations, blocked, no_changes, hook_abort, budget, rate_limited, manual"),
    "finish_message": ("RALPH_FINISH_MESSAGE", "session_end: the finish message"),
    "total_iterations": ("RALPH_TOTAL_ITERATIONS", "session_end: iterations run"),
    "total_commits": ("RALPH_TOTAL_COMMITS", "session_end: stories committed"),
    "duration": ("RALPH_DURATION", "session_end: seconds the run took"),
    "reset_at": ("RALPH_RESET_AT", "usage_limit: when the limit resets (UTC, ISO 8601; empty when the client did not say)"),
    "wait_seconds": ("RALPH_WAIT_SECONDS", "usage_limit: how long the loop waits before it runs the story again"),
    "branch": ("RALPH_BRANCH", "session_end: the branch the run committed on"),
    "report_file": ("RALPH_REPORT_FILE", "session_end: absolute path of the run's report.html"),
    "report_summary": ("RALPH_REPORT_SUMMARY", "session_end: the report in a few lines of text (at most 1800 characters)"),
    "last_hook_status": ("RALPH_LAST_HOOK_STATUS", "success or failed: the previous action of this point"),
    "timestamp": ("RALPH_TIMESTAMP", "now (UTC, ISO 8601)"),
}

# other systems' template names -> context key (docs/hook-names.md maps them all)
TEMPLATE_ALIASES: dict[str, str] = {
    "task_id": "story_id",
    "task_content": "story_title",
    "task": "story_id",
    "run_id": "session",
    "progress": "progress_file",
    "status": "status_file",
    "ctx": "context_file",
    "last_decision": "last_result",
}

# context keys that are numbers in the stdin JSON
NUMERIC = ("iteration", "max_iterations", "last_exit_code", "last_duration", "commits_made",
           "total_iterations", "total_commits", "duration", "wait_seconds")


def key_for(name: str, extra: dict[str, str] | None = None) -> str | None:
    """The context key a template/condition name means: `iteration`,
    `ITERATION`, `RALPH_ITERATION` and `task_id`-style aliases; None if unknown.
    `extra` maps names exported by actions (HOOK_RESPONSE) to themselves."""
    lowered = name.lower()
    if lowered.startswith("ralph_"):
        lowered = lowered[len("ralph_"):]
    if lowered in VARIABLES:
        return lowered
    if lowered in TEMPLATE_ALIASES:
        return TEMPLATE_ALIASES[lowered]
    if extra and lowered in extra:
        return lowered
    return None


def export_key(env_name: str) -> str:
    """RALPH_HOOK_RESPONSE (set by an action) -> hook_response: its name in
    templates, `when` and the stdin JSON of later actions."""
    lowered = env_name.lower()
    return lowered[len("ralph_"):] if lowered.startswith("ralph_") else lowered


def text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".")
    if isinstance(value, (list, tuple)):
        return "\n".join(str(v) for v in value)
    return str(value)


def complete(point: str, context: dict) -> dict:
    """The context with every key present (empty when unknown), point and time set."""
    full = {key: "" for key in VARIABLES}
    full.update({k: v for k, v in context.items() if v is not None})
    full["hook_point"] = point
    full["timestamp"] = utc_now()
    return full


def environment(context: dict) -> dict[str, str]:
    """RALPH_* variables for the context (only the table's keys, plus exports
    already named RALPH_* by their action)."""
    env = {}
    for key, value in context.items():
        spec = VARIABLES.get(key)
        if spec is not None:
            env[spec[0]] = text(value)
        elif key.upper().startswith("RALPH_"):
            env[key.upper()] = text(value)
    return env


def values(context: dict) -> dict[str, str]:
    """Context key -> text, for templates and conditions."""
    return {key: text(value) for key, value in context.items()}

