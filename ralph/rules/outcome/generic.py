"""The runner-agnostic layer under the per-runner readers of ralph.rules.outcome.verdict.

Pure, no I/O. Three parts:

1. Test-run evidence from the command, for stages the runner tables do not
   know: BDD and other-language runners named by their program, interpreters
   running test code (`python -m doctest`, `lua tests.lua`, `ruby -e` loading
   minitest), and listing/counting commands (`go test -list`, `ctest -N`,
   `bats --count`, `vitest list`, `cargo test -- --list`), which run no test.
2. A generic summary grammar: the common phrasings of a closing count line
   (`N passed, N failed`, `N tests, N failures`, `N of M tests failed`,
   `N scenarios (N failed)`, `FAILED (failures=N)`, `Failed: N` blocks,
   `N specs, N failures`, `N successes / N failures`, ...) and xUnit-style
   `[  FAILED  ]` / `[  PASSED  ]` lines. Read only in the last lines of the
   output (a closing summary is printed last) and only when the command has
   test evidence: a summary-looking line from a program with no test
   evidence is never a failing test run (precision first).
3. Hung runs: which test was running when a run timed out or was killed.
"""
from __future__ import annotations

import re


class _Lazy:
    """A regex compiled on first use: this module is imported on every Bash hook
    call, and most calls (non-test commands) need none of its patterns."""

    __slots__ = ("args", "pattern")

    def __init__(self, *args: object) -> None:
        self.args = args
        self.pattern: re.Pattern | None = None

    def _get(self) -> re.Pattern:
        if self.pattern is None:
            self.pattern = re.compile(*self.args)  # type: ignore[arg-type]
        return self.pattern

    def finditer(self, text: str):
        return self._get().finditer(text)

    def search(self, text: str):
        return self._get().search(text)

    def match(self, text: str):
        return self._get().match(text)


# program -> runner name, for runners the verdict has no dedicated reader for
GENERIC_RUNNERS = {
    "behave": "behave", "cucumber-js": "cucumber", "cucumber": "cucumber", "busted": "busted",
    "ava": "ava", "uvu": "uvu", "jasmine": "jasmine", "qunit": "qunit", "green": "green", "ward": "ward",
    "shunit2": "shunit2", "ct_run": "common_test", "testem": "testem", "lab": "lab", "kaocha": "kaocha",
    "rebar3": "rebar3", "zig": "zig", "meson": "meson", "ninja": "ninja", "dune": "dune", "stack": "stack",
    "cabal": "cabal", "sbt": "sbt", "lein": "lein", "crystal": "crystal", "nim": "nim", "dart": "dart",
    "flutter": "flutter", "julia": "julia", "Rscript": "R", "raco": "raco", "elm-test": "elm-test",
}
# programs above that run tests only with one of these subcommands
GENERIC_SUBCOMMANDS = {
    "rebar3": ("eunit", "ct"), "zig": ("test",), "meson": ("test",), "ninja": ("test", "check"),
    "dune": ("test", "runtest"), "stack": ("test",), "cabal": ("test",), "sbt": ("test",), "lein": ("test",),
    "crystal": ("spec",), "nim": ("test",), "dart": ("test",), "flutter": ("test",), "raco": ("test",),
}
# interpreters whose script argument may be test code
INTERPRETERS = frozenset(("python", "python3", "ruby", "node", "nodejs", "lua", "lua5.1", "lua5.3", "lua5.4", "luajit",
                          "perl", "elixir", "escript", "erl", "Rscript", "julia", "bash", "sh", "zsh", "dash", "ksh"))
# interpreter options that check or print the script instead of running it
CHECK_ONLY = frozenset(("--check", "--syntax-check", "--version", "--help", "-h"))
CHECK_ONLY_BY_PROGRAM = {"php": ("-l",), "ruby": ("-c", "-wc", "-cw"), "perl": ("-c", "-wc", "-cw"), "node": ("-c", "-p", "--print", "-v"),
                         "nodejs": ("-c", "-p", "--print", "-v"), "lua": ("-v",), "lua5.4": ("-v",), "elixir": ("-v",)}
