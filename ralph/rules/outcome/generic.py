"""The generic reader: test output from runners with no dedicated reader
(ralph.rules.outcome.runners). Pure, no I/O. Reached through the verdict's
reader table under the name "generic", like a runner family, and read only
when the runners' own summaries found nothing. Three parts:

1. A summary grammar: the common phrasings of a closing count line
   (`N passed, N failed`, `N tests, N failures`, `N of M tests failed`,
   `N scenarios (N failed)`, `FAILED (failures=N)`, `Failed: N` blocks,
   `N specs, N failures`, `N successes / N failures`, ...) and xUnit-style
   `[  FAILED  ]` / `[  PASSED  ]` lines. Read only in the last lines of the
   output (a closing summary is printed last), and only for commands with
   test evidence (ralph.rules.outcome.command_shape): a summary-looking line
   from a program with no test evidence is never a failing test run
   (precision first).
2. Failure markers still visible when the output was cut (`| head`, `| grep`).
3. Hung runs: which test was running when a run timed out or was killed.

Patterns carry their flags inline and are compiled on first use (the `re`
module's cache holds them).
"""
from __future__ import annotations

import re

from ralph.rules.outcome.reading import FAIL, Finding, Text

GENERIC = "generic"  # the runner name of what this reader finds
GENERIC_NOTE = "read with the generic summary grammar (no dedicated reader for this runner)"
MARKERS_NOTE = "failure markers read by the generic layer"


def read_summary(t: Text) -> Finding | None:
    """The closing summary in the generic grammar, noted as such."""
    summary = read_generic(t.text)
    if summary is not None:
        summary.evidence.append(GENERIC_NOTE)
    return summary


def read_markers(t: Text) -> Finding | None:
    """Generic failure markers, when no summary is visible."""
    found = failure_markers(t.text)
    if found is None:
        return None
    return Finding(GENERIC, FAIL, 0, found[0] + [MARKERS_NOTE], found[1])


# the reader interface every runner module has (ralph.rules.outcome.verdict.RUNNER_MODULES)
READERS = {GENERIC: read_summary}
MARKERS = {GENERIC: read_markers}


# ---------------------------------------------------------------------------
# The summary grammar

SUMMARY_WINDOW_LINES = 40  # a closing summary sits in the output's last lines
SUMMARY_WINDOW_CHARS = 24_000
MAX_LINE_CHARS = 400

PASS_WORDS = frozenset(("passed", "passing", "pass", "passes", "succeeded", "successes", "success", "successful", "ok", "good"))
FAIL_WORDS = frozenset(("failed", "failing", "fail", "fails", "failures", "failure", "errors", "error", "errored", "broken", "crashed"))
NOUNS = frozenset(("tests", "test", "specs", "spec", "examples", "example", "scenarios", "scenario", "steps", "step",
                   "features", "feature", "cases", "case", "checks", "check", "assertions", "assertion", "suites", "suite", "runs"))
NEUTRAL_WORDS = frozenset(("skipped", "skip", "pending", "ignored", "todo", "undefined", "xfailed", "expected", "total",
                           "deselected", "warnings", "warning", "timeout", "timeouts", "unexpected"))
