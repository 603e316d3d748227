"""What the readers of test output share: the examined text, a finding, and the
helpers that cut evidence lines. Pure: no I/O.

Bounded work: only the last TAIL_CHARS and first HEAD_CHARS of the output are
examined with regexes (plus a few literal `str.find` scans over everything),
and every pattern is anchored to a line start with bounded repeats, so 10 MB of
output, or one 10 MB line, costs about the same as 100 KB.

A pattern is `(literal, regex)`: the regex (multi-line) runs only when the
literal is in the text, and is compiled on first use (the `re` module's own
cache holds it), so a hook call that reads no output compiles none.
"""
from __future__ import annotations

import re

TAIL_CHARS = 96_000  # runners print their summaries last; this holds any summary block
HEAD_CHARS = 16_000  # `| head` leaves only the start: progress lines, early failures
MAX_EVIDENCE = 4
MAX_FAILING = 20
MAX_LINE = 240  # evidence lines are cut to this many characters

FAIL, PASS, NOT_TEST, UNKNOWN = "fail", "pass", "not_test", "unknown"
ZERO = "zero"  # a finding's status when the runner ran and found no tests
MARKER = "marker"  # a finding's status when only failure markers were seen, no closing summary

ANSI = r"\x1b(?:\[[0-?]{0,30}[ -/]{0,5}[@-~]|\][^\x07\x1b]{0,500}(?:\x07|\x1b\\)|[()][0-9A-Za-z])"


class Finding:
    """One reader's reading of the output: its status, where, and what it says."""

    __slots__ = ("runner", "status", "pos", "evidence", "failing")

    def __init__(self, runner: str, status: str, pos: int, evidence: list[str], failing: list[str] | None = None) -> None:
        self.runner = runner
        self.status = status  # FAIL | PASS | ZERO | MARKER
        self.pos = pos
        self.evidence = evidence
        self.failing = failing or []


class Text:
    """The examined part of the output: the tail (and head, if cut), ANSI-free."""

    __slots__ = ("text", "full", "_cache")

    def __init__(self, output: str) -> None:
        self.full = output
        if len(output) > TAIL_CHARS + HEAD_CHARS:
            head = output[:HEAD_CHARS]
            tail = output[-TAIL_CHARS:]
            nl = tail.find("\n")
            tail = tail[nl + 1:] if 0 <= nl < 4000 else tail
            text = head + "\n" + tail
        else:
            text = output
        if "\x1b" in text:
            text = re.sub(ANSI, "", text)
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        self.text = text
        self._cache: dict[tuple[str, str], list[re.Match]] = {}

    def find(self, pattern: tuple[str, str]) -> list[re.Match]:
        """Every match of a `(literal, regex)` pattern, in order."""
        got = self._cache.get(pattern)
        if got is None:
            literal, regex = pattern
            got = list(re.finditer(regex, self.text, re.M)) if literal in self.text else []
            self._cache[pattern] = got
        return got

    def last(self, pattern: tuple[str, str]) -> re.Match | None:
        found = self.find(pattern)
        return found[-1] if found else None


def cut(line: str) -> str:
    """An evidence line: stripped, at most MAX_LINE characters."""
    line = line.strip()
    return line if len(line) <= MAX_LINE else line[:MAX_LINE - 1] + "\u2026"


def counts(body: str) -> dict[str, int]:
    """'1 failed, 2 passed, 3 total' / '1 failed | 2 passed (3)' -> {'failed': 1, ...}"""
    found: dict[str, int] = {}
    for part in re.split(r"[,|]", body):
        words = part.split()
        if len(words) >= 2 and words[0].isdigit():
            key = words[1].lower().rstrip(".:")
            found[key] = found.get(key, 0) + int(words[0])
    return found


def names(matches: list[re.Match], group: int = 1) -> list[str]:
    """The distinct names in one group of the matches (failing tests), at most MAX_FAILING."""
    seen: list[str] = []
    for m in matches:
        name = cut(m.group(group))
        if name and name not in seen:
            seen.append(name)
        if len(seen) >= MAX_FAILING:
            break
    return seen
