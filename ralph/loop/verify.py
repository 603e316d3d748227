"""The verify command: the last word on a story the agent says is done. It
passes only with exit 0 and no failing-test verdict on its output
(ralph.rules.outcome); a failed verify rolls the iteration back.

With `[tests] baseline = "verify"` it also runs before the agent, and the
tests failing then are the iteration's baseline (ralph.rules.outcome.baseline).
"""
from __future__ import annotations

from ralph.claude.bash_results import baseline_mode, record_verify_baseline
from ralph.loop.commit import roll_back
from ralph.loop.proc import Interrupts, run_streaming
from ralph.loop.prompt import format_command
from ralph.loop.run import Iteration, Run
from ralph.plan import set_story_state
from ralph.rules.outcome.verdict import judge_test_run


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


EXCERPT_LINES = 20
EXCERPT_CHARS = 1500  # under the records' cut of a string (ralph.rules.redact.FIELD_LIMIT), which keeps the start


def excerpt(output: str) -> str:
    """The end of a failed verify's output: where test runners print what failed."""
    lines = output.rstrip().splitlines()[-EXCERPT_LINES:]
    text = "\n".join(lines)
    return text if len(text) <= EXCERPT_CHARS else "…" + text[-(EXCERPT_CHARS - 1):]


class Check:
    """One run of a verify command, judged as the loop judges it."""

    __slots__ = ("passed", "summary", "output", "record", "started")

    def __init__(self, passed: bool, summary: str, output: str, record: dict, started: bool = True) -> None:
        self.passed = passed
        self.summary = summary  # one line: why it failed (with the first failing tests), or "verify passed"
        self.output = output  # the end of its output
        self.record = record  # exit_code, verdict, runner, seconds, timed_out, failing_tests, result
        self.started = started

    @property
    def failing_tests(self) -> list[str]:
        return list(self.record.get("failing_tests") or [])


def run_check(command: list[str] | str, argv: list[str] | str, *, cwd: str, timeout: float, sinks: list,
              interrupts: Interrupts, env: dict[str, str] | None = None) -> Check:
    """Run the verify command (`argv`: it as it runs, under the sandbox when
    there is one) and judge it: passed only with exit 0 and no failing-test
    verdict on its output. The loop and the agent's complete_story tool
    (ralph.mcp) both judge with this."""
    result = run_streaming(argv, cwd=cwd, stdin_data=b"", timeout=timeout, sinks=sinks, interrupts=interrupts, env=env)
    if result.error:
        return Check(False, f"verify command could not start: {result.error}", "", {"result": "fail", "error": result.error}, False)
    text = command if isinstance(command, str) else format_command(command)
    passed, summary, record = judge_check(text, result.exit_code, result.output, result.timed_out, timeout)
    record["seconds"] = round(result.duration, 3)
    return Check(passed, summary, result.output, record)


def judge_check(command: str, exit_code: int | None, output: str, timed_out: bool, timeout: float) -> tuple[bool, str, dict]:
    """(passed, summary, record) of one verify run. Pure."""
    verdict = judge_test_run(command, exit_code, output)
    record = {"exit_code": exit_code, "verdict": verdict.verdict, "runner": verdict.runner, "timed_out": timed_out}
    if timed_out:
        passed, summary = False, f"verify timed out after {timeout:g}s"
    elif exit_code != 0:
        passed, summary = False, f"verify exited with code {exit_code}"
    elif verdict.verdict == "fail":
        passed, summary = False, "verify exited 0 but its output shows failing tests"
    else:
        passed, summary = True, "verify passed"
    if not passed and verdict.failing_tests:
        summary += ": " + ", ".join(verdict.failing_tests[:5])
        record["failing_tests"] = verdict.failing_tests[:20]
    record["result"] = "pass" if passed else "fail"
    return passed, summary, record