_PAIR = r"(?<![\w.])(\d{1,9})[ \t]{1,3}((?:tests? |specs? |scenarios? |steps? |examples? |test cases? )?[a-zA-Z]{2,12})\b"
_KEYED = r"(?<![\w-])([A-Za-z][A-Za-z ]{1,18}?)\s{0,2}[:=]\s{0,20}(\d{1,9})\b"
_OF = r"(?i)(?<!\w)(\d{1,9}) (?:out )?of (\d{1,9}) (?:tests?|specs?|examples?|test cases?|checks?) (failed|passed|succeeded|failing)"
_VERB_FIRST = r"(?<![\w-])(failed|passed) (?:all )?(\d{1,9}) (?:test cases?|tests?|specs?|examples?|scenarios?)\b"
_ALL = r"(?m)^\W{0,6}(?:All|ALL) (\d{1,9}) (?:tests?|specs?|examples?|checks?|test cases?) (?:passed|succeeded|OK)|^All tests passed \((\d{1,9}) assertions?"
_UNITTEST_STYLE = r"(?m)^(FAILED|OK)(?: \(([a-z_]{2,12}=\d{1,9}(?:, ?[a-z_]{2,12}=\d{1,9}){0,6})\))?[ \t]*$"
_OK_COUNT = r"(?m)^OK \((\d{1,9})(?: tests?)?\)[ \t]*$"  # CppUnit-style `OK (2)`
_XUNIT = r"(?m)^\[ {0,2}(FAILED|PASSED|SKIPPED|     OK) {0,2}\] ?([^\n]{0,300})$"
_CATCH = r"(?m)^test cases:\s{1,4}(\d{1,9})(?: \|\s{1,4}(\d{1,9}) passed)?(?: \|\s{1,4}(\d{1,9}) failed)?"
KEY_PASS = frozenset(("passed", "pass", "ok", "passes", "succeeded", "success", "successes", "expected fail", "passing"))
KEY_FAIL = frozenset(("failed", "fail", "failures", "errors", "error", "failing", "unexpected pass", "broken", "failure", "crashing", "crashed"))
KEY_NOUN = frozenset(("tests", "total", "tests run", "examples", "specs", "scenarios", "test cases", "total tests", "run", "ran", "tested"))
# a table row read key by key: `Total 3 Passed 2 Skipped 1 Failed 0`, `Run: 2  Failures: 1  Errors: 0`
# (the number follows its word: "1 Failed" in the middle of such a row belongs to "Skipped")
_KEY_FIRST_ROW = (r"^[^\w\n]{0,10}(?:[\w.\-/]{1,80}:[ \t]+)?[A-Za-z][A-Za-z ]{0,20}?[ \t]*[:=|]?[ \t]+\d{1,9}"
                  r"(?:[ \t]*[,;|]?[ \t]+[A-Za-z][A-Za-z ]{0,20}?[ \t]*[:=|]?[ \t]+\d{1,9}){1,8}[ \t|.]*$")
_KEY_FIRST_PAIR = r"([A-Za-z][A-Za-z ]{0,20}?)[ \t]*[:=|]?[ \t]+(\d{1,9})"


def _tail_lines(text: str, count: int) -> list[tuple[int, str]]:
    """The last `count` non-empty lines with their start offsets, oldest first."""
    out: list[tuple[int, str]] = []
    end = len(text)
    floor = max(0, end - SUMMARY_WINDOW_CHARS)  # blank or huge lines cannot make this walk long
    while end > floor and len(out) < count:
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        if line.strip():
            out.append((start, line[:MAX_LINE_CHARS]))
        end = start - 1
    return list(reversed(out))


def _line_counts(line: str) -> tuple[int, int, int, bool]:
    """(passed, failed, nouns, is_summary) from one line's `N word` and `Word: N` pairs."""
    counts = {"pass": 0, "fail": 0, "noun": 0}
    seen: set[str] = set()

    def add(kind: str, n: int) -> None:
        counts[kind] += n
        seen.add(kind)

    if re.match(_KEY_FIRST_ROW, line):
        for m in re.finditer(_KEY_FIRST_PAIR, line):
            kind = key_kind(m.group(1))
            if kind:
                add(kind, int(m.group(2)))
        return counts["pass"], counts["fail"], counts["noun"], is_summary(seen)
    low = line.lower()
    for m in re.finditer(_PAIR, low):
        n, words = int(m.group(1)), m.group(2).split()
        if len(words) > 1:
            seen.add("noun")  # "1 test failed", "2 scenarios passed"
        word = words[-1]
        kind = "fail" if word in FAIL_WORDS else "pass" if word in PASS_WORDS else "noun" if word in NOUNS else ""
        if not kind and len(words) > 1:
            kind = "noun"  # "Ran 2 tests with 0 failures": the count is of tests
        if kind:
            add(kind, n)
    for m in re.finditer(_VERB_FIRST, low):  # "Failed 1 test case", "Passed all 2 test cases"
        seen.add("noun")
        add("fail" if m.group(1) == "failed" else "pass", int(m.group(2)))
    m = re.search(_OF, line)  # "1 of 3 tests failed": the counts, not added to
    if m is not None:
        counts["fail" if m.group(3).lower() in ("failed", "failing") else "pass"] = int(m.group(1))
        counts["noun"] = int(m.group(2))
        seen.update(("noun", "fail" if m.group(3).lower() in ("failed", "failing") else "pass"))
    for m in re.finditer(_KEYED, line):
        kind = key_kind(m.group(1))
        if kind:
            add(kind, int(m.group(2)))
    return counts["pass"], counts["fail"], counts["noun"], is_summary(seen)


