"""UserPromptSubmit: log the prompt (secrets redacted); during a loop run,
inject the current story and what went wrong so far."""
from ralph.claude.protocol import HookCall, Outcome, allow, context
from ralph.redaction import redact
from ralph.run.failures import recent_failures
from ralph.run.state import load_active_run

PROMPT_LOG_CHARS = 2000
FAILURE_EXCERPT_CHARS = 1500


def handle(call: HookCall) -> Outcome:
    prompt = call.field("prompt", str, "")
    if prompt:
        call.log_extra["prompt"] = redact(prompt, PROMPT_LOG_CHARS)  # redact first, then cut
    run = load_active_run(call.state_dir)
    if run is None:
        return allow()
    # only the current story's failures: a rollback of US-001 says nothing about US-002
    failures = [f for f in recent_failures(call.state_dir, run.run_id, limit=50) if f.get("story") == run.story_id][-3:]
    return context("UserPromptSubmit", story_context(run, failures))


def story_context(run: object, failures: list[dict]) -> str:
    """The text injected into the agent's first request of an iteration."""
    lines = [
        f"ralph-loop run {run.run_id}, iteration {run.iteration} ({run.stage} stage).",
        f"Current story: {run.story_id}: {run.story_title}".rstrip(": "),
    ]
    if run.criteria:
        lines.append("Acceptance criteria:")
        lines.extend(f"- {c}" for c in run.criteria)
    where = run.source or "the plan"
    lines.append(
        f"Work on this story only. It is done when every criterion holds, the tests pass, "
        f"and it is marked [x] in {where}. The loop commits verified work for you (local commits are harmless); "
        "never push or merge."
    )
    if failures:
        lines.append("What went wrong earlier in this run (newest last):")
        for failure in failures:
            summary = str(failure.get("summary") or failure.get("kind") or "failure")
            lines.append(f"- iteration {failure.get('iteration', '?')}, {failure.get('kind', 'failure')}: {summary}")
            excerpt = failure.get("excerpt")
            if isinstance(excerpt, str) and excerpt.strip():
                excerpt = excerpt.strip()[-FAILURE_EXCERPT_CHARS:]
                lines.append("  " + excerpt.replace("\n", "\n  "))
    return "\n".join(lines)