CODE_FLAGS = {"ruby": "-e", "perl": "-e", "node": "-e", "nodejs": "-e", "elixir": "-e", "erl": "-eval", "escript": "-e",
              "python": "-c", "python3": "-c", "lua": "-e", "lua5.4": "-e", "lua5.3": "-e", "luajit": "-e"}
PYTHON_TEST_MODULES = {"doctest": "doctest", "green": "green", "ward": "ward", "behave": "behave", "testify": "unittest", "xmlrunner": "unittest"}
# options/subcommands after which a runner lists or counts tests but runs none
LISTING_OPTIONS = frozenset((
    "-list", "--list", "--list-tests", "--list-test-names-only", "--list-tags", "--list-reporters", "--gtest_list_tests",
    "-N", "--show-only", "--count", "--collect-only", "--co", "--listTests", "--list-files", "--dry-run", "-d",
    "--no-run", "--help", "-h", "--version", "-V", "-n", "--just-print", "--recon",
))
# a script named like a test that reports, shows or lints rather than runs (`show_test_report.sh`)
REPORT_WORDS = _Lazy(r"(?:^|[\W_])(?:reports?|summary|summari[sz]e|results?|logs?|show|print|coverage|lint|format|stats|history|dashboard|notify|upload)(?:$|[\W_])", re.I)
LISTING_SUBCOMMANDS = {"vitest": ("list",), "jest": ("list",), "meson": ("introspect",)}
# for these, a short option is only a listing option when the runner itself is named
SHORT_LISTING = {"-N": ("ctest",), "-d": ("behave",), "--count": ("bats",), "-n": ("make", "gmake", "ninja"), "--just-print": ("make", "gmake"),
                 "--recon": ("make", "gmake"), "-h": None, "-V": None}
_TESTISH_CODE = _Lazy(r"minitest|test/unit|\bTestCase\b|\bunittest\b|\beunit:test|\bExUnit\b|\bdoctest\b|\bpytest\.main\b|\bbusted\b|require[ (]['\"][^'\"]{0,120}_test['\"]", re.I)


# launchers that run the program named after them (npx jasmine, uv run behave, bundle exec ...)
LAUNCHERS = {"npx": (), "bunx": (), "pnpx": (), "uvx": (), "pipx": ("run",), "uv": ("run",), "poetry": ("run",), "pdm": ("run",),
             "hatch": ("run",), "pipenv": ("run",), "rye": ("run",), "bundle": ("exec",), "npm": ("exec",), "pnpm": ("exec", "dlx"),
             "yarn": ("exec", "dlx"), "bun": ("x",), "mise": ("exec", "x"), "direnv": ("exec",), "opam": ("exec",)}


def launched(words: list[str]) -> list[str]:
    """The command a launcher runs (`npx --yes jasmine` -> `jasmine`), else the words unchanged."""
    for _ in range(3):
        if not words:
            return words
        prog = words[0].rsplit("/", 1)[-1]
        subs = LAUNCHERS.get(prog)
        if subs is None:
            return words
        k = 1
        if subs:
            while k < len(words) and words[k].startswith("-"):
                k += 1
            if k >= len(words) or words[k] not in subs:
                return words
            k += 1
        while k < len(words) and words[k].startswith("-"):
            k += 2 if words[k] in ("-p", "--package", "--with", "-e", "--env", "-C", "--directory") else 1
            if words[k - 1] == "--":
                break
        if k >= len(words) or words[k] == words[0]:
            return words
        words = words[k:]
    return words


