"""TAP producers: `node --test` (TAP or spec), tape, tap (node-tap), prove and
bats. Their closing counts are `# tests N / # pass N / # fail N` comments, a
plan `1..N` and `ok` / `not ok` lines; tap, prove and bats also print
summaries of their own."""
from __future__ import annotations

import re

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, MAX_EVIDENCE, Finding, Text, cut, names

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
TAP_COUNTS = ("# ", r"^(?:#|\u2139)[ \t]+(tests|pass|fail|cancelled|skipped|skip|todo|suites|ok)\b[ \t]*(\d*)[ \t]*$")
TAP_LINE = ("ok", r"^(not )?ok\b[ \t]*(\d*)[ \t]*(?:- )?([^\n]{0,300})$")
TAP_PLAN = ("1..", r"^1\.\.(\d+)(?:[ \t]*#[^\n]{0,200})?[ \t]*$")
TAP_BAIL = ("Bail out!", r"^Bail out!")
NODE_SPEC_FAIL = ("\u2716 ", r"^[ \t]*\u2716 ([^\n]{1,300}?)(?: \([\d.]+m?s\))?[ \t]*$")
BATS_PRETTY = (" tests, ", r"^(\d+) tests?, (\d+) failures?(?:, (\d+) skipped)?")
TAP18_ASSERTS = ("Asserts:", r"^Asserts:[ \t]+(\d+) pass[ \t]+(\d+) fail")
TAP18_TOTAL = ("total:", r"^# \{ total: (\d+)(?:, pass: (\d+))?(?:, fail: (\d+))?")
TAP18_FILE = ("FAIL ", r"^[ \t]*FAIL[ \t]+(\S{1,300})[ \t]+\d+ failed")
PROVE_RESULT = ("Result: ", r"^Result: (PASS|FAIL|NOTESTS)[ \t]*$")
PROVE_FILES = ("Files=", r"^Files=(\d+), Tests=(\d+)")
PROVE_ALL_OK = ("All tests successful", r"^All tests successful\.")
PROVE_FAILED_FILE = ("Wstat", r"^(\S{1,300}?)[ \t]+\(Wstat: \d+")


def _tap_counts(t: Text) -> tuple[dict[str, int], list[re.Match]]:
    """The LAST block of '# tests N / # pass N / # fail N' comment lines."""
    found = t.find(TAP_COUNTS)
    block: list[re.Match] = []
    for m in reversed(found):
        if block and m.end() + 1 < block[0].start() - 0 and t.text.count("\n", m.end(), block[0].start()) > 2:
            break
        block.insert(0, m)
    counts: dict[str, int] = {}
    for m in block:
        key = m.group(1)
        if m.group(2):
            counts[key] = int(m.group(2))
        elif key == "ok":
            counts["ok"] = 1
    return counts, block


def read_tap(t: Text, runner: str = "tap") -> Finding | None:
    """TAP producers: tape, node --test (TAP or spec), bats, tap, prove -v."""
    counts, block = _tap_counts(t)
    lines = t.find(TAP_LINE)
    top = [m for m in lines if _directive(m.group(3)) is None]
    not_ok = [m for m in top if m.group(1)]
    plans = t.find(TAP_PLAN)
    bail = t.last(TAP_BAIL)
    failing = names(not_ok, 3) + names(t.find(NODE_SPEC_FAIL))
    if block and ("tests" in counts or "pass" in counts or "fail" in counts):
        anchor = block[-1].start()
        evidence = [cut(m.group(0)) for m in block if m.group(1) in ("tests", "pass", "fail", "ok", "cancelled")]
        who = "node" if ("suites" in counts or "cancelled" in counts or "\u2139" in block[0].group(0)) else runner
        if counts.get("fail", 0) or counts.get("cancelled", 0) or bail is not None:
            return Finding(who, FAIL, anchor, evidence, failing)
        if counts.get("pass", 0) or (counts.get("ok") and "pass" not in counts):
            return Finding(who, PASS, anchor, evidence)
        if counts.get("tests", -1) == 0 or counts.get("pass", -1) == 0:
            return Finding(who, ZERO, anchor, evidence)
        if "fail" in counts:
            # the pass count was cut off (`| tail`); the runner's own count says no failure
            return Finding(who, PASS, anchor, evidence)
    if bail is not None:
        return Finding(runner, FAIL, bail.start(), [cut(bail.group(0))], failing)
    if not lines and not plans:
        return None
    plan = plans[-1] if plans else None
    anchor = max([m.start() for m in lines[-1:]] + [plan.start() if plan else 0])
    if not_ok:
        return Finding(runner, FAIL, anchor, [cut(m.group(0)) for m in not_ok[:MAX_EVIDENCE]], failing)
    if plan is not None:
        planned = int(plan.group(1))
        if planned == 0:
            return Finding(runner, ZERO, plan.start(), [cut(plan.group(0))])
        # results accounted for: `ok` lines, and `not ok` lines with a SKIP/TODO directive (cmocka marks skips so)
        ok_count = len([m for m in lines if (not m.group(1) and m.group(0)[:1] == "o") or (m.group(1) and _directive(m.group(3)))])
        really_ok = [m for m in lines if not m.group(1) and _directive(m.group(3)) is None]
        if ok_count >= planned and not really_ok:
            return Finding(runner, ZERO, plan.start(), [cut(plan.group(0)), "every test skipped"])
        if ok_count >= planned:
            return Finding(runner, PASS, anchor, [cut(plan.group(0)), f"{ok_count} ok"])
        # fewer results than planned: the run died or the output was cut
        return None
    return None


