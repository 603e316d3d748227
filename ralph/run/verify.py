"""The verify check: one run of the verify command, judged as the loop judges
it (passed only with exit 0 and no failing-test verdict on its output). The
loop and the agent's complete_story tool both judge with this."""
from __future__ import annotations

from ralph.quoting import format_command
from ralph.rules.outcome.verdict import judge_test_run
from ralph.run.proc import Interrupts, run_streaming


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
