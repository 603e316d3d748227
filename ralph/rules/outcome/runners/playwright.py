"""Playwright Test: the count lines its list, line and dot reporters close with
(`  1 failed`, `  2 passed (3.1s)`, each on its own line) and the `stats` block
of its JSON reporter (`"unexpected": N` are the failures)."""
from __future__ import annotations

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, Finding, Text, cut, names

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
PW_COUNT = ("  ", r"^[ \t]{2}(\d+) (failed|passed|flaky|skipped|did not run|interrupted)(?: \([^)\n]{1,30}\))?[ \t]*$")
PW_FAILING = (" \u203a ", r"^[ \t]{2,6}(?:\d+\) )?(\S{1,300}:\d+:\d+ \u203a [^\n]{1,300}?)[ \t]*\u2500*[ \t]*$")
PW_NO_TESTS = ("No tests found", r"^Error: No tests found")
PW_JSON_STATS = ('"stats"', r'^[ \t]*"stats": \{\s*"startTime": "[^"\n]{0,40}",\s*"duration": [\d.]{1,20},\s*"expected": (\d+),\s*'
                 r'"skipped": (\d+),\s*"unexpected": (\d+),\s*"flaky": (\d+)')
PW_JSON_FAILING = ('"ok": false', r'^[ \t]*"title": "([^"\n]{1,200})",\s*"ok": false')


def read_playwright(t: Text) -> Finding | None:
    stats = t.last(PW_JSON_STATS)
    if stats is not None:
        expected, unexpected, flaky = int(stats.group(1)), int(stats.group(3)), int(stats.group(4))
        evidence = [f"JSON reporter stats: expected {expected}, skipped {stats.group(2)}, unexpected {unexpected}, flaky {flaky}"]
        if unexpected:
            return Finding("playwright", FAIL, stats.start(), evidence, names(t.find(PW_JSON_FAILING)))
        return Finding("playwright", PASS if expected or flaky else ZERO, stats.start(), evidence)
    lines = t.find(PW_COUNT)
    if not lines:
        none = t.last(PW_NO_TESTS)
        return Finding("playwright", ZERO, none.start(), [cut(none.group(0))]) if none is not None else None
    # the closing block: the count lines after the last gap of more than one line
    block = [lines[-1]]
    for m in reversed(lines[:-1]):
        if block[0].start() - m.end() > 400:
            break
        block.insert(0, m)
    found = {m.group(2): int(m.group(1)) for m in block}
    evidence = [cut(m.group(0)) for m in block]
    first = block[0].start()
    if found.get("failed") or found.get("interrupted"):
        failing = [m for m in t.find(PW_FAILING) if m.start() > first]
        return Finding("playwright", FAIL, first, evidence, names(failing))
    return Finding("playwright", PASS if found.get("passed") or found.get("flaky") else ZERO, first, evidence)


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"playwright": read_playwright}
MARKERS = {}