def stage_evidence(words: list[str], testish) -> tuple[str, str | None] | None:
    """(kind, runner) for a stage the runner tables call 'other', when its
    words show it runs tests; None when they do not. `words` has its exec
    prefixes stripped; `testish(word)` says a name looks like a test file."""
    words = launched(words)
    if not words:
        return None
    prog = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if prog in GENERIC_RUNNERS:
        subs = GENERIC_SUBCOMMANDS.get(prog)
        if subs is None:
            return ("runner", GENERIC_RUNNERS[prog])
        sub = next((a for a in args if not a.startswith("-")), "")
        if sub in subs:
            return ("runner", f"{GENERIC_RUNNERS[prog]} {sub}")
        return None
    if prog in ("python", "python3") or prog.startswith("python3."):
        if len(args) >= 2 and args[0] == "-m" and args[1] in PYTHON_TEST_MODULES:
            return ("runner", PYTHON_TEST_MODULES[args[1]])
        if "-c" not in args:
            return None
        flag = "-c"
    else:
        flag = CODE_FLAGS.get(prog)
    if prog in INTERPRETERS or flag == "-c":
        if flag is not None and flag in args:
            if code_runs_tests(args, flag):
                return ("maybe", "minitest" if prog == "ruby" else None)
            return None
        if runs_no_code(words):
            return None
        script = next((a for a in args if not a.startswith("-")), "")
        if script and testish(script):
            return ("maybe", None)
    return None


_TEST_FILE = _Lazy(r"(?:^|/)(?:tests?|spec)/|_test\.\w{1,5}$|_spec\.\w{1,5}$|(?:^|/)test_\w{1,100}\.\w{1,5}$")


def code_runs_tests(args: list[str], flag: str) -> bool:
    """Code given on the command line runs tests only when it loads a test
    framework, or requires the test files named after it (`ruby -Itest -e
    'ARGV.each { |f| require f }' test/a_test.rb`)."""
    at = args.index(flag) + 1
    code = args[at] if at < len(args) else ""
    if _TESTISH_CODE.search(code):
        return True
    files = [a for a in args[at + 1:] if not a.startswith("-")]
    return bool(files) and re.search(r"\brequire|\bload\b|\bimport\b|\bdofile\b", code) is not None and all(_TEST_FILE.search(f) for f in files)


def runs_no_code(words: list[str]) -> bool:
    """An interpreter that only checks its script (`bash -n`, `php -l`, `ruby -c`)
    or runs a one-liner that loads no test framework: not a test run, however
    its script is named or whatever the one-liner prints."""
    words = launched(words)
    if not words:
        return False
    prog = words[0].rsplit("/", 1)[-1]
    if prog not in INTERPRETERS and prog != "php" and not prog.startswith("python"):
        return False
    args = words[1:]
    flag = CODE_FLAGS.get(prog)
    if flag is not None and flag in args:
        return not code_runs_tests(args, flag)
    if prog in ("bash", "sh", "zsh", "dash", "ksh"):
        return "-n" in args
    if prog.startswith("python") and "-m" in args:
        return False
    check = CHECK_ONLY.union(CHECK_ONLY_BY_PROGRAM.get(prog, ()))
    return any(a in check for a in args if a.startswith("-"))


def only_reports(words: list[str]) -> bool:
    """A program or script whose name says it reports on tests (`show_test_report.sh`,
    `python test_summary.py`) rather than running them."""
    words = launched(words)
    if not words:
        return False
    prog = words[0].rsplit("/", 1)[-1]
    names = [prog]
    if prog in INTERPRETERS or prog.startswith("python"):
        names = [a.rsplit("/", 1)[-1] for a in words[1:] if not a.startswith("-")][:1]
    return any(REPORT_WORDS.search(n) for n in names)


def is_listing(words: list[str]) -> bool:
    """Does this stage list or count tests instead of running them?"""
    words = launched(words)
    if not words:
        return False
    prog = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    subs = LISTING_SUBCOMMANDS.get(prog)
    if subs and any(a in subs for a in args[:2]):
        return True
    for a in args:
        if a in LISTING_OPTIONS:
            owners = SHORT_LISTING.get(a, ())
            if owners is None or not owners or prog in owners:
                return True
        if a.startswith("--gtest_list_tests") or a.startswith("--list="):
            return True
    return False