def read_generic(text: str) -> Finding | None:
    """The closing summary in the generic grammar, from the output's last lines."""
    lines = _tail_lines(text, SUMMARY_WINDOW_LINES)
    if not lines:
        return None
    window_start = lines[0][0]
    window = text[window_start:]
    failing = _xunit_failing(text)
    # xUnit (googletest) and Catch2 closing blocks
    xunit = [m for m in re.finditer(_XUNIT, window) if m.group(1) in ("FAILED", "PASSED")]
    catch = list(re.finditer(_CATCH, window))
    if catch:
        m = catch[-1]
        total, _passed, bad = int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0)
        status = "fail" if bad else ("pass" if total else "zero")
        return Finding(GENERIC, status, window_start + m.start(), [m.group(0).strip()], failing)
    if xunit:
        bad = [m for m in xunit if m.group(1) == "FAILED"]
        good = [m for m in xunit if m.group(1) == "PASSED"]
        if bad:
            return Finding(GENERIC, "fail", window_start + bad[0].start(), [m.group(0).strip()[:240] for m in bad[:3]], failing)
        count = re.match(r"(\d{1,9})", good[-1].group(2).strip())
        status = "pass" if count is None or int(count.group(1)) else "zero"
        return Finding(GENERIC, status, window_start + good[-1].start(), [good[-1].group(0).strip()], [])
    # unittest-style `FAILED (failures=1)` / `OK` closing lines (shunit2, green, nose2)
    closing = list(re.finditer(_UNITTEST_STYLE, window))
    if closing:
        m = closing[-1]
        detail = m.group(2) or ""
        counts = {k: int(v) for k, v in (p.split("=") for p in detail.replace(" ", "").split(",") if "=" in p)}
        ran = re.search(r"^Ran (\d{1,9}) tests?", window, re.M)
        if m.group(1) == "FAILED" and (counts.get("failures", 0) or counts.get("errors", 0) or counts.get("failed", 0)):
            return Finding(GENERIC, "fail", window_start + m.start(), [m.group(0).strip()], failing)
        if m.group(1) == "OK" and (ran is not None or counts):
            n = int(ran.group(1)) if ran else sum(v for k, v in counts.items() if k in ("passes", "tests", "passed"))
            return Finding(GENERIC, "pass" if n else "zero", window_start + m.start(), ([ran.group(0)] if ran else []) + [m.group(0).strip()], [])
    ok_count = list(re.finditer(_OK_COUNT, window))
    if ok_count and not re.search(r"(?m)^!!!FAILURES!!!|^FAILURES!", window):
        m = ok_count[-1]
        return Finding(GENERIC, "pass" if int(m.group(1)) else "zero", window_start + m.start(), [m.group(0).strip()], [])
    every = list(re.finditer(_ALL, window))
    m_all = every[-1] if every else None
    # count lines: the closing block is every summary-shaped line in the window
    found: list[tuple[int, str, int, int, int]] = []
    for start, line in lines:
        passed, failed, nouns, summary = _line_counts(line)
        if summary:
            found.append((start, line.strip(), passed, failed, nouns))
    # keyed blocks spread over lines (meson `Ok: 2` / `Fail: 1`, uvu `Total: / Passed:`)
    if not found:
        keyed = _keyed_block(lines)
        if keyed is not None:
            found.append(keyed)
    if not found and m_all is None:
        return None
    if found:
        bad = [f for f in found if f[3] > 0]
        if bad:
            f = bad[-1]
            return Finding(GENERIC, "fail", f[0], [x[1][:240] for x in (bad[-3:])], failing)
        if m_all is not None or any(f[2] > 0 or f[4] > 0 for f in found):
            f = found[-1]
            return Finding(GENERIC, "pass", f[0] if m_all is None else window_start + m_all.start(),
                                  [x[1][:240] for x in found[-3:]] if m_all is None else [m_all.group(0).strip()], [])
        return Finding(GENERIC, "zero", found[-1][0], [found[-1][1][:240]], [])
    return Finding(GENERIC, "pass" if int(m_all.group(1) or m_all.group(2) or 0) else "zero", window_start + m_all.start(), [m_all.group(0).strip()], [])


