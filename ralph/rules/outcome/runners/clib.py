"""C unit-test libraries, whose test programs have any name (`./check_calc`,
`./test_calc`): libcheck's `N%: Checks: N, Failures: N, Errors: N`, CUnit's
`Run Summary` table and cmocka's `[==========] N test(s) run.` block (its
TAP mode goes to the TAP reader)."""
from __future__ import annotations

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, Finding, Text, cut, names

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
CHECK_SUMMARY = ("Checks: ", r"^(\d{1,3})%: Checks: (\d+), Failures: (\d+), Errors: (\d+)")
CHECK_FAILING = (":", r"^[^:\n]{1,300}:\d+:[FE]:[^:\n]{0,200}:([^:\n]{1,200}):")
CUNIT_HEADER = ("Run Summary:", r"^Run Summary:[ \t]+Type[ \t]+Total[ \t]+Ran[ \t]+Passed[ \t]+Failed[ \t]+Inactive[ \t]*$")
CUNIT_ROW = ("tests", r"^[ \t]+(tests|asserts)[ \t]+(\d+)[ \t]+(\d+)[ \t]+(\d+|n/a)[ \t]+(\d+)[ \t]+(\d+|n/a)[ \t]*$")
CUNIT_FAILING = ("FAILED", r"^[ \t]+Test: ([^\n]{1,200}?) \.\.\.FAILED")
CMOCKA_RAN = ("test(s) run.", r"^\[==========\] (?:[^\n]{0,100}: )?(\d+) test\(s\) run\.$")
CMOCKA_PASSED = ("PASSED", r"^\[  PASSED  \] (\d+) test\(s\)\.$")
CMOCKA_FAILED = ("listed below", r"^\[  FAILED  \] (?:[^\n]{0,100}: )?(\d+) test\(s\), listed below:$")
CMOCKA_FAILING = ("FAILED", r"^\[  FAILED  \] ([A-Za-z_]\w{0,200})$")
CMOCKA_ERRORS = ("ERROR", r"^\[  ERROR   \] (?:[^\n]{0,100}: )?(\d+) test\(s\)")


def read_libcheck(t: Text) -> Finding | None:
    m = t.last(CHECK_SUMMARY)
    if m is None:
        return None
    checks, failures, errors = int(m.group(2)), int(m.group(3)), int(m.group(4))
    if failures or errors:
        return Finding("libcheck", FAIL, m.start(), [cut(m.group(0))], names(t.find(CHECK_FAILING)))
    return Finding("libcheck", PASS if checks else ZERO, m.start(), [cut(m.group(0))])


def read_cunit(t: Text) -> Finding | None:
    header = t.last(CUNIT_HEADER)
    if header is None:
        return None
    rows = {m.group(1): m for m in t.find(CUNIT_ROW) if m.start() > header.start()}
    tests = rows.get("tests")
    if tests is None:
        return None
    failed = int(tests.group(5)) + (int(rows["asserts"].group(5)) if "asserts" in rows else 0)
    evidence = [cut(header.group(0))] + [cut(r.group(0)) for r in rows.values()]
    if failed:
        return Finding("cunit", FAIL, header.start(), evidence, names(t.find(CUNIT_FAILING)))
    return Finding("cunit", PASS if int(tests.group(3)) else ZERO, header.start(), evidence)


def read_cmocka(t: Text) -> Finding | None:
    ran = t.last(CMOCKA_RAN)
    if ran is None:
        return None
    after = [m for m in t.find(CMOCKA_FAILED) + t.find(CMOCKA_ERRORS) if m.start() > ran.start()]
    passed = [m for m in t.find(CMOCKA_PASSED) if m.start() > ran.start()]
    evidence = [cut(ran.group(0))] + [cut(m.group(0)) for m in passed[:1] + after[:2]]
    if any(int(m.group(1)) for m in after):
        failing = [m for m in t.find(CMOCKA_FAILING) if m.start() > ran.start()]
        return Finding("cmocka", FAIL, ran.start(), evidence, names(failing))
    return Finding("cmocka", PASS if int(ran.group(1)) and passed else ZERO, ran.start(), evidence)


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"libcheck": read_libcheck, "cunit": read_cunit, "cmocka": read_cmocka}
MARKERS = {}
