"""The verdict on a Bash command: did it run tests, and did they fail?

Pure: (command, exit code, merged output) -> TestVerdict. No I/O.

Two mistakes cost differently: calling a passing run a failure rolls back good
work; missing a failure lets broken work be committed. So the rules are:

1. The command decides whether this is a test run at all
   (ralph.rules.outcome.command_shape). A command whose stages are all
   non-test programs (grep, cat, git, builds, installs) is `not_test`
   whatever it prints.
2. The runner's own closing summary decides (scanned from the END of the
   output; runners print summaries last). Any failing summary wins; "no tests
   ran" is `unknown` (no rollback is justified by an empty run).
   A failing summary anywhere wins over a later passing one: the output of
   several suites (a script, `make -k`, `cmd1; cmd2`) is read summary by
   summary, back from the last.
3. Without a summary, runner-specific failure markers that are still visible
   (truncated output) decide `fail`; otherwise the exit code decides, but only
   when the runner is the command's last pipeline stage and nothing (`| tail`,
   `|| true`, `; echo`) masks its status. A test program stopped by `timeout`
   (124) or killed by a signal (128+N: an abort, a segfault) did not pass:
   `fail`; so does one named like a test, or declared in `[tests] commands`,
   that exits non-zero, and a runner whose exit codes are not known.
4. A passing summary in output cut by `| tail`, `| head` or `| grep` with the
   status masked is `unknown`: what was cut away may have failed.
5. Anything else is `unknown`.

The output is read by one module per runner family (ralph.rules.outcome.runners),
found through RUNNER_MODULES; runners with no reader there go through the
generic reader (ralph.rules.outcome.generic), read after the runners' own
summaries found nothing. A project's `[tests]` commands are test runs too, and
its `fail_patterns` / `pass_patterns` (ralph.rules.outcome.tests_config) are
read for them.
"""
from __future__ import annotations

import re

from ralph.plugins import load
from ralph.rules.outcome.command_shape import DECLARED, CommandShape, command_shape
from ralph.rules.outcome.reading import FAIL, MARKER, MAX_EVIDENCE, MAX_FAILING, NOT_TEST, PASS, UNKNOWN, ZERO, Finding, Text
from ralph.rules.outcome.tests_config import TestsConfig

# runner -> the module that reads its output. Each module has READERS (runner ->
# summary reader) and MARKERS (runner -> failure-marker reader); reader() imports
# it on the first test run that needs it, so a Bash call that runs no test loads
# none of them. Besides the runners: the wrappers that print their own status
# (tox, nox), the failure lines of script wrappers ("wrapper"), a bare
# `N passed, N failed` line ("plain") and the generic grammar ("generic").
RUNNER_MODULES = {
    "pytest": "ralph.rules.outcome.runners.python",
    "unittest": "ralph.rules.outcome.runners.python",
    "tox": "ralph.rules.outcome.runners.python",
    "nox": "ralph.rules.outcome.runners.python",
    "jest": "ralph.rules.outcome.runners.javascript",
    "vitest": "ralph.rules.outcome.runners.javascript",
    "mocha": "ralph.rules.outcome.runners.javascript",
    "deno": "ralph.rules.outcome.runners.javascript",
    "bun": "ralph.rules.outcome.runners.javascript",
    "node": "ralph.rules.outcome.runners.tap",
    "tape": "ralph.rules.outcome.runners.tap",
    "tap": "ralph.rules.outcome.runners.tap",
    "prove": "ralph.rules.outcome.runners.tap",
    "bats": "ralph.rules.outcome.runners.tap",
    "go": "ralph.rules.outcome.runners.go",
    "cargo": "ralph.rules.outcome.runners.rust",
    "rspec": "ralph.rules.outcome.runners.ruby",
    "minitest": "ralph.rules.outcome.runners.ruby",
    "phpunit": "ralph.rules.outcome.runners.php",
    "ctest": "ralph.rules.outcome.runners.ctest",
    "libcheck": "ralph.rules.outcome.runners.clib",
    "cunit": "ralph.rules.outcome.runners.clib",
    "cmocka": "ralph.rules.outcome.runners.clib",
    "playwright": "ralph.rules.outcome.runners.playwright",
    "maven": "ralph.rules.outcome.runners.jvm",
    "tcltest": "ralph.rules.outcome.runners.tcl",
    "plain": "ralph.rules.outcome.runners.plain",
    "wrapper": "ralph.rules.outcome.runners.plain",
    "generic": "ralph.rules.outcome.generic",
}
# when the command names no runner: try these, most specific first (generic TAP last)
# (bats' pretty `N tests, N failures` line is generic: the generic grammar reads it
# and says so, instead of naming bats for an ExUnit or shell-unit summary)
UNKNOWN_RUNNER_ORDER = ("pytest", "unittest", "jest", "vitest", "mocha", "go", "cargo", "rspec", "minitest", "phpunit", "ctest", "deno", "bun",
                        "libcheck", "cunit", "cmocka", "maven", "playwright", "tcltest", "tap", "prove", "node")
