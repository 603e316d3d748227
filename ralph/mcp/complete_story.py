"""complete_story(story_id, summary, tests_passed): the agent says the
current story is done, and the tool checks it instead of trusting it.

It runs the loop's verify command for the stage, under the loop's timeout
and sandbox, judged as the loop judges it (ralph.run.verify.run_check: exit
0 and no failing-test verdict on the output). A failure is an error answer
with the failing tests and the end of the output, and the story stays open
(a story marked done before is opened again).
A pass marks the story done in the plan (as the agent's own tick does), puts
the summary in progress.md and records the tree it passed on
(ralph.run.tool_calls), so the loop, which still verifies and commits after the
agent exits, runs the verify command again only when the tree changed since.

Either way the run is added to the iteration's test history, where the Stop
gate and the rollback policy read the last test run.
"""
from __future__ import annotations

import os

from ralph import fastjson
from ralph.config.schema import ConfigError
from ralph.mcp.context import Answer, ToolContext, VerifySetup
from ralph.plan import PlanError, set_story_state, story_state
from ralph.quoting import format_command
from ralph.redaction import redact
from ralph.rules.outcome import baseline
from ralph.rules.rollback_policy import run_record
from ralph.run import tool_calls as records
from ralph.run.history import history_path, load_history
from ralph.run.proc import Interrupts, RedactedLog
from ralph.run.tree import fingerprint
from ralph.run.verify import Check, run_check
from ralph.sandbox import ENV_SETTINGS
from ralph.state.denials import ENV_AGENT_TOOLS, ENV_ITERATION, ENV_MAX_DENIALS, ENV_RUN_ID, ENV_STORY
from ralph.state.files import append_line

NAME = "complete_story"
AGENT_SESSION_ENV = (ENV_RUN_ID, ENV_ITERATION, ENV_STORY, ENV_MAX_DENIALS, ENV_AGENT_TOOLS, ENV_SETTINGS)
TAIL_CHARS = 3000
SHOWN_FAILING = 10
DESCRIPTION = (
    "Finish the current story. Call it once every acceptance criterion is met and you believe the tests pass. "
    "It runs the loop's verify command itself. If that fails, you get an error with the failing tests and the end "
    "of the output, and the story stays open: fix the code and call it again. If it passes, the story is marked "
    "done in the plan and your summary goes to progress.md; then stop (end your turn) and the loop commits your work. "
    "Use it instead of ticking the story in the plan yourself."
)
ARGUMENTS = {
    "story_id": "The current story's id, exactly as in the plan (e.g. US-001). story_status names it.",
    "summary": "Two or three sentences for progress.md: what you changed and how it meets the criteria.",
    "tests_passed": "Whether the tests passed when you last ran them yourself (the tool runs the verify command anyway).",
}


def complete_story(ctx: ToolContext, story_id: str, summary: str, tests_passed: bool) -> Answer:
    if ctx.story_id is None:
        return outside_a_run(ctx)
    refused = ctx.wrong_story(story_id)
    if refused:
        return Answer(refused, True)
    run = ctx.run
    assert run is not None
    if ctx.loop is None:
        return Answer(f"complete_story cannot check {run.story_id}: the ralph-loop run {run.run_id} did not set these "
                      f"tools up for iteration {run.iteration} (`[loop] agent_tools` is off, or another ralph's server "
                      f"answered). Mark {run.story_id} done in {ctx.shown(ctx.plan_path)} yourself when the tests pass; "
                      "the loop verifies it after you exit.", True)
    setup = ctx.verify_setup()
    if setup.command is None:
        return mark_done(ctx, summary, tests_passed, None,
                         "This stage has no verify command, so nothing was run: the loop commits the work as it is.")
    check = run_verify(ctx, setup)
    record_test_run(ctx, setup, check)
    if not check.passed:
        reopen(ctx)
        return failed(ctx, setup, check)
    return mark_done(ctx, summary, tests_passed, check, f"{describe(setup, check)} passed.")


def reopen(ctx: ToolContext) -> None:
    """A story an earlier call (or the agent) marked done is open again: the
    plan says what the answer says, and the loop does not commit it as done."""
    run = ctx.run
    assert run is not None
    try:
        if story_state(ctx.plan_path, run.story_id) == "done":
            set_story_state(ctx.plan_path, run.story_id, "todo")
    except (OSError, PlanError):
        pass  # the answer still says the story is not done


def outside_a_run(ctx: ToolContext) -> Answer:
    """No current story: run `[loop] verify_command` of ralph.toml when there is one; nothing is marked."""
    head = ctx.no_story() + " Nothing was marked done."
    try:
        setup = ctx.verify_setup()
    except ConfigError as e:
        return Answer(f"{head} ralph.toml cannot be read: {e}", True)
    if setup.command is None:
        return Answer(f"{head} ralph.toml sets no [loop] verify_command either, so there is nothing to run.", True)
    check = run_verify(ctx, setup)
    if not check.passed:
        return failed(ctx, setup, check, head + "\n")
    return Answer(f"{head} {describe(setup, check)} passed.")