def _keyed_block(lines: list[tuple[int, str]]) -> tuple[int, str, int, int, int] | None:
    """`Key: N` lines close together (within 8 lines) that together make a summary."""
    best = None
    for i in range(len(lines)):
        passed = failed = nouns = 0
        seen = set()
        shown = []
        neutral = 0
        for start, line in lines[i:i + 8]:
            # `Ok: 2`, `# FAIL:  1` (automake), `│  1  Failures  (50.0%)  │` (boxed)
            m = re.match(r"^[\s#│|*>]{0,8}([A-Za-z][A-Za-z ]{1,18}?)\s{0,2}:\s{0,30}(\d{1,9})\s*$", line)
            if m is None:
                b = re.match(r"^[\s#│|*>]{0,8}(\d{1,9})\s{1,4}([A-Za-z][A-Za-z ]{1,24}?)\s*(?:\([\d.]{1,6}%\))?\s*[│|]?\s*$", line)
                if b is None:
                    continue
                n, key = int(b.group(1)), b.group(2).strip().lower()
                key = {"tests encountered": "total", "passes": "passed", "failures": "failed"}.get(key, key)
            else:
                key, n = m.group(1).strip().lower(), int(m.group(2))
            if key in NEUTRAL_WORDS and key not in KEY_NOUN:
                neutral += n
                shown.append(line.strip())
                continue
            if key in KEY_FAIL:
                failed += n
                seen.add("fail")
            elif key in KEY_PASS:
                passed += n
                seen.add("pass")
            elif key in KEY_NOUN:
                nouns += n
                seen.add("noun")
            else:
                continue
            shown.append(line.strip())
        if ("fail" in seen and ("pass" in seen or "noun" in seen)) or ("pass" in seen and "noun" in seen):
            if "fail" not in seen and nouns > passed + neutral:
                # `Total: 2 / Passed: 1 / Skipped: 0` (uvu prints no failure count): the rest failed
                failed = nouns - passed - neutral
                shown.append(f"({failed} of {nouns} neither passed nor skipped)")
            best = (lines[i][0], " / ".join(shown), passed, failed, nouns)
            break
    return best


# failing-test name lines in common shapes (ExUnit, jasmine/cucumber-js numbered
# failures, behave's "Failing scenarios:", busted's "Failure -> file @ line",
# EUnit's "mod: name...*failed*")
_FAILING_NAME = (
    r"(?m)^(?:\s{2}\d{1,4}\) test (?P<exunit>[^\n]{1,200}? \([\w.]{1,200}\))$"
    r"|\d{1,4}\) Scenario: (?P<cucumber>[^\n#]{1,200}?)\s+# \S{1,200}$"
    r"|\s{2}(?P<behave>\S{1,200}\.feature:\d{1,6}\s+[^\n]{1,200})$"
    r"|(?:Failure|Error) (?:->|\u2192) \S{1,200} @ \d{1,6}\n(?P<busted>[^\n]{1,200})$"
    r"|(?P<eunit>\w{1,100}: \w{1,100})\.\.\.\*failed\*$)"
)
_FAILURES_HEADER = r"(?m)^Failures:\n(?:[^\n]{0,300}\n){0,3}?\d{1,4}\) (?P<jasmine>[^\n]{1,200})$"


def _xunit_failing(text: str) -> list[str]:
    names: list[str] = []
    tail = text[-60_000:]
    for m in re.finditer(_FAILING_NAME, tail):
        name = next((g for g in m.groups() if g), "").strip()
        if name and name not in names:
            names.append(name[:240])
    for m in re.finditer(_FAILURES_HEADER, tail):
        name = m.group("jasmine").strip()
        if name and not name.startswith("Scenario:") and name not in names:
            names.append(name[:240])
    names = names[:20]
    for m in re.finditer(_XUNIT, text[-60_000:]):
        if m.group(1) != "FAILED":
            continue
        name = m.group(2).strip()
        name = re.sub(r" \(\d+ ms\)$", "", name)
        if not name or name[0].isdigit() or "listed below" in name:
            continue
        if name not in names:
            names.append(name[:240])
        if len(names) >= 20:
            break
    return names


