"""CTest (CMake's test driver): `N% tests passed, N tests failed out of N` and
the list of failed tests it prints after its closing time line."""
from __future__ import annotations

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, Finding, Text, cut, names

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
CTEST_SUMMARY = ("tests passed", r"^(\d+)% tests passed, (\d+) tests? failed out of (\d+)")
CTEST_NONE = ("No tests were found", r"^No tests were found")
CTEST_TOTAL_TIME = ("Total Test time", r"^Total Test time \(real\) = [^\n]{0,60}$")
CTEST_FAILED_HEADER = ("FAILED", r"^(?:The following tests FAILED:|Errors while running CTest)[ \t]*$")
CTEST_FAILED = ("- ", r"^[ \t]+\d+ - (\S{1,300}) \((?:Failed|Not Run|Timeout|SEGFAULT|Exception|Subprocess aborted|Child aborted|OTHER_FAULT|ILLEGAL|INTERRUPT|NUMERICAL|BAD_COMMAND|Bus error)")


def read_ctest(t: Text) -> Finding | None:
    m = t.last(CTEST_SUMMARY)
    if m is None:
        none = t.last(CTEST_NONE)
        if none is not None:
            return Finding("ctest", ZERO, none.start(), [cut(none.group(0))])
        total = t.last(CTEST_TOTAL_TIME)
        failed_after = [h for h in t.find(CTEST_FAILED_HEADER) if total is not None and h.start() > total.start()]
        if total is not None and not failed_after:
            # ctest lists failures right after this closing line; none follow it
            return Finding("ctest", PASS, total.start(), [cut(total.group(0))])
        return None
    failed, total = int(m.group(2)), int(m.group(3))
    if failed:
        return Finding("ctest", FAIL, m.start(), [cut(m.group(0))], names(t.find(CTEST_FAILED)))
    return Finding("ctest", PASS if total else ZERO, m.start(), [cut(m.group(0))])


def markers_ctest(t: Text) -> Finding | None:
    hits = t.find(CTEST_FAILED_HEADER)
    return Finding("ctest", FAIL, hits[0].start(), [cut(m.group(0)) for m in hits[:2]], names(t.find(CTEST_FAILED))) if hits else None


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"ctest": read_ctest}
MARKERS = {"ctest": markers_ctest}