# runners whose TAP-ish output also counts for the runner
RUNNER_ALSO = {"tap": ("node", "tape"), "tape": ("node",), "prove": (), "bats": (), "node": ("tape",)}
WRAPPERS_WITH_STATUS = ("tox", "nox")  # wrappers that print their own status lines

# runner -> exit code -> meaning, when the runner's status reaches the exit code
EXIT_MEANINGS = {
    "pytest": {0: PASS, 1: FAIL, 2: FAIL, 5: ZERO},
    "unittest": {0: PASS, 1: FAIL, 5: ZERO},
    "jest": {0: PASS, 1: FAIL}, "vitest": {0: PASS, 1: FAIL},
    "node": {0: PASS, 1: FAIL}, "tape": {0: PASS, 1: FAIL}, "tap": {0: PASS, 1: FAIL}, "bats": {0: PASS, 1: FAIL},
    "go": {0: PASS, 1: FAIL, 2: FAIL}, "cargo": {0: PASS, 101: FAIL, 1: FAIL},
    "ctest": {0: PASS, 8: FAIL}, "rspec": {0: PASS, 1: FAIL}, "minitest": {0: PASS, 1: FAIL},
    "phpunit": {0: PASS, 1: FAIL, 2: FAIL, 255: FAIL}, "deno": {0: PASS, 1: FAIL}, "bun": {0: PASS, 1: FAIL},
    "doctest": {0: PASS, 1: FAIL},
    "playwright": {0: PASS, 1: FAIL}, "maven": {0: PASS},  # mvn exits 1 for any build failure, tests or not
}
# mocha and prove exit with the number of failures
COUNTING_EXITS = frozenset(("mocha", "prove"))
# the shell's own codes: the runner did not run or was killed; says nothing about tests
SHELL_CODES = {126: "not executable", 127: "command not found", 124: "timed out", 130: "interrupted", 137: "killed", 143: "terminated"}
HUNG_CODES = {124: "timed out (`timeout` exit 124)", 137: "killed (SIGKILL, exit 137)", 143: "terminated (SIGTERM, exit 143)"}
# the shell's 128+N for a program killed by signal N (the ones a crashing test dies of; 130 is the user's Ctrl-C)
SIGNAL_NAMES = {129: "SIGHUP", 131: "SIGQUIT", 132: "SIGILL", 133: "SIGTRAP", 134: "SIGABRT", 135: "SIGBUS", 136: "SIGFPE",
                137: "SIGKILL", 138: "SIGUSR1", 139: "SIGSEGV", 141: "SIGPIPE", 142: "SIGALRM", 143: "SIGTERM", 152: "SIGXCPU", 159: "SIGSYS"}
# programs after a `|` that keep only part of the output: a passing summary they let through proves nothing
CUTTING_FILTERS = frozenset(("tail", "head", "grep", "egrep", "fgrep", "rg", "ag", "sed", "awk", "gawk", "cut", "less", "more", "uniq", "sort", "jq"))
MAX_EARLIER_SUMMARIES = 8  # how many summaries back a passing one is checked against earlier failing ones
# lines a runner prints when a run starts: an earlier failing summary counts only when one of these
# follows it (a second suite began), not when a test printed summary-looking text inside the last run
RUN_START = (r"(?m)^(?:=+ test session starts =+$|running \d+ tests?(?: from|$)|Running suite\(s\):|\[==========\] Running \d+ tests?"
             r"|Running \d+ tests? using|Test project |PHPUnit \d|# Running:$|Tests began at |bun test v|TAP version|\s*RUN\s+v\d"
             r"|Ran \d+ tests? in |-{5,}\n\s*T E S T S$|\s+CUnit - A unit testing framework|Randomized with seed \d+$|> \S+@\S+ test"
             r"|[.FEsxXp]{1,200} {1,80}\[ {0,2}\d{1,3}%\]$)")  # the last: pytest's first progress line of a run


