"""PHPUnit (and `php artisan test`): its `OK (...)` / `FAILURES!` closing lines,
and PHP's fatal errors when a run dies before its summary."""
from __future__ import annotations

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, Finding, Text, cut, names

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
PHPUNIT_OK = ("OK", r"^OK \((\d+) tests?, (\d+) assertions?\)")
PHPUNIT_OK_BUT = ("OK, but", r"^OK, but [^\n]{1,80}!")
PHPUNIT_BAD = ("!", r"^(FAILURES|ERRORS)!$")
PHPUNIT_COUNTS = ("Tests: ", r"^Tests: (\d+), Assertions: (\d+)(?P<rest>[^\n]{0,200})$")
PHPUNIT_NONE = ("No tests executed", r"^No tests executed!")
PHPUNIT_FAILED = ("::", r"^\d+\) (\S{1,200}::\S{1,200})")
PHP_FATAL = ("PHP ", r"^PHP (?:Parse|Fatal) error:[^\n]{0,300}$")


def read_phpunit(t: Text) -> Finding | None:
    ok = t.last(PHPUNIT_OK)
    ok_but = t.last(PHPUNIT_OK_BUT)
    bad = t.last(PHPUNIT_BAD)
    counts = t.last(PHPUNIT_COUNTS)
    none = t.last(PHPUNIT_NONE)
    cands = [m for m in (ok, ok_but, bad, none) if m is not None]
    if not cands:
        return None
    last = max(cands, key=lambda m: m.start())
    evidence = [cut(last.group(0))] + ([cut(counts.group(0))] if counts is not None and counts.start() > last.start() else [])
    if last is bad:
        return Finding("phpunit", FAIL, last.start(), evidence, names(t.find(PHPUNIT_FAILED)))
    if last is none:
        return Finding("phpunit", ZERO, last.start(), evidence)
    if last is ok and int(ok.group(1)) == 0:
        return Finding("phpunit", ZERO, last.start(), evidence)
    return Finding("phpunit", PASS, last.start(), evidence)


def markers_phpunit(t: Text) -> Finding | None:
    m = t.last(PHP_FATAL)
    return Finding("phpunit", FAIL, m.start(), [cut(m.group(0))]) if m else None


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"phpunit": read_phpunit}
MARKERS = {"phpunit": markers_phpunit}
