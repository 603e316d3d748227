"""Python runners: pytest and unittest (nose2, trial, `manage.py test`), and the
tox and nox wrappers, which print their own status lines after the inner
runner's summary."""
from __future__ import annotations

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, MAX_EVIDENCE, MAX_FAILING, Finding, Text, counts, cut, names

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
PYTEST_INTERRUPTED = ("Interrupted", r"^(?:!+ )?Interrupted: (\d+) errors? during collection")
PYTEST_SUMMARY = ("in ", r"^(?:=+ )?(?P<body>(?:\d{1,9} [a-z]{4,12}(?:, |\s(?=in )))+|no tests ran|(?:\d{1,9} [a-z]{4,12}))\s?in \d{1,7}(?:\.\d{1,4})?s\b[^\n=]{0,40}(?: =+)?[ \t]*$")
PYTEST_FAILED_LINE = ("FAILED ", r"^FAILED (\S{1,300}?)(?: - [^\n]{0,300})?$")
PYTEST_ERROR_LINE = ("ERROR ", r"^ERROR (\S{1,300})(?: - [^\n]{0,300})?$")
PYTEST_COLLECT_ERROR = ("ERROR collecting", r"^_+ ERROR collecting (\S{1,300}) _+$")
PYTEST_VERBOSE_FAILED = (" FAILED", r"^(\S{1,300}\.py::\S{1,300}) FAILED(?:[ \t]+\[[ \t]{0,2}\d{1,3}%\])?[ \t]*$")
PYTEST_PROGRESS = (".py ", r"^\S{1,300}\.py [.FEsxX]{1,2000}(?:\s+\[\s{0,2}\d{1,3}%\])?[ \t]*$")
UNITTEST_RAN = ("Ran ", r"^Ran (\d+) tests? in [\d.]+s[ \t]*\n(?:[ \t]*\n){0,3}(?P<status>OK|FAILED|NO TESTS RAN)(?: \((?P<detail>[^)\n]{0,200})\))?[ \t]*$")
UNITTEST_FAIL_LINE = (": ", r"^(?:FAIL|ERROR): (\S{1,200}) \(([^)\n]{1,300})\)")
TOX_ENV = (": ", r"^[ \t]+(\S{1,60}): (OK|FAIL)(?: code (\d+))? \(")
TOX3_ENV = ("commands ", r"^(?:ERROR: )?[ \t]+(\S{1,60}): commands (succeeded|failed)")
TOX_END = (":", r"^[ \t]+(congratulations :\)|evaluation failed :\()")
NOX_SESSION = ("nox > ", r"^nox > (?:\* )?(?:Session )?(\S{1,100})(?: was successful| failed|: success|: failed| was skipped|: skipped)")


def read_pytest(t: Text) -> Finding | None:
    interrupted = t.last(PYTEST_INTERRUPTED)
    m = t.last(PYTEST_SUMMARY)
    failing = names(t.find(PYTEST_FAILED_LINE)) + names(t.find(PYTEST_ERROR_LINE)) + names(t.find(PYTEST_COLLECT_ERROR))
    if m is not None:
        body = m.group("body")
        c = counts(body)
        evidence = [cut(m.group(0))]
        if interrupted is not None:
            evidence.insert(0, cut(interrupted.group(0)))
        if c.get("failed", 0) or c.get("error", 0) or c.get("errors", 0) or interrupted is not None:
            return Finding("pytest", FAIL, m.start(), evidence, failing)
        ran = c.get("passed", 0) + c.get("xfailed", 0) + c.get("xpassed", 0)
        return Finding("pytest", PASS if ran else ZERO, m.start(), evidence)
    if interrupted is not None:
        return Finding("pytest", FAIL, interrupted.start(), [cut(interrupted.group(0))], failing)
    return None


def markers_pytest(t: Text) -> Finding | None:
    verbose = t.find(PYTEST_VERBOSE_FAILED)  # `pytest -v`: `path::test FAILED [ 50%]`
    hits = t.find(PYTEST_FAILED_LINE) + t.find(PYTEST_COLLECT_ERROR) + verbose
    progress = [m for m in t.find(PYTEST_PROGRESS) if "F" in m.group(0).rsplit(".py ", 1)[1] or "E" in m.group(0).rsplit(".py ", 1)[1]]
    if hits or progress:
        first = (hits or progress)[0]
        return Finding("pytest", FAIL, first.start(), [cut(first.group(0))], names(t.find(PYTEST_FAILED_LINE)) + names(t.find(PYTEST_COLLECT_ERROR)) + names(verbose))
    return None


def read_unittest(t: Text) -> Finding | None:
    m = t.last(UNITTEST_RAN)
    if m is None:
        return None
    status = m.group("status")
    ran = int(m.group(1))
    evidence = [cut(x) for x in m.group(0).split("\n") if x.strip()]
    if status == "FAILED":
        failing = [f"{a} ({b})" if "." not in b else b for a, b in ((x.group(1), x.group(2)) for x in t.find(UNITTEST_FAIL_LINE))][:MAX_FAILING]
        return Finding("unittest", FAIL, m.start(), evidence, failing)
    if status == "NO TESTS RAN" or ran == 0:
        return Finding("unittest", ZERO, m.start(), evidence)
    return Finding("unittest", PASS, m.start(), evidence)


def markers_unittest(t: Text) -> Finding | None:
    hits = t.find(UNITTEST_FAIL_LINE)
    if hits:
        return Finding("unittest", FAIL, hits[0].start(), [cut(hits[0].group(0))], names(hits, 2))
    return None


def read_tox(t: Text) -> Finding | None:
    envs = t.find(TOX_ENV) + t.find(TOX3_ENV)
    end = t.last(TOX_END)
    if end is None and not envs:
        return None
    bad = [m for m in envs if m.group(2) in ("FAIL", "failed")]
    anchor = end.start() if end is not None else envs[-1].start()
    evidence = [cut(m.group(0)) for m in (bad or envs)[:MAX_EVIDENCE]] + ([cut(end.group(0))] if end is not None else [])
    failed = bad or (end is not None and "failed" in end.group(1))
    return Finding("tox", FAIL if failed else PASS, anchor, evidence)


def read_nox(t: Text) -> Finding | None:
    sessions = t.find(NOX_SESSION)
    if not sessions:
        return None
    bad = [m for m in sessions if "failed" in m.group(0)]
    good = [m for m in sessions if "success" in m.group(0)]
    if bad:
        return Finding("nox", FAIL, bad[-1].start(), [cut(m.group(0)) for m in bad[:MAX_EVIDENCE]])
    if good:
        return Finding("nox", PASS, good[-1].start(), [cut(good[-1].group(0))])
    return Finding("nox", ZERO, sessions[-1].start(), [cut(sessions[-1].group(0))])


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"pytest": read_pytest, "unittest": read_unittest, "tox": read_tox, "nox": read_nox}
MARKERS = {"pytest": markers_pytest, "unittest": markers_unittest}