class TestVerdict:
    """What a Bash command's output says about a test run."""

    __slots__ = ("verdict", "runner", "evidence", "failing_tests")
    __test__ = False  # not a pytest test class

    def __init__(self, verdict: str, runner: str | None = None, evidence: list[str] | None = None, failing_tests: list[str] | None = None) -> None:
        self.verdict = verdict
        self.runner = runner
        self.evidence = evidence if evidence is not None else []
        self.failing_tests = failing_tests if failing_tests is not None else []

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "runner": self.runner, "evidence": list(self.evidence), "failing_tests": list(self.failing_tests)}

    def __repr__(self) -> str:
        return f"TestVerdict({self.verdict!r}, runner={self.runner!r}, evidence={self.evidence!r}, failing_tests={self.failing_tests!r})"


def reader(name: str) -> object:
    """The module that reads `name`'s output (a key of RUNNER_MODULES), imported on first use."""
    return load(RUNNER_MODULES[name])


def _read(name: str, t: Text) -> Finding | None:
    return reader(name).READERS[name](t)


def _findings(t: Text, runners: list[str]) -> list[Finding]:
    """Each runner's summary, else its failure markers (status MARKER)."""
    out: list[Finding] = []
    for runner in runners:
        module = reader(runner)
        f = module.READERS[runner](t)
        markers = module.MARKERS.get(runner)
        if f is None and markers is not None:
            f = markers(t)
            if f is not None:
                f.status = MARKER
        if f is not None:
            out.append(f)
    return out


def _exit_meaning(runner: str | None, code: int) -> str | None:
    if code in SHELL_CODES or runner is None:
        return None
    if runner == DECLARED:  # the project said this command is its test run: its status is the verdict
        return PASS if code == 0 else FAIL
    if runner in COUNTING_EXITS:
        return PASS if code == 0 else (FAIL if 0 < code < 126 else None)
    return EXIT_MEANINGS.get(runner, {}).get(code)


def judge_test_run(command: str, exit_code: int | None, output: str, tests_config: object | None = None,
                   shape: CommandShape | None = None) -> TestVerdict:
    """Verdict on one Bash call: 'fail', 'pass', 'not_test' or 'unknown'.
    `tests_config` (ralph.rules.outcome.tests_config.TestsConfig) adds the project's own
    test commands and their fail/pass patterns; `shape`, the command's
    command_shape() when the caller already has it."""
    command = command if isinstance(command, str) else ""
    output = output if isinstance(output, str) else ""
    if shape is None:
        shape = command_shape(command, tuple(getattr(tests_config, "commands", ()) or ()))
    if shape.kind is None:
        return TestVerdict(NOT_TEST)
    t = Text(output)
    runner = shape.runner if shape.runner in RUNNER_MODULES else None
    if runner is not None:
        runners = [runner] + [r for r in RUNNER_ALSO.get(runner, ()) if r in RUNNER_MODULES]
    else:
        runners = list(UNKNOWN_RUNNER_ORDER)
    findings = _findings(t, runners)
    if runner is None:
        plain = _read("plain", t)
        if plain is not None:
            findings.append(plain)
    if not any(f.status in (FAIL, PASS, ZERO) for f in findings) and shape.runner == DECLARED:
        findings.extend(_declared_findings(output, tests_config))
    if not any(f.status in (FAIL, PASS, ZERO) for f in findings):
        findings.extend(_generic_findings(t, shape, exit_code))
    earlier = _earlier_failure(findings, runners, t, shape.test_stages > 1)
    if earlier is not None:
        findings.append(earlier)
    wrapper = None
    if shape.wrapper in WRAPPERS_WITH_STATUS:
        wrapper = _read(shape.wrapper, t)
    if wrapper is None and shape.kind == "wrapper":
        wrapper = _read("wrapper", t)
    return _decide(shape, exit_code, findings, wrapper, t)


def _earlier_failure(findings: list[Finding], runners: list[str], t: Text, several_runs: bool) -> Finding | None:
    """A failing summary before the passing one that closes the output (an
    earlier suite), read by the same runners' readers from the text before it.
    It counts when the command runs tests more than once (`a; b`) or a new run
    visibly started after it; not the generic grammar, and not a summary a
    test printed inside the last run."""
    summaries = [f for f in findings if f.status in (FAIL, PASS, ZERO)]
    if not summaries or any(f.status == FAIL for f in summaries):
        return None
    names = [r for r in runners if r in RUNNER_MODULES]
    end = min(f.pos for f in summaries)
    for _ in range(MAX_EARLIER_SUMMARIES):
        if end <= 0:
            return None
        before = Text(t.text[:end])
        found = [f for f in (_read(name, before) for name in names) if f is not None and f.status in (FAIL, PASS, ZERO)]
        if not found:
            return None
        failed = [f for f in found if f.status == FAIL and (several_runs or _run_started_between(t.text, f.pos, end))]
        if failed:
            f = failed[-1]
            f.evidence = f.evidence[:MAX_EVIDENCE] + ["an earlier suite failed; a later one passing does not undo it"]
            return f
        end = min(f.pos for f in found)
    return None


