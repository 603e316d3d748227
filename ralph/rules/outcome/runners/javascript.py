"""JavaScript runners with their own summaries: jest, vitest, mocha, deno and bun
(node's own runner and tape print TAP: ralph.rules.outcome.runners.tap)."""
from __future__ import annotations

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, MAX_FAILING, Finding, Text, counts, cut, names

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
JEST_TESTS = ("Tests:", r"^Tests:[ \t]+(?P<body>[^\n]{1,300})$")
JEST_SUITES = ("Test Suites:", r"^Test Suites:[ \t]+(?P<body>[^\n]{1,300})$")
JEST_NO_TESTS = ("No tests found", r"^No tests found, exiting with code (\d+)")
JEST_FAILING = ("\u25cf ", r"^[ \t]{0,4}\u25cf (?!Test suite failed to run)(?!Console)([^\n]{1,300})$")
JEST_FILE_FAIL = ("FAIL ", r"^FAIL (\S{1,300}\.(?:[cm]?[jt]sx?))")
JEST_SUITE_FAILED = ("Test suite failed to run", r"^[ \t]{0,4}\u25cf Test suite failed to run")
VITEST_FILES = ("Test Files", r"^[ \t]*Test Files[ \t]+(?P<body>[^\n]{1,200})$")
VITEST_TESTS = ("Tests ", r"^[ \t]*Tests[ \t]{2,}(?P<body>[^\n]{1,200})$")
VITEST_NO_FILES = ("No test files found", r"^No test files found")
VITEST_ERRORS = ("Errors", r"^[ \t]*Errors[ \t]+(\d+) errors?")
VITEST_FAILING = ("FAIL ", r"^[ \t]*FAIL[ \t]+(\S{1,300} > [^\n]{1,300}?)[ \t]*(?:\[[^\n]{0,40}\])?$")
MOCHA_PASSING = ("passing", r"^[ \t]+(\d+) passing \([^)\n]{1,30}\)")
MOCHA_FAILING = ("failing", r"^[ \t]+(\d+) failing[ \t]*$")
MOCHA_FAILURE_ITEM = (") ", r"^[ \t]{2,4}(\d+)\) ([^\n]{1,300})$")
MOCHA_TEST_FRAME = ("Context.<anonymous>", r"^[ \t]+at Context\.<anonymous> \([^\n]{1,300}\)$")
DENO_SUMMARY = (" passed ", r"^(ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed")
DENO_ERROR = ("error: ", r"^error: (?:Test failed|No test modules found|[^\n]{0,300})")
DENO_FAILING = (" => ", r"^([^\n]{1,300}?) => \S{1,300}:\d+:\d+$")
BUN_RAN = ("Ran ", r"^Ran (\d+) tests? across (\d+) files?\.")
BUN_COUNTS = ("", r"^[ \t]*(\d+) (pass|fail|skip|todo|errors?|snapshots?|expect\(\) calls)[ \t]*$")
BUN_NO_TESTS = ("t", r"^(?:error: )?(?:No tests found|The following filters did not match any test files|0 test files matching)")
BUN_BAILED = ("Bailed out", r"^Bailed out after (\d+) failures?")
BUN_FAIL_ITEM = ("(fail)", r"^\(fail\) ([^\n]{1,300}?)(?: \[[\d.]+m?s\])?$")


def read_jest(t: Text) -> Finding | None:
    tests = t.last(JEST_TESTS)
    suites = t.last(JEST_SUITES)
    none = t.last(JEST_NO_TESTS)
    if tests is None and suites is None:
        if none is not None:
            return Finding("jest", ZERO, none.start(), [cut(none.group(0))])
        return None
    anchor = tests or suites
    tc = counts(tests.group("body")) if tests else {}
    sc = counts(suites.group("body")) if suites else {}
    evidence = [cut(m.group(0)) for m in (suites, tests) if m is not None]
    if tc.get("failed", 0) or sc.get("failed", 0):
        failing = [n for n in names(t.find(JEST_FAILING))]
        if not failing:
            failing = names(t.find(JEST_FILE_FAIL))
        return Finding("jest", FAIL, anchor.start(), evidence, failing)
    if tc.get("passed", 0):
        return Finding("jest", PASS, anchor.start(), evidence)
    return Finding("jest", ZERO, anchor.start(), evidence)


def markers_jest(t: Text) -> Finding | None:
    hits = t.find(JEST_FILE_FAIL) + t.find(JEST_SUITE_FAILED)
    if hits:
        return Finding("jest", FAIL, hits[0].start(), [cut(hits[0].group(0))], names(t.find(JEST_FAILING)) or names(t.find(JEST_FILE_FAIL)))
    return None


