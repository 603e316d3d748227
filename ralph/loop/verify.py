"""The verify command: the last word on a story the agent says is done. It
passes only with exit 0 and no failing-test verdict on its output
(ralph.rules.outcome); a failed verify rolls the iteration back.

With `[tests] baseline = "verify"` it also runs before the agent, and the
tests failing then are the iteration's baseline (ralph.rules.outcome.baseline).
"""
from __future__ import annotations

import os

from ralph import fastjson
from ralph.loop.commit import roll_back
from ralph.loop.run import Iteration, Run
from ralph.plan import set_story_state
from ralph.quoting import format_command
from ralph.rules.outcome.verdict import judge_test_run
from ralph.rules.rollback_policy import run_record
from ralph.run.clock import utc_now
from ralph.run.history import baseline_mode, run_history_path
from ralph.run.proc import run_streaming
from ralph.run.tests_config import read_tests_config
from ralph.run.verify import run_check
from ralph.state.files import append_line


EXCERPT_LINES = 20
EXCERPT_CHARS = 1500  # under the records' cut of a string (ralph.rules.redact.FIELD_LIMIT), which keeps the start


def excerpt(output: str) -> str:
    """The end of a failed verify's output: where test runners print what failed."""
    lines = output.rstrip().splitlines()[-EXCERPT_LINES:]
    text = "\n".join(lines)
    return text if len(text) <= EXCERPT_CHARS else "…" + text[-(EXCERPT_CHARS - 1):]


def baseline(run: Run, it: Iteration) -> None:
    """Before the agent: what fails already (only with `[tests] baseline = "verify"`)."""
    command = it.stage.verify_command
    if command is None or it.stage.mode != "build" or baseline_mode(run.root) != "verify":
        return
    assert it.story is not None
    text = command if isinstance(command, str) else format_command(command)
    it.log.write(f"\n=== baseline verify: {text}\n".encode())
    result = run_streaming(command, cwd=run.root, stdin_data=b"", timeout=float(run.settings["verify_timeout_seconds"]),
                           sinks=[it.log.write], interrupts=run.interrupts)
    if result.error:
        it.event["baseline"] = {"error": result.error}
        return
    record = record_verify_baseline(run.root, run.state_dir, run.run_id, run.iteration, it.story.id, text,
                                    result.exit_code, result.output)
    it.event["baseline"] = {"verdict": record["verdict"], "failing_tests": record["failing_tests"]}


def verify_story(run: Run, it: Iteration) -> str | None:
    """Run the verify command on a story marked done: None when it passed, else
    the iteration's result (the story is marked to do again either way)."""
    story = it.story
    assert story is not None and it.stage.verify_command is not None
    passed, summary, output = verify(run, it)
    if run.interrupts.stopping:
        set_story_state(run.plan_path, story.id, "todo")
        return "interrupted"
    if passed:
        return None
    run.fail(story.id, "verify", summary, output[-4000:], command=format_command(it.stage.verify_command))
    if run.settings["rollback_on_verify_fail"]:
        roll_back(run, it, "verify failed")
    set_story_state(run.plan_path, story.id, "todo")  # .ralph/ is never rolled back
    return "verify_failed"


def verify(run: Run, it: Iteration) -> tuple[bool, str, str]:
    """(passed, summary, output); the verify record goes into the event."""
    command = it.stage.verify_command
    assert command is not None
    run.display.message(f"verify: {format_command(command)}")
    it.log.write(f"\n=== verify: {format_command(command)}\n".encode())
    check = run_check(command, run.sandbox.verify_argv(command), cwd=run.root,
                      timeout=float(run.settings["verify_timeout_seconds"]),
                      sinks=[it.log.write, run.display.output], interrupts=run.interrupts)
    it.event["verify"] = check.record
    if not check.passed and check.output:
        check.record["excerpt"] = excerpt(check.output)  # the report's "Act on first" shows it
    if check.started:
        run.display.message(check.summary)
    return check.passed, check.summary, check.output


def record_verify_baseline(root: str, state_dir: str, run_id: str, iteration: int, story_id: str, command: str, exit_code: int | None, output: str) -> dict:
    """For the loop: a verify run made at iteration start, before the agent, is the
    iteration's baseline (`[tests] baseline = "verify"`). Appends a `kind: "baseline"`
    record to the run's history and returns it."""
    config, _problem = read_tests_config(root, os.environ)
    verdict = judge_test_run(command, exit_code, output, config)
    record = run_record(command, verdict.verdict, verdict.runner, verdict.failing_tests)
    record.update(kind="baseline", at=utc_now(), run_id=run_id, iteration=iteration, story=story_id, exit_code=exit_code)
    append_line(run_history_path(state_dir, run_id), fastjson.dumps(record))
    return record