def _declared_findings(output: str, tests_config: object | None) -> list[Finding]:
    """`[tests] fail_patterns` / `pass_patterns` for a declared test command."""
    if tests_config is None:
        return []
    found = pattern_verdict(tests_config, output)
    if found is None:
        return []
    return [Finding(DECLARED, FAIL if found[0] == "fail" else PASS, len(output), [found[1], f"matched a [tests] {found[0]}_patterns entry"])]


def _generic_findings(t: Text, shape: CommandShape, exit_code: int | None) -> list[Finding]:
    """The generic reader, when no runner's own summary was read."""
    summary = _read("generic", t)
    if summary is not None:
        return [summary]
    # failure markers in cut or filtered output (`| head`, `| grep`), or beside a failing exit
    if not shape.exit_decisive or exit_code not in (None, 0):
        marks = reader("generic").MARKERS["generic"](t)
        if marks is not None:
            marks.status = MARKER
            return [marks]
    return []


def _run_started_between(text: str, start: int, end: int) -> bool:
    """Did a new run start after the summary at `start`, before `end`?"""
    line_end = text.find("\n", start)
    return line_end >= 0 and re.search(RUN_START, text[line_end + 1:end]) is not None


def _who(f: Finding, named: str | None) -> str | None:
    if f.runner == "unknown":
        return named
    if f.runner == "generic":
        return named or "generic"
    return f.runner


def _hung(shape: CommandShape, exit_code: int | None, t: Text | None) -> TestVerdict | None:
    """A test run stopped by `timeout` or a signal did not pass: fail, naming the
    test that was running when the output shows it."""
    if exit_code not in HUNG_CODES or not shape.exit_decisive or t is None:
        return None
    running = reader("generic").running_test(t.text)
    if shape.kind not in ("runner", "wrapper") and running is None:
        return None  # a program merely named like a test, with nothing showing a test running
    evidence = [f"exit code {exit_code}: the test run {HUNG_CODES[exit_code]} before it finished"]
    if running:
        evidence.append(f"running when it stopped: {running}")
    return TestVerdict(FAIL, shape.runner, evidence, [running] if running else [])