def read_vitest(t: Text) -> Finding | None:
    files = t.last(VITEST_FILES)
    tests = t.last(VITEST_TESTS)
    if files is None:
        none = t.last(VITEST_NO_FILES)
        return Finding("vitest", ZERO, none.start(), [cut(none.group(0))]) if none else None
    fc = counts(files.group("body"))
    tc = counts(tests.group("body")) if tests is not None and tests.start() > files.start() else {}
    errors = t.last(VITEST_ERRORS)
    evidence = [cut(files.group(0))] + ([cut(tests.group(0))] if tc else [])
    if errors is not None and errors.start() > files.start():
        evidence.append(cut(errors.group(0)))
    if fc.get("failed", 0) or tc.get("failed", 0) or (errors is not None and errors.start() > files.start()):
        return Finding("vitest", FAIL, files.start(), evidence, names(t.find(VITEST_FAILING)))
    if tc.get("passed", 0) or (not tc and fc.get("passed", 0)):
        return Finding("vitest", PASS, files.start(), evidence)
    return Finding("vitest", ZERO, files.start(), evidence)


def markers_vitest(t: Text) -> Finding | None:
    hits = t.find(VITEST_FAILING)
    if hits:
        return Finding("vitest", FAIL, hits[0].start(), [cut(hits[0].group(0))], names(hits))
    return None


def read_mocha(t: Text) -> Finding | None:
    passing = t.last(MOCHA_PASSING)
    if passing is None:
        return None
    after = [m for m in t.find(MOCHA_FAILING) if m.start() > passing.start()]
    evidence = [cut(passing.group(0))] + [cut(m.group(0)) for m in after[:1]]
    if after and int(after[0].group(1)):
        items = [m for m in t.find(MOCHA_FAILURE_ITEM) if m.start() > after[0].start()]
        failing = []
        for m in items:
            name = cut(m.group(2)).rstrip(":")
            if name not in failing:
                failing.append(name)
        return Finding("mocha", FAIL, passing.start(), evidence, failing[:MAX_FAILING])
    if int(passing.group(1)):
        return Finding("mocha", PASS, passing.start(), evidence)
    return Finding("mocha", ZERO, passing.start(), evidence)


def markers_mocha(t: Text) -> Finding | None:
    # mocha prints failure details (with the test body's stack frame) after its summary
    hits = t.find(MOCHA_TEST_FRAME)
    return Finding("mocha", FAIL, hits[0].start(), [cut(hits[0].group(0))]) if hits else None


def read_deno(t: Text) -> Finding | None:
    m = t.last(DENO_SUMMARY)
    errors = [e for e in t.find(DENO_ERROR) if not e.group(0).startswith("error: No test modules")]
    none = [e for e in t.find(DENO_ERROR) if e.group(0).startswith("error: No test modules")]
    failing = names(t.find(DENO_FAILING))
    if m is not None:
        passed, failed = int(m.group(2)), int(m.group(3))
        if m.group(1) == "FAILED" or failed:
            return Finding("deno", FAIL, m.start(), [cut(m.group(0))], failing)
        late_errors = [e for e in errors if e.start() > m.start()]
        if late_errors:
            return Finding("deno", FAIL, late_errors[-1].start(), [cut(m.group(0)), cut(late_errors[-1].group(0))], failing)
        return Finding("deno", PASS if passed else ZERO, m.start(), [cut(m.group(0))])
    if none:
        return Finding("deno", ZERO, none[-1].start(), [cut(none[-1].group(0))])
    if errors:
        return Finding("deno", FAIL, errors[-1].start(), [cut(errors[-1].group(0))], failing)
    return None


def read_bun(t: Text) -> Finding | None:
    ran = t.last(BUN_RAN)
    count_lines = t.find(BUN_COUNTS)
    none = t.last(BUN_NO_TESTS)
    if ran is None and none is None:
        return None
    if ran is None:
        return Finding("bun", ZERO, none.start(), [cut(none.group(0))])
    bailed = t.last(BUN_BAILED)
    if bailed is not None and bailed.start() > ran.start():
        # `--bail`: no count block, only "Bailed out after N failure(s)"
        return Finding("bun", FAIL, bailed.start(), [cut(ran.group(0)), cut(bailed.group(0))], names(t.find(BUN_FAIL_ITEM)))
    block = [m for m in count_lines if 0 < ran.start() - m.start() < 600]
    tally: dict[str, int] = {}
    for m in block:
        key = m.group(2).split()[0].rstrip("s") if m.group(2).startswith("error") else m.group(2)
        tally[key] = int(m.group(1))
    evidence = [cut(m.group(0)) for m in block if m.group(2) in ("pass", "fail")] + [cut(ran.group(0))]
    if tally.get("fail", 0) or tally.get("error", 0):
        return Finding("bun", FAIL, ran.start(), evidence, names(t.find(BUN_FAIL_ITEM)))
    if tally.get("pass", 0) or ("pass" not in tally and "fail" in tally and int(ran.group(1))):
        return Finding("bun", PASS, ran.start(), evidence)
    return Finding("bun", ZERO, ran.start(), evidence)


def markers_bun(t: Text) -> Finding | None:
    hits = t.find(BUN_FAIL_ITEM)
    return Finding("bun", FAIL, hits[0].start(), [cut(hits[0].group(0))], names(hits)) if hits else None


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"jest": read_jest, "vitest": read_vitest, "mocha": read_mocha, "deno": read_deno, "bun": read_bun}
MARKERS = {"jest": markers_jest, "vitest": markers_vitest, "mocha": markers_mocha, "bun": markers_bun}
