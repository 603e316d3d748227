"""Ruby runners: RSpec and minitest (`rake test`, `ruby -Itest test/x_test.rb`)."""
from __future__ import annotations

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, MAX_FAILING, Finding, Text, cut, names

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
RSPEC_SUMMARY = ("example", r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?(?:, (\d+) errors? occurred outside of examples)?")
RSPEC_FAILED = ("rspec ", r"^rspec (\S{1,300}) # ([^\n]{1,300})$")
RSPEC_FAILED_HEADER = ("Failed examples:", r"^Failed examples:[ \t]*$")
MINITEST_SUMMARY = ("assertions", r"^(\d+) (?:runs|tests), (\d+) assertions, (\d+) failures, (\d+) errors, (\d+) (?:skips|pendings)")
MINITEST_FAILED = ("#", r"^[ \t]*(?:\d+\) )?(?:Failure|Error):\n[ \t]*(\S{1,200}#\S{1,200})")


def read_rspec(t: Text) -> Finding | None:
    m = t.last(RSPEC_SUMMARY)
    if m is None:
        return None
    examples, failures = int(m.group(1)), int(m.group(2))
    errors = int(m.group(4) or 0)
    if failures or errors:
        failing = [f"{d} ({p})" for p, d in ((x.group(1), x.group(2)) for x in t.find(RSPEC_FAILED))][:MAX_FAILING]
        return Finding("rspec", FAIL, m.start(), [cut(m.group(0))], failing)
    return Finding("rspec", PASS if examples - int(m.group(3) or 0) > 0 else ZERO, m.start(), [cut(m.group(0))])


def markers_rspec(t: Text) -> Finding | None:
    hits = t.find(RSPEC_FAILED_HEADER) + t.find(RSPEC_FAILED)
    if not hits:
        return None
    failing = [f"{d} ({p})" for p, d in ((x.group(1), x.group(2)) for x in t.find(RSPEC_FAILED))][:MAX_FAILING]
    return Finding("rspec", FAIL, hits[0].start(), [cut(hits[0].group(0))], failing)


def read_minitest(t: Text) -> Finding | None:
    m = t.last(MINITEST_SUMMARY)
    if m is None:
        return None
    runs, failures, errors, skips = int(m.group(1)), int(m.group(3)), int(m.group(4)), int(m.group(5))
    runs -= skips
    if failures or errors:
        return Finding("minitest", FAIL, m.start(), [cut(m.group(0))], names(t.find(MINITEST_FAILED)))
    return Finding("minitest", PASS if runs else ZERO, m.start(), [cut(m.group(0))])


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"rspec": read_rspec, "minitest": read_minitest}
MARKERS = {"rspec": markers_rspec}