def _directive(description: str) -> str | None:
    """TAP '# TODO' / '# SKIP' directive of an ok/not ok line, if any."""
    k = description.rfind("#")
    if k < 0:
        return None
    word = description[k + 1:].strip()[:4].upper()
    return word if word in ("TODO", "SKIP") else None


def markers_tap(t: Text) -> Finding | None:
    """`not ok` lines (no TODO/SKIP directive): named for the format, whichever runner printed them."""
    not_ok = [m for m in t.find(TAP_LINE) if m.group(1) and _directive(m.group(3)) is None]
    if not_ok:
        return Finding("tap", FAIL, not_ok[0].start(), [cut(not_ok[0].group(0))], names(not_ok, 3))
    return None


def read_node(t: Text) -> Finding | None:
    return read_tap(t, "node")


def read_tape(t: Text) -> Finding | None:
    return read_tap(t, "tape")


def read_bats(t: Text) -> Finding | None:
    pretty = t.last(BATS_PRETTY)
    if pretty is not None:
        failures = int(pretty.group(2))
        if failures:
            return Finding("bats", FAIL, pretty.start(), [cut(pretty.group(0))], names(t.find(NODE_SPEC_FAIL)) or names([m for m in t.find(TAP_LINE) if m.group(1)], 3))
        return Finding("bats", PASS if int(pretty.group(1)) else ZERO, pretty.start(), [cut(pretty.group(0))])
    return read_tap(t, "bats")


def read_tap18(t: Text) -> Finding | None:
    asserts = t.last(TAP18_ASSERTS)
    total = t.last(TAP18_TOTAL)
    if asserts is None and total is None:
        return read_tap(t, "tap")
    failing = names(t.find(TAP18_FILE))
    if asserts is not None:
        fails = int(asserts.group(2))
        evidence = [cut(asserts.group(0))] + ([cut(total.group(0))] if total else [])
        if fails:
            return Finding("tap", FAIL, asserts.start(), evidence, failing)
        return Finding("tap", PASS if int(asserts.group(1)) else ZERO, asserts.start(), evidence)
    fails = int(total.group(3) or 0)
    if fails:
        return Finding("tap", FAIL, total.start(), [cut(total.group(0))], failing)
    return Finding("tap", PASS if int(total.group(1)) else ZERO, total.start(), [cut(total.group(0))])


def read_prove(t: Text) -> Finding | None:
    result = t.last(PROVE_RESULT)
    files = t.last(PROVE_FILES)
    ok = t.last(PROVE_ALL_OK)
    failing = names(t.find(PROVE_FAILED_FILE))
    if result is not None:
        status = {"PASS": PASS, "FAIL": FAIL, "NOTESTS": ZERO}[result.group(1)]
        evidence = [cut(m.group(0)) for m in (files, result) if m is not None]
        return Finding("prove", status, result.start(), evidence, failing if status == FAIL else [])
    if ok is not None:
        return Finding("prove", PASS, ok.start(), [cut(ok.group(0))])
    return read_tap(t, "prove")


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"tap": read_tap18, "tape": read_tape, "node": read_node, "prove": read_prove, "bats": read_bats}
MARKERS = {"node": markers_tap, "tape": markers_tap, "prove": markers_tap, "bats": markers_tap}