def _decide(shape: CommandShape, exit_code: int | None, findings: list[Finding], wrapper: Finding | None, t: Text | None = None) -> TestVerdict:
    summaries = [f for f in findings if f.status in (FAIL, PASS, ZERO)]
    markers = [f for f in findings if f.status == MARKER]
    named = shape.runner
    exit_note = [] if exit_code is None else [f"exit code {exit_code}" + (f" (masked by `{shape.mask}`)" if shape.mask else "")]
    if summaries:
        failed = [f for f in summaries if f.status == FAIL]
        if failed:
            f = failed[-1]
            return TestVerdict(FAIL, _who(f, named), f.evidence[:MAX_EVIDENCE + 1] + exit_note, f.failing[:MAX_FAILING])
        passed = [f for f in summaries if f.status == PASS]
        final = max(summaries, key=lambda f: f.pos)
        who = _who(final, named)
        if not passed:
            return TestVerdict(UNKNOWN, who, ["no tests ran"] + final.evidence[:MAX_EVIDENCE] + exit_note)
        f = max(passed, key=lambda f: f.pos)
        who = _who(f, named)
        # The summary says passed; does the runner's own exit status disagree?
        if exit_code and shape.exit_decisive and exit_code not in SHELL_CODES:
            if shape.kind == "runner":
                return TestVerdict(FAIL, who, f.evidence[:MAX_EVIDENCE] + exit_note + ["the runner exited non-zero although its summary reports no failures"])
            return TestVerdict(UNKNOWN, who, f.evidence[:MAX_EVIDENCE] + (wrapper.evidence[:2] if wrapper else []) + exit_note + ["tests passed but the command failed after them"])
        if wrapper is not None and wrapper.status == FAIL:
            return TestVerdict(UNKNOWN, who, f.evidence[:MAX_EVIDENCE] + wrapper.evidence[:2] + ["tests passed but the wrapper reports a failure"])
        if _cut_and_masked(shape):
            return TestVerdict(UNKNOWN, who, f.evidence[:MAX_EVIDENCE] + exit_note + [
                f"the output was cut by `{shape.mask}` and its exit status masked: what was cut away may have failed"])
        return TestVerdict(PASS, who, f.evidence[:MAX_EVIDENCE] + exit_note)
    if markers:
        f = markers[0]
        return TestVerdict(FAIL, _who(f, named), f.evidence[:MAX_EVIDENCE] + exit_note + ["no closing summary visible (output cut or run aborted)"], f.failing[:MAX_FAILING])
    if wrapper is not None and wrapper.runner in ("tox", "nox"):
        if wrapper.status == FAIL:
            return TestVerdict(FAIL, named or wrapper.runner, wrapper.evidence[:MAX_EVIDENCE] + exit_note)
        if wrapper.status == PASS:
            return TestVerdict(PASS, named or wrapper.runner, wrapper.evidence[:MAX_EVIDENCE] + exit_note)
    if exit_code is None or not shape.exit_decisive:
        why = "exit status unknown" if exit_code is None else f"exit status masked by `{shape.mask}`"
        return TestVerdict(UNKNOWN, named, [f"no test summary visible; {why}"])
    hung = _hung(shape, exit_code, t)
    if hung is not None:
        return hung
    if exit_code in SIGNAL_NAMES and shape.clean_prefix:
        return TestVerdict(FAIL, named, exit_note + [f"the test program was killed by {SIGNAL_NAMES[exit_code]} (exit {exit_code}) before "
                                                     "it printed a summary: it crashed or was stopped"])
    if exit_code == 124 and shape.clean_prefix:
        return TestVerdict(FAIL, named, exit_note + [f"the test program {HUNG_CODES[124]} before it printed a summary"])
    if exit_code in SHELL_CODES:
        return TestVerdict(UNKNOWN, named, exit_note + [SHELL_CODES[exit_code]])
    if shape.kind == "runner" and (named in EXIT_MEANINGS or named in COUNTING_EXITS or named == DECLARED):
        meaning = _exit_meaning(named, exit_code)
        if meaning == FAIL and shape.clean_prefix:
            return TestVerdict(FAIL, named, exit_note + [f"{named} exits {exit_code} on failing tests; no summary visible"])
        if meaning == PASS:
            return TestVerdict(PASS, named, exit_note)
        if meaning == ZERO:
            return TestVerdict(UNKNOWN, named, exit_note + ["no tests ran"])
        return TestVerdict(UNKNOWN, named, exit_note + ["no test summary visible"])
    if shape.kind == "wrapper" and exit_code and wrapper is not None and wrapper.status == FAIL:
        return TestVerdict(FAIL, named, wrapper.evidence[:MAX_EVIDENCE] + exit_note + ["the test script failed; no runner summary visible"])
    if exit_code and shape.clean_prefix and shape.kind in ("runner", "wrapper", "maybe"):
        # named like a test, declared as one, or a runner whose codes are not known: a non-zero exit is a failing run
        what = "the project's test command" if named == DECLARED else f"the {named} run" if named else "a test program (by its name)"
        return TestVerdict(FAIL, named, exit_note + [f"{what} exited {exit_code}; no summary visible"])
    return TestVerdict(UNKNOWN, named, exit_note + ["no test summary visible"])


def _cut_and_masked(shape: CommandShape) -> bool:
    """Was the output cut by a filter (`| tail`, `| grep`) that also took the runner's status?"""
    if shape.exit_decisive or not shape.mask.startswith("| "):
        return False
    words = shape.mask[2:].split()
    return bool(words) and words[0] in CUTTING_FILTERS


def pattern_verdict(tests_config: TestsConfig, output: str) -> tuple[str, str] | None:
    """('fail'|'pass', the matching line) from the declared patterns, read in
    the output's last 64 KB; a fail pattern wins over a pass pattern."""
    text = output[-65536:]
    for status, patterns in (("fail", tests_config.fail_patterns), ("pass", tests_config.pass_patterns)):
        for pattern in patterns:
            m = None
            for m in re.finditer(pattern, text, re.M):
                pass
            if m is not None:
                start = text.rfind("\n", 0, m.start()) + 1
                end = text.find("\n", m.end())
                return status, text[start:end if end >= 0 else len(text)].strip()[:240]
    return None