# ---------------------------------------------------------------------------
# The generic summary grammar

SUMMARY_WINDOW_LINES = 40  # a closing summary sits in the output's last lines
SUMMARY_WINDOW_CHARS = 24_000
MAX_LINE_CHARS = 400

PASS_WORDS = frozenset(("passed", "passing", "pass", "passes", "succeeded", "successes", "success", "successful", "ok", "good"))
FAIL_WORDS = frozenset(("failed", "failing", "fail", "fails", "failures", "failure", "errors", "error", "errored", "broken", "crashed"))
NOUNS = frozenset(("tests", "test", "specs", "spec", "examples", "example", "scenarios", "scenario", "steps", "step",
                   "features", "feature", "cases", "case", "checks", "check", "assertions", "assertion", "suites", "suite", "runs"))
NEUTRAL_WORDS = frozenset(("skipped", "skip", "pending", "ignored", "todo", "undefined", "xfailed", "expected", "total",
                           "deselected", "warnings", "warning", "timeout", "timeouts", "unexpected"))
_PAIR = _Lazy(r"(?<![\w.])(\d{1,9})[ \t]{1,3}((?:tests? |specs? |scenarios? |steps? |examples? |test cases? )?[a-zA-Z]{2,12})\b")
_KEYED = _Lazy(r"(?<![\w-])([A-Za-z][A-Za-z ]{1,18}?)\s{0,2}[:=]\s{0,20}(\d{1,9})\b")
_OF = _Lazy(r"(?<!\w)(\d{1,9}) (?:out )?of (\d{1,9}) (?:tests?|specs?|examples?|test cases?|checks?) (failed|passed|succeeded|failing)", re.I)
_VERB_FIRST = _Lazy(r"(?<![\w-])(failed|passed) (?:all )?(\d{1,9}) (?:test cases?|tests?|specs?|examples?|scenarios?)\b")
_ALL = _Lazy(r"^\W{0,6}(?:All|ALL) (\d{1,9}) (?:tests?|specs?|examples?|checks?|test cases?) (?:passed|succeeded|OK)|^All tests passed \((\d{1,9}) assertions?", re.M)
_UNITTEST_STYLE = _Lazy(r"^(FAILED|OK)(?: \(([a-z_]{2,12}=\d{1,9}(?:, ?[a-z_]{2,12}=\d{1,9}){0,6})\))?[ \t]*$", re.M)
_XUNIT = _Lazy(r"^\[ {0,2}(FAILED|PASSED|SKIPPED|     OK) {0,2}\] ?([^\n]{0,300})$", re.M)
_XUNIT_TOTAL = _Lazy(r"^\[==========\] (\d{1,9}) tests? from \d{1,9} test (?:suites?|cases?) ran", re.M)
_CATCH = _Lazy(r"^test cases:\s{1,4}(\d{1,9})(?: \|\s{1,4}(\d{1,9}) passed)?(?: \|\s{1,4}(\d{1,9}) failed)?", re.M)
KEY_PASS = frozenset(("passed", "pass", "ok", "passes", "succeeded", "success", "successes", "expected fail"))
KEY_FAIL = frozenset(("failed", "fail", "failures", "errors", "error", "failing", "unexpected pass", "broken", "failure"))
KEY_NOUN = frozenset(("tests", "total", "tests run", "examples", "specs", "scenarios", "test cases", "total tests", "run", "ran"))


