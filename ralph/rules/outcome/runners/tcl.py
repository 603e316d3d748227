"""tcltest: the `FILE:\tTotal\tN\tPassed\tN\tSkipped\tN\tFailed\tN` line (a
table read key by key: `Failed 0` is no failure) and its `==== name FAILED`
lines. tcltest exits 0 whether or not a test failed, so its line decides."""
from __future__ import annotations

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, Finding, Text, cut, names

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
TCLTEST_SUMMARY = ("Total", r"^([^\s:]{1,200}):[ \t]+Total[ \t]+(\d+)[ \t]+Passed[ \t]+(\d+)[ \t]+Skipped[ \t]+(\d+)[ \t]+Failed[ \t]+(\d+)[ \t]*$")
TCLTEST_FAILING = ("FAILED", r"^==== (\S{1,200} [^\n]{0,200}?) FAILED$")
TCLTEST_FILE_ERROR = ("Test file error", r"^Test file error:[^\n]{0,300}$")


def read_tcltest(t: Text) -> Finding | None:
    m = t.last(TCLTEST_SUMMARY)
    if m is None:
        return None
    total, passed, failed = int(m.group(2)), int(m.group(3)), int(m.group(5))
    error = t.last(TCLTEST_FILE_ERROR)
    if failed or error is not None:
        evidence = [cut(m.group(0))] + ([cut(error.group(0))] if error is not None else [])
        return Finding("tcltest", FAIL, m.start(), evidence, names(t.find(TCLTEST_FAILING)))
    return Finding("tcltest", PASS if passed else ZERO, m.start(), [cut(m.group(0))] + ([] if total else ["no tests ran"]))


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"tcltest": read_tcltest}
MARKERS = {}
