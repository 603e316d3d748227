"""`cargo test` and `cargo nextest`: `test result:` lines per test binary, the
nextest summary, and the compile errors that stop a run before any test."""
from __future__ import annotations

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, Finding, Text, cut, names

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
CARGO_RESULT = ("test result: ", r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed;(?: (\d+) ignored;)?")
NEXTEST_SUMMARY = ("Summary", r"^[ \t]*Summary \[[^\]\n]{0,40}\] (\d+) tests? run: (\d+) passed(?: \([^)\n]{0,40}\))?, (\d+) failed")
CARGO_TEST_FAILED = ("FAILED", r"^test (\S{1,300}) \.\.\. FAILED$")
CARGO_ERROR = ("error", r"^error(?:\[E\d{4}\])?: (?:test failed|could not compile|[^\n]{0,300})")


def read_cargo(t: Text) -> Finding | None:
    results = t.find(CARGO_RESULT)
    nextest = t.last(NEXTEST_SUMMARY)
    failed_names = names(t.find(CARGO_TEST_FAILED))
    errors = [m for m in t.find(CARGO_ERROR) if "test failed" in m.group(0) or "could not compile" in m.group(0)]
    if nextest is not None:
        status = FAIL if int(nextest.group(3)) else (PASS if int(nextest.group(1)) else ZERO)
        return Finding("cargo", status, nextest.start(), [cut(nextest.group(0))], failed_names)
    if results:
        bad = [m for m in results if m.group(1) == "FAILED" or int(m.group(3))]
        anchor = results[-1].start()
        if bad or errors:
            evidence = [cut(m.group(0)) for m in bad[:2]] + [cut(m.group(0)) for m in errors[:1]]
            return Finding("cargo", FAIL, anchor, evidence or ["test result: FAILED"], failed_names)
        if any(int(m.group(2)) for m in results):
            return Finding("cargo", PASS, anchor, [cut(m.group(0)) for m in results[-2:]])
        if "Running " not in t.text and "Doc-tests " not in t.text:
            # only the last (doc-test) result is visible: cargo stops at the first
            # failing binary, so an `ok` here closes a run with nothing failed
            return Finding("cargo", PASS, anchor, [cut(m.group(0)) for m in results[-2:]])
        return Finding("cargo", ZERO, anchor, [cut(m.group(0)) for m in results[-2:]])
    if errors:
        return Finding("cargo", FAIL, errors[-1].start(), [cut(m.group(0)) for m in errors[-2:]], failed_names)
    return None


def markers_cargo(t: Text) -> Finding | None:
    hits = t.find(CARGO_TEST_FAILED) + [m for m in t.find(CARGO_ERROR) if m.group(0).startswith("error[E")]
    if hits:
        hits.sort(key=lambda m: m.start())
        return Finding("cargo", FAIL, hits[0].start(), [cut(hits[0].group(0))], names(t.find(CARGO_TEST_FAILED)))
    return None


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"cargo": read_cargo}
MARKERS = {"cargo": markers_cargo}
