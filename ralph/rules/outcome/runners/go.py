"""`go test` (and gotestsum): package status lines, `go test -json` events,
`--- FAIL:` markers, build failures and panics."""
from __future__ import annotations

import re

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, MAX_EVIDENCE, MAX_FAILING, Finding, Text, cut, names

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
GO_JSON = ('"Action"', r'^\{"Time":"[^"\n]{0,60}","Action":"(pass|fail|skip)","Package":"([^"\n]{0,300})"(?:,"Test":"([^"\n]{0,300})")?')
GO_PKG = ("\t", r"^(ok  |FAIL|\?   )\t(\S{1,300})\t([^\n]{0,120})$")
GO_TEST_FAIL = ("--- FAIL", r"^[ \t]*--- FAIL: (\S{1,300})")
GO_BARE = ("FAIL", r"^(PASS|FAIL)[ \t]*$")
GO_BUILD_ERROR = ("setup failed", r"^(?:# \S{1,300}|FAIL\t\S{1,300} \[(?:build|setup) failed\])$")
GO_PANIC = ("panic: ", r"^panic: [^\n]{0,300}$")


def read_go(t: Text) -> Finding | None:
    js = t.find(GO_JSON)
    if js:
        return _read_go_json(t, js)
    pkgs = t.find(GO_PKG)
    pkgs = [m for m in pkgs if m.group(1) != "?   " or "[no test files]" in m.group(3)]
    pkgs = [m for m in pkgs if m.group(1) == "?   " or _looks_like_go_timing(m.group(3))]
    # a package's last status line is its result (a test may print one earlier)
    last_by_pkg: dict[str, re.Match] = {}
    for m in pkgs:
        last_by_pkg[m.group(2)] = m
    pkgs = sorted(last_by_pkg.values(), key=lambda m: m.start())
    failed_tests = names(t.find(GO_TEST_FAIL))
    bare = t.last(GO_BARE)
    full_fail = _go_fail_anywhere(t)
    if pkgs:
        bad = [m for m in pkgs if m.group(1) == "FAIL"]
        good = [m for m in pkgs if m.group(1) == "ok  "]
        anchor = pkgs[-1].start()
        if bad or full_fail:
            evidence = [cut(m.group(0)) for m in bad[:MAX_EVIDENCE]] or [full_fail]
            return Finding("go", FAIL, anchor, evidence, failed_tests)
        if any("[no tests to run]" not in m.group(3) for m in good):
            return Finding("go", PASS, anchor, [cut(m.group(0)) for m in good[-MAX_EVIDENCE:]])
        return Finding("go", ZERO, anchor, [cut(m.group(0)) for m in pkgs[-MAX_EVIDENCE:]])
    if bare is not None:
        status = FAIL if bare.group(1) == "FAIL" else PASS
        return Finding("go", status, bare.start(), [cut(bare.group(0))], failed_tests if status == FAIL else [])
    if full_fail:
        return Finding("go", FAIL, len(t.text), [full_fail], failed_tests)
    return None


def _looks_like_go_timing(rest: str) -> bool:
    rest = rest.strip()
    return rest.startswith("(cached)") or rest.startswith("[") or (rest[:1].isdigit() and "s" in rest[:12])


def _go_fail_anywhere(t: Text) -> str:
    """A package's 'FAIL<TAB>pkg<TAB>time' line anywhere in the full output, not
    followed later by an 'ok' line for the same package (literal scans, linear):
    with `go test ./...` a failing package may scroll far above the tail."""
    full = t.full
    k = full.find("\nFAIL\t")
    while k >= 0:
        end = full.find("\n", k + 1)
        line = full[k + 1:end if end > 0 else min(len(full), k + 400)]
        parts = line.split("\t")
        if len(parts) == 3 and parts[1] and len(parts[1]) < 300 and _looks_like_go_timing(parts[2]):
            if full.find(f"\nok  \t{parts[1]}\t", k) < 0:
                return cut(line)
        k = full.find("\nFAIL\t", k + 1)
    return ""


def _read_go_json(t: Text, js: list[re.Match]) -> Finding:
    pkg_status: dict[str, str] = {}
    failed: list[str] = []
    for m in js:
        action, pkg, test = m.group(1), m.group(2), m.group(3)
        if test:
            if action == "fail" and test not in failed:
                failed.append(test)
        else:
            pkg_status[pkg] = action
    bad = [p for p, a in pkg_status.items() if a == "fail"]
    anchor = js[-1].start()
    if bad or failed or '"Action":"fail"' in t.full:
        return Finding("go", FAIL, anchor, [f"FAIL {p}" for p in bad[:MAX_EVIDENCE]] or ['"Action":"fail"'], failed[:MAX_FAILING])
    if any(a == "pass" for a in pkg_status.values()):
        return Finding("go", PASS, anchor, [f"ok {p}" for p, a in pkg_status.items() if a == "pass"][:MAX_EVIDENCE])
    return Finding("go", ZERO, anchor, [f"{a} {p}" for p, a in pkg_status.items()][:MAX_EVIDENCE])


def markers_go(t: Text) -> Finding | None:
    hits = t.find(GO_TEST_FAIL) + t.find(GO_BUILD_ERROR) + t.find(GO_PANIC)
    if hits:
        hits.sort(key=lambda m: m.start())
        return Finding("go", FAIL, hits[0].start(), [cut(hits[0].group(0))], names(t.find(GO_TEST_FAIL)))
    return None


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"go": read_go}
MARKERS = {"go": markers_go}
