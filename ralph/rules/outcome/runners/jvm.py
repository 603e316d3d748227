"""Maven: Surefire's closing `Tests run: N, Failures: N, Errors: N, Skipped: N`
(the one without `-- in <class>`), and a compile failure (`COMPILATION ERROR`,
the compiler plugin's `Compilation failure`) that stops `mvn test` before any
test runs: the project's tests cannot pass, so the run failed."""
from __future__ import annotations

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, Finding, Text, cut, names

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
MVN_TESTS = ("Tests run:", r"^(?:\[(?:INFO|ERROR|WARNING)\] )?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)[ \t]*$")
MVN_NO_TESTS = ("No tests", r"^\[(?:INFO|WARNING)\] No tests (?:to run|were executed)[^\n]{0,100}$")
MVN_COMPILE = ("ompil", r"^\[ERROR\] (?:COMPILATION ERROR :|Failed to execute goal org\.apache\.maven\.plugins:maven-compiler-plugin:[^\n]{0,200}"
                        r"(?:Compilation failure|compile \(default-(?:test)?[cC]ompile\))[^\n]{0,200})")
MVN_COMPILE_ERROR = (".java:[", r"^\[ERROR\] (\S{1,300}\.(?:java|kt|groovy|scala):\[\d+,\d+\][^\n]{0,240})$")
MVN_FAILING = ("[ERROR]", r"^\[ERROR\][ \t]+(?:Run \d+: )?([A-Za-z_$][\w$.]{0,200}\.[\w$]{1,200})(?::\d+)?[ \t]")
MVN_RESULTS = ("Results:", r"^\[INFO\] Results:[ \t]*$")


def read_maven(t: Text) -> Finding | None:
    tests = t.last(MVN_TESTS)
    compile_failed = t.last(MVN_COMPILE)
    if compile_failed is not None and (tests is None or compile_failed.start() > tests.start()):
        errors = [cut(m.group(1)) for m in t.find(MVN_COMPILE_ERROR)][:3]
        return Finding("maven", FAIL, compile_failed.start(), [cut(compile_failed.group(0))] + errors,
                       ["(compilation failed: no test ran)"])
    if tests is None:
        none = t.last(MVN_NO_TESTS)
        return Finding("maven", ZERO, none.start(), [cut(none.group(0))]) if none is not None else None
    ran, failures, errors = int(tests.group(1)), int(tests.group(2)), int(tests.group(3))
    if failures or errors:
        results = t.last(MVN_RESULTS)
        failing = [m for m in t.find(MVN_FAILING) if results is None or m.start() > results.start()]
        return Finding("maven", FAIL, tests.start(), [cut(tests.group(0))], names(failing))
    return Finding("maven", PASS if ran else ZERO, tests.start(), [cut(tests.group(0))])


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"maven": read_maven}
MARKERS = {}