class GenericSummary:
    __slots__ = ("status", "pos", "evidence", "failing")

    def __init__(self, status: str, pos: int, evidence: list[str], failing: list[str]) -> None:
        self.status, self.pos, self.evidence, self.failing = status, pos, evidence, failing


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

    low = line.lower()
    for m in _PAIR.finditer(low):
        n, words = int(m.group(1)), m.group(2).split()
        if len(words) > 1:
            seen.add("noun")  # "1 test failed", "2 scenarios passed"
        word = words[-1]
        kind = "fail" if word in FAIL_WORDS else "pass" if word in PASS_WORDS else "noun" if word in NOUNS else ""
        if kind:
            add(kind, n)
    for m in _VERB_FIRST.finditer(low):  # "Failed 1 test case", "Passed all 2 test cases"
        seen.add("noun")
        add("fail" if m.group(1) == "failed" else "pass", int(m.group(2)))
    m = _OF.search(line)  # "1 of 3 tests failed": the counts, not added to
    if m is not None:
        counts["fail" if m.group(3).lower() in ("failed", "failing") else "pass"] = int(m.group(1))
        counts["noun"] = int(m.group(2))
        seen.update(("noun", "fail" if m.group(3).lower() in ("failed", "failing") else "pass"))
    for m in _KEYED.finditer(line):
        key = m.group(1).strip().lower()
        kind = "fail" if key in KEY_FAIL else "pass" if key in KEY_PASS else "noun" if key in KEY_NOUN else ""
        if kind:
            add(kind, int(m.group(2)))
    # a count line needs a failure count next to a pass count or a test noun,
    # or a pass count next to a test noun: one bare "N failed" is not enough
    summary = ("fail" in seen and ("pass" in seen or "noun" in seen)) or ("pass" in seen and "noun" in seen)
    return counts["pass"], counts["fail"], counts["noun"], summary


def read_generic(text: str) -> GenericSummary | None:
    """The closing summary in the generic grammar, from the output's last lines."""
    lines = _tail_lines(text, SUMMARY_WINDOW_LINES)
    if not lines:
        return None
    window_start = lines[0][0]
    window = text[window_start:]
    failing = _xunit_failing(text)
    # xUnit (googletest) and Catch2 closing blocks
    xunit = [m for m in _XUNIT.finditer(window) if m.group(1) in ("FAILED", "PASSED")]
    catch = list(_CATCH.finditer(window))
    if catch:
        m = catch[-1]
        total, ok, bad = int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0)
        status = "fail" if bad else ("pass" if total else "zero")
        return GenericSummary(status, window_start + m.start(), [m.group(0).strip()], failing)
    if xunit:
        bad = [m for m in xunit if m.group(1) == "FAILED"]
        good = [m for m in xunit if m.group(1) == "PASSED"]
        if bad:
            return GenericSummary("fail", window_start + bad[0].start(), [m.group(0).strip()[:240] for m in bad[:3]], failing)
        count = re.match(r"(\d{1,9})", good[-1].group(2).strip())
        status = "pass" if count is None or int(count.group(1)) else "zero"
        return GenericSummary(status, window_start + good[-1].start(), [good[-1].group(0).strip()], [])
    # unittest-style `FAILED (failures=1)` / `OK` closing lines (shunit2, green, nose2)
    closing = list(_UNITTEST_STYLE.finditer(window))
    if closing:
        m = closing[-1]
        detail = m.group(2) or ""
        counts = {k: int(v) for k, v in (p.split("=") for p in detail.replace(" ", "").split(",") if "=" in p)}
        ran = re.search(r"^Ran (\d{1,9}) tests?", window, re.M)
        if m.group(1) == "FAILED" and (counts.get("failures", 0) or counts.get("errors", 0) or counts.get("failed", 0)):
            return GenericSummary("fail", window_start + m.start(), [m.group(0).strip()], failing)
        if m.group(1) == "OK" and (ran is not None or counts):
            n = int(ran.group(1)) if ran else sum(v for k, v in counts.items() if k in ("passes", "tests", "passed"))
            return GenericSummary("pass" if n else "zero", window_start + m.start(), ([ran.group(0)] if ran else []) + [m.group(0).strip()], [])
    every = list(_ALL.finditer(window))
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
            return GenericSummary("fail", f[0], [x[1][:240] for x in (bad[-3:])], failing)
        if m_all is not None or any(f[2] > 0 or f[4] > 0 for f in found):
            f = found[-1]
            return GenericSummary("pass", f[0] if m_all is None else window_start + m_all.start(),
                                  [x[1][:240] for x in found[-3:]] if m_all is None else [m_all.group(0).strip()], [])
        return GenericSummary("zero", found[-1][0], [found[-1][1][:240]], [])
    return GenericSummary("pass" if int(m_all.group(1) or m_all.group(2) or 0) else "zero", window_start + m_all.start(), [m_all.group(0).strip()], [])


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
_FAILING_NAME = _Lazy(
    r"^(?:\s{2}\d{1,4}\) test (?P<exunit>[^\n]{1,200}? \([\w.]{1,200}\))$"
    r"|\d{1,4}\) Scenario: (?P<cucumber>[^\n#]{1,200}?)\s+# \S{1,200}$"
    r"|\s{2}(?P<behave>\S{1,200}\.feature:\d{1,6}\s+[^\n]{1,200})$"
    r"|(?:Failure|Error) (?:->|\u2192) \S{1,200} @ \d{1,6}\n(?P<busted>[^\n]{1,200})$"
    r"|(?P<eunit>\w{1,100}: \w{1,100})\.\.\.\*failed\*$)",
    re.M,
)
_FAILURES_HEADER = _Lazy(r"^Failures:\n(?:[^\n]{0,300}\n){0,3}?\d{1,4}\) (?P<jasmine>[^\n]{1,200})$", re.M)