# ---------------------------------------------------------------------------
# Failure markers still visible when the output was cut (`| head`, `| grep`)

_MARKERS = (
    r"(?m)^(?:\[  FAILED  \] (?P<xunit>[A-Za-z_][\w:/.<>-]{0,200}(?: \(\d+ ms\))?)$"
    r"|--- FAIL: (?P<go>\S{1,200})"
    r"|\(fail\) (?P<bun>[^\n]{1,200})"
    r"|not ok \d{1,9} (?:- )?(?P<tap>[^\n#]{1,200})$"
    r"|(?:=|_){3,} FAILURES (?:=|_){3,}$"
    r"|FAIL: (?P<unit>\S{1,200}) \("
    r"|\S{1,200}:\d{1,6}: Failure$"
    r"|\s{0,6}[\u2716\u2718\u2717] (?P<cross>[^\n]{1,200})$)"
)


def failure_markers(text: str) -> tuple[list[str], list[str]] | None:
    """(evidence, failing names) from runner failure markers, or None."""
    hits = []
    names: list[str] = []
    for m in re.finditer(_MARKERS, text):
        if "# SKIP" in m.group(0) or "# TODO" in m.group(0):
            continue
        hits.append(m.group(0).strip()[:240])
        name = next((g for g in m.groups() if g), None)
        if name:
            name = re.sub(r" \(\d+ ms\)$", "", name.strip())
            if name not in names:
                names.append(name[:240])
        if len(hits) >= 40:
            break
    return (hits[:3], names[:20]) if hits else None


# ---------------------------------------------------------------------------
# Hung runs: what was running when the run was stopped

_RUNNING = (
    r"(?m)^(?:=== RUN   (?P<go>\S{1,200})"
    r"|\[ RUN      \] (?P<gtest>\S{1,200})"
    r"|(?P<pytest>\S{1,200}\.py::\S{1,200}) ?(?:PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)?"
    r"|test (?P<cargo>\S{1,200}) has been running for over"
    r"|(?P<unit>test\w{0,100} \([\w.]{1,200}\)) \.\.\.(?: ok| FAIL| ERROR| skipped)?"
    r"|\s{2}\* test (?P<exunit>[^\n]{1,200}?)(?: \([\d.]+m?s\))? \[L#\d{1,7}\])"
)
DONE_WORDS = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL", "XPASS", "... ok", "... FAIL", "... ERROR", "... skipped")


def running_test(text: str) -> str | None:
    """The test that had started but not finished when the output ends."""
    last = None
    for m in re.finditer(_RUNNING, text[-60_000:]):
        last = m
    if last is None:
        return None
    line = last.group(0)
    if any(line.rstrip().endswith(w) for w in DONE_WORDS):
        return None
    name = next((g for g in last.groups() if g), None)
    if name and last.group("go"):
        # go prints `--- PASS: name` / `--- FAIL: name` when it finished
        tail = text[-60_000:][last.end():]
        if f": {name} (" in tail:
            return None
    if last.group("exunit") and re.search(r" \([\d.]+m?s\) \[L#", line):
        return None  # `* test name (0.02ms) [L#5]`: it finished
    if name and last.group("gtest"):
        tail = text[-60_000:][last.end():]
        if f"] {name} (" in tail:
            return None
    return name


def key_kind(key: str) -> str:
    """What a `key: N` pair counts: fail, pass, noun (tests), or "" (something else)."""
    key = key.strip().lower()
    return "fail" if key in KEY_FAIL else "pass" if key in KEY_PASS else "noun" if key in KEY_NOUN else ""


def is_summary(seen: set[str]) -> bool:
    """A count line needs a failure count next to a pass count or a test noun,
    or a pass count next to a test noun: one bare "N failed" is not enough."""
    return ("fail" in seen and ("pass" in seen or "noun" in seen)) or ("pass" in seen and "noun" in seen)