def run_verify(ctx: ToolContext, setup: VerifySetup) -> Check:
    """The verify command, its output added to the iteration's log when there is one."""
    assert setup.command is not None
    log_path = (ctx.loop or {}).get("log")
    log = None
    if isinstance(log_path, str) and log_path:
        try:
            log = RedactedLog(open(log_path, "ab"))
        except OSError:
            log = None
    try:
        if log is not None:
            log.write(f"\n=== complete_story verify: {format_command(setup.command)}\n".encode())
        return run_check(setup.command, setup.argv(), cwd=ctx.root, timeout=setup.timeout,
                         sinks=[log.write] if log is not None else [], interrupts=Interrupts(), env=verify_environment(ctx.environ))
    finally:
        if log is not None:
            log.close()


def verify_environment(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The server's environment without what the loop set for the agent's
    session: the verify command runs as the loop's own would, and ralph's
    hooks in it (a project testing its own hooks) do not take it for the
    loop's iteration."""
    return {k: v for k, v in environ.items() if k not in AGENT_SESSION_ENV}


def record_test_run(ctx: ToolContext, setup: VerifySetup, check: Check) -> None:
    """The run in the iteration's test history, as a hook records a Bash test run."""
    run = ctx.run
    assert run is not None and setup.command is not None
    verdict = "pass" if check.passed else "fail"  # the loop's judgement, whatever the runner's verdict alone said
    record = run_record(format_command(setup.command), verdict, check.record.get("runner"), check.failing_tests)
    record.update(at=records.utc_now(), session=NAME, exit_code=check.record.get("exit_code"), run_id=run.run_id,
                  iteration=run.iteration, story=run.story_id, by=NAME)
    path = history_path(ctx.state_dir, run, NAME)
    if record["verdict"] == "fail":
        baseline.mark(record, baseline.baseline_failures(load_history(path, run.iteration)))
    try:
        append_line(path, fastjson.dumps(redact(record)))
    except OSError:
        pass  # the history is a help for the Stop gate; the answer still stands


def describe(setup: VerifySetup, check: Check) -> str:
    assert setup.command is not None
    facts = [f"exit {check.record.get('exit_code')}"] if check.started else []
    if check.record.get("runner"):
        facts.append(str(check.record["runner"]))
    if check.record.get("seconds") is not None:
        facts.append(f"{check.record['seconds']:g}s")
    sandboxed = ", sandboxed" if setup.prefix else ""
    return f"`{format_command(setup.command)}` ({setup.where}{sandboxed}; {', '.join(facts)})"


def failed(ctx: ToolContext, setup: VerifySetup, check: Check, head: str = "") -> Answer:
    story = ctx.story_id
    lines = [f"{head}{story + ' is NOT done: ' if story else ''}{check.summary}.", f"Ran {describe(setup, check)}."]
    failing = check.failing_tests
    if failing:
        more = f" and {len(failing) - SHOWN_FAILING} more" if len(failing) > SHOWN_FAILING else ""
        lines.append(f"Failing tests ({len(failing)}): {', '.join(failing[:SHOWN_FAILING])}{more}")
    already = already_failing(ctx, failing)
    if already:
        lines.append(f"Already failing when this iteration began: {', '.join(already[:SHOWN_FAILING])} "
                     "(the verify command must pass all the same).")
    tail = str(redact(check.output, TAIL_CHARS, tail=True)).strip()
    if tail:
        lines += ["End of the output:", tail]
    if story:
        lines.append(f"{story} stays open. Fix what fails, run the tests, then call complete_story again.")
    return Answer("\n".join(lines), True)


def already_failing(ctx: ToolContext, failing: list[str]) -> list[str]:
    run = ctx.run
    if run is None or not failing:
        return []
    known = baseline.baseline_failures(load_history(history_path(ctx.state_dir, run, NAME), run.iteration)) or set()
    return [name for name in failing if name in known]


def mark_done(ctx: ToolContext, summary: str, tests_passed: bool, check: Check | None, checked: str) -> Answer:
    """Record the tree that passed, tick the story, note the summary."""
    run = ctx.run
    assert run is not None
    plan, progress = ctx.plan_path, ctx.progress_path
    tree = fingerprint(ctx.root, [ctx.state_dir, plan, progress])
    try:
        set_story_state(plan, run.story_id, "done")
    except (OSError, PlanError) as e:
        return Answer(f"{checked} But {run.story_id} could not be marked done in {ctx.shown(plan)}: {e}. "
                      "Mark it done there yourself (`- [x]`), then stop.", True)
    title = f": {run.story_title}" if run.story_title else ""
    body = summary.strip() or "(no summary given)"
    if not tests_passed:
        body += "\n(The agent reported that its own test run had not passed; the verify command passed.)"
    records.append_progress(progress, f"{run.story_id}{title} (complete_story, iteration {run.iteration} of run {run.run_id})", body)
    records.append_call(ctx.state_dir, {
        "tool": NAME, "run_id": run.run_id, "iteration": run.iteration, "story": run.story_id, "tree": tree,
        "verify": check.record if check is not None else None, "summary": summary, "tests_passed": bool(tests_passed),
    })
    note = "" if tests_passed else " (You said your own test run had not passed; the verify command decides.)"
    return Answer(
        f"{run.story_id} is done. {checked}{note} It is marked done in {ctx.shown(plan)} and your summary is in "
        f"{ctx.shown(progress)}.\nStop now: end your turn with a one-line summary. The loop commits the work after you "
        "exit; if the tree changes after this call, it runs the verify command again first."
    )