def _xunit_failing(text: str) -> list[str]:
    names: list[str] = []
    tail = text[-60_000:]
    for m in _FAILING_NAME.finditer(tail):
        name = next((g for g in m.groups() if g), "").strip()
        if name and name not in names:
            names.append(name[:240])
    for m in _FAILURES_HEADER.finditer(tail):
        name = m.group("jasmine").strip()
        if name and not name.startswith("Scenario:") and name not in names:
            names.append(name[:240])
    names = names[:20]
    for m in _XUNIT.finditer(text[-60_000:]):
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

_MARKERS = _Lazy(
    r"^(?:\[  FAILED  \] (?P<xunit>[A-Za-z_][\w:/.<>-]{0,200}(?: \(\d+ ms\))?)$"
    r"|--- FAIL: (?P<go>\S{1,200})"
    r"|\(fail\) (?P<bun>[^\n]{1,200})"
    r"|not ok \d{1,9} (?:- )?(?P<tap>[^\n#]{1,200})$"
    r"|(?:=|_){3,} FAILURES (?:=|_){3,}$"
    r"|FAIL: (?P<unit>\S{1,200}) \("
    r"|\S{1,200}:\d{1,6}: Failure$"
    r"|\s{0,6}[\u2716\u2718\u2717] (?P<cross>[^\n]{1,200})$)",
    re.M,
)


def failure_markers(text: str) -> tuple[list[str], list[str]] | None:
    """(evidence, failing names) from runner failure markers, or None."""
    hits = []
    names: list[str] = []
    for m in _MARKERS.finditer(text):
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

_RUNNING = _Lazy(
    r"^(?:=== RUN   (?P<go>\S{1,200})"
    r"|\[ RUN      \] (?P<gtest>\S{1,200})"
    r"|(?P<pytest>\S{1,200}\.py::\S{1,200}) ?(?:PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)?"
    r"|test (?P<cargo>\S{1,200}) has been running for over"
    r"|(?P<unit>test\w{0,100} \([\w.]{1,200}\)) \.\.\.(?: ok| FAIL| ERROR| skipped)?"
    r"|\s{2}\* test (?P<exunit>[^\n]{1,200}?)(?: \([\d.]+m?s\))? \[L#\d{1,7}\])",
    re.M,
)
DONE_WORDS = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL", "XPASS", "... ok", "... FAIL", "... ERROR", "... skipped")


def running_test(text: str) -> str | None:
    """The test that had started but not finished when the output ends."""
    last = None
    for m in _RUNNING.finditer(text[-60_000:]):
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
