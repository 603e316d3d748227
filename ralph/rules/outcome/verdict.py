"""Test-outcome verdict: did this Bash command run tests, and did they fail?

Pure: (command, exit code, merged output) -> TestVerdict. No I/O.

Two mistakes cost differently: calling a passing run a failure rolls back good
work; missing a failure lets broken work be committed. So the rules are:

1. The command decides whether this is a test run at all. A command whose
   stages are all non-test programs (grep, cat, git, builds, installs) is
   `not_test` whatever it prints.
2. The runner's own closing summary decides (scanned from the END of the
   output; runners print summaries last). Any failing summary wins; "no tests
   ran" is `unknown` (no rollback is justified by an empty run).
3. Without a summary, runner-specific failure markers that are still visible
   (truncated output) decide `fail`; otherwise the exit code decides, but only
   when the runner is the command's last pipeline stage and nothing (`| tail`,
   `|| true`, `; echo`) masks its status. A runner stopped by `timeout` (124)
   or a signal (137, 143) did not pass: `fail`.
4. Anything else is `unknown`.

Runners with no reader here go through the generic layer
(ralph.rules.outcome.generic): test evidence from the command (rule 1 still
holds: no evidence, no test run), a generic summary grammar read after the
runners' own summaries found nothing, and generic failure markers. A
project's `[tests]` commands (ralph.rules.outcome.tests_config) are test runs too.

Bounded work: only the last TAIL_CHARS and first HEAD_CHARS of the output are
examined with regexes (plus a few literal `str.find` scans over everything),
and every pattern is anchored to a line start with bounded repeats, so 10 MB of
output, or one 10 MB line, costs about the same as 100 KB.
"""
from __future__ import annotations

import re

from ralph.rules.guard.programs.facts import SHELLS, unwrap

TAIL_CHARS = 96_000  # runners print their summaries last; this holds any summary block
HEAD_CHARS = 16_000  # `| head` leaves only the start: progress lines, early failures
MAX_EVIDENCE = 4
MAX_FAILING = 20
MAX_LINE = 240  # evidence lines are cut to this many characters

FAIL, PASS, NOT_TEST, UNKNOWN = "fail", "pass", "not_test", "unknown"
ZERO = "zero"  # internal: the runner ran and found no tests


class TestVerdict:
    """What a Bash command's output says about a test run."""

    __slots__ = ("verdict", "runner", "evidence", "failing_tests")
    __test__ = False  # not a pytest test class

    def __init__(self, verdict: str, runner: str | None = None, evidence: list[str] | None = None, failing_tests: list[str] | None = None) -> None:
        self.verdict = verdict
        self.runner = runner
        self.evidence = evidence if evidence is not None else []
        self.failing_tests = failing_tests if failing_tests is not None else []

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "runner": self.runner, "evidence": list(self.evidence), "failing_tests": list(self.failing_tests)}

    def __repr__(self) -> str:
        return f"TestVerdict({self.verdict!r}, runner={self.runner!r}, evidence={self.evidence!r}, failing_tests={self.failing_tests!r})"


def exit_code_from_failure(error: str) -> tuple[int | None, str]:
    """PostToolUseFailure's `error` is "Exit code N\\n<output>"; split it. Anything
    else (an interrupt, a timeout message) gives (None, error)."""
    if not isinstance(error, str):
        return None, ""
    head, sep, rest = error.partition("\n")
    words = head.split()
    if len(words) == 3 and words[0] == "Exit" and words[1] == "code" and words[2].lstrip("-").isdigit():
        return int(words[2]), rest
    return None, error


# ---------------------------------------------------------------------------
# The command: which stages run tests, and can their exit status be trusted?

# program -> runner, when the program itself is the test runner
RUNNER_PROGRAMS = {
    "pytest": "pytest", "py.test": "pytest", "pytest-3": "pytest",
    "jest": "jest", "vitest": "vitest", "mocha": "mocha", "_mocha": "mocha",
    "tape": "tape", "tap": "tap", "prove": "prove", "bats": "bats",
    "rspec": "rspec", "phpunit": "phpunit", "ctest": "ctest", "nose2": "unittest",
    "ava": "ava", "karma": "karma", "gotestsum": "go", "trial": "unittest",
}
# (program, subcommand) -> runner
RUNNER_SUBCOMMANDS = {
    ("go", "test"): "go", ("cargo", "test"): "cargo", ("cargo", "nextest"): "cargo",
    ("deno", "test"): "deno", ("bun", "test"): "bun", ("dotnet", "test"): "dotnet",
    ("mvn", "test"): "maven", ("mvn", "verify"): "maven", ("gradle", "test"): "gradle",
    ("./gradlew", "test"): "gradle", ("gradlew", "test"): "gradle", ("swift", "test"): "swift",
    ("mix", "test"): "exunit", ("rake", "test"): "minitest", ("rake", "spec"): "rspec",
}
# python -m MODULE -> runner (or wrapper)
PYTHON_MODULES = {"pytest": "pytest", "py.test": "pytest", "unittest": "unittest", "nose2": "unittest", "tox": "tox", "nox": "nox", "twisted.trial": "unittest"}
# wrappers whose subcommand/script names a test script; runner known from output only
SCRIPT_RUNNERS = frozenset(("npm", "yarn", "pnpm", "bun", "make", "gmake", "just", "task", "rake", "composer"))
TEST_WRAPPERS = {"tox": "tox", "nox": "nox"}
# tool -> (subcommand that runs a command, options of that subcommand that take a value)
RUN_WRAPPERS = {
    "uv": ("run", frozenset(("--with", "--python", "-p", "--project", "--directory", "--group", "--extra", "--env-file", "--package", "--with-requirements", "--index", "--only-group"))),
    "poetry": ("run", frozenset(("-C", "--directory", "-P", "--project"))),
    "pipenv": ("run", frozenset()), "pdm": ("run", frozenset(("-p", "--project"))),
    "hatch": ("run", frozenset(("-e", "--env"))), "rye": ("run", frozenset()),
    "conda": ("run", frozenset(("-n", "--name", "-p", "--prefix"))), "mamba": ("run", frozenset(("-n", "--name", "-p", "--prefix"))),
    "micromamba": ("run", frozenset(("-n", "--name", "-p", "--prefix"))), "pixi": ("run", frozenset(("-e", "--environment"))),
    "bundle": ("exec", frozenset()), "direnv": ("exec", frozenset()), "pnpm": ("exec", frozenset()),
    "yarn": ("exec", frozenset()), "bun": ("x", frozenset()), "npm": ("exec", frozenset()), "opam": ("exec", frozenset()),
}
NPX_LIKE = {"npx": frozenset(("-p", "--package", "-c", "--call")), "bunx": frozenset(), "pnpx": frozenset()}
PYTHON_NAMES = frozenset(("python", "python3", "python2", "py", "pypy", "pypy3") + tuple(f"python3.{minor}" for minor in range(6, 20)))
# stages that cannot change whether the runner's status reaches the exit code
TRIVIAL_PROGRAMS = frozenset(("echo", "printf", "true", ":", "cd", "pushd", "popd", "export", "set", "unset", "sleep", "clear", "date", "wait", "shopt", "source", ".", "ulimit", "umask", "alias", "hash", "trap", "exit", "return"))
# options after which the runner lists or describes tests but runs none
NOT_RUN_OPTIONS = frozenset(("--collect-only", "--co", "--version", "--help", "--listTests", "--list-tests", "--no-run", "-list", "--showConfig", "--list-files", "--fixtures", "--markers"))
NPM_NOT_TEST_SCRIPTS = frozenset(("install", "i", "ci", "add", "remove", "uninstall", "update", "publish", "pack", "init", "audit", "outdated", "ls", "list", "view", "info", "link", "version", "config", "cache", "dedupe", "prune", "rebuild", "exec", "dlx", "create", "why", "login", "whoami", "set", "get", "global", "upgrade", "help"))
TESTISH_SOURCE = r"(?:^|[\W_])(?:tests?|specs?|check|unittests?|spec_helper|testsuite|checks)(?:$|[\W_])|test_|_test\b|\.test\.|\.spec\.|tests?[-:]|^test"
_TESTISH: list[re.Pattern] = []


def _testish(word: str) -> bool:
    """Is this a name a test script or target would have (run_tests.sh, test:unit, spec/)?"""
    if not _TESTISH:
        _TESTISH.append(re.compile(TESTISH_SOURCE, re.I))
    return _TESTISH[0].search(word) is not None


class Stage:
    """One simple command; `op` is the operator that follows it ('' at the end)."""

    __slots__ = ("words", "op")

    def __init__(self, words: list[str], op: str) -> None:
        self.words = words
        self.op = op


def shell_stages(command: str, depth: int = 0) -> list[Stage]:
    """Split a shell command into simple commands and the operators between
    them, with the guard's bash parser (ralph.rules.guard.shell): quotes, escapes,
    heredocs, compound commands as bash reads them; redirections dropped;
    `bash -c '...'` expanded in place. Words keep substitutions as text
    (`$(…)`, `$x`): enough to find the runner, not to expand it."""
    from ralph.rules.guard.syntax.parser import ShellSyntaxError, TooDeep, parse

    try:
        tree = parse(command)
    except (ShellSyntaxError, TooDeep, RecursionError):
        # bash would not run it either; keep the words so the runner can still be named
        return [Stage(command.split(), "")] if command.split() else []
    stages: list[Stage] = []
    _flatten(tree, "", stages)
    if depth < 3:
        stages = _expand_shell_c(stages, depth)
    return stages


def _flatten(node: tuple, op: str, out: list[Stage]) -> None:
    """Append the simple commands of a syntax tree node; `op` follows the last."""
    kind = node[0]
    if kind == "cmd":
        words = [f"{a[1]}={_word_text(a[2])}" if a[0] == "=" else f"{a[1]}=()" for a in node[1]]
        words += [_word_text(w) for w in node[2]]
        if words:
            out.append(Stage(words, op))
        return
    if kind in ("and", "pipe"):
        children, ops = node[1], node[2]
        for i, child in enumerate(children):
            _flatten(child, ops[i] if i < len(ops) else op, out)
        return
    if kind in ("seq", "if"):
        children = node[1]
    elif kind in ("sub", "grp"):
        children = [node[1]]
    elif kind == "while":
        children = [node[1], node[2]]
    elif kind == "for":
        children = [node[3]]
    elif kind == "case":
        children = [body for _, body in node[2]]
    elif kind in ("arith", "test"):
        out.append(Stage(["((" if kind == "arith" else "[["], op))
        return
    else:  # a function definition runs nothing by itself
        return
    for i, child in enumerate(children):
        _flatten(child, ";" if i < len(children) - 1 else op, out)


def _word_text(word: list) -> str:
    """A parsed word as text: literals as bash reads them, expansions as written."""
    text = []
    for part in word:
        kind = part[0]
        if kind == "s":
            text.append(part[1])
        elif kind == "v":
            text.append("$" + part[1])
        elif kind == "c":
            text.append("$(…)")
        elif kind == "p":
            text.append("<(…)")
        else:
            text.append("$((…))")
    return "".join(text)


def _expand_shell_c(stages: list[Stage], depth: int) -> list[Stage]:
    out: list[Stage] = []
    for stage in stages:
        words = unwrap(stage.words)
        if len(words) >= 3 and _base(words[0]) in SHELLS:
            flags = [w for w in words[1:] if w.startswith("-")]
            script_at = next((k for k, w in enumerate(words[1:], 1) if not w.startswith("-")), None)
            if script_at is not None and any("c" in f for f in flags):
                inner = shell_stages(words[script_at], depth + 1)
                if inner:
                    inner[-1].op = stage.op
                    out.extend(inner)
                    continue
        out.append(stage)
    return out


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


class StageKind:
    """What one simple command is: a test runner, a test wrapper, maybe a test, or not."""

    __slots__ = ("kind", "runner", "wrapper")

    def __init__(self, kind: str, runner: str | None = None, wrapper: str | None = None) -> None:
        self.kind = kind  # 'runner' | 'wrapper' | 'maybe' | 'trivial' | 'other'
        self.runner = runner
        self.wrapper = wrapper


def classify_stage(words: list[str], depth: int = 0) -> StageKind:
    words = unwrap(words)
    if not words:
        return StageKind("trivial")
    prog = _base(words[0])
    args = words[1:]
    if prog in TRIVIAL_PROGRAMS:
        return StageKind("trivial")
    if any(a in NOT_RUN_OPTIONS for a in args):
        return StageKind("other")
    if depth > 4:
        return StageKind("other")
    if prog in RUNNER_PROGRAMS:
        return StageKind("runner", RUNNER_PROGRAMS[prog])
    if prog in TEST_WRAPPERS:
        return StageKind("wrapper", None, TEST_WRAPPERS[prog])
    if prog in NPX_LIKE:
        rest = _skip_options(args, NPX_LIKE[prog])
        return classify_stage(rest, depth + 1) if rest else StageKind("other")
    if prog in RUN_WRAPPERS and args:
        sub, value_opts = RUN_WRAPPERS[prog]
        k = 0
        while k < len(args) and args[k].startswith("-"):
            k += 1
        if k < len(args) and args[k] == sub:
            rest = _skip_options(args[k + 1:], value_opts)
            if prog == "hatch" and rest and ":" in rest[0]:
                rest = [rest[0].split(":", 1)[1]] + rest[1:]
            inner = classify_stage(rest, depth + 1) if rest else StageKind("other")
            if inner.kind in ("runner", "wrapper", "maybe") or prog not in SCRIPT_RUNNERS:
                return inner
    if prog in PYTHON_NAMES:
        return _classify_python(args)
    if prog == "node" or prog == "nodejs":
        if "--test" in args or any(a.startswith("--test-") for a in args if a != "--test-only"):
            return StageKind("runner", "node")
        script = next((a for a in args if not a.startswith("-")), "")
        if script and "node_modules/" in script:
            return classify_stage([script] + args[args.index(script) + 1:], depth + 1)
        return StageKind("maybe") if script and _testish(script) else StageKind("other")
    if prog == "ruby":
        script = next((a for a in args if not a.startswith("-")), "")
        if "-e" in args or "-c" in args or "-wc" in args:
            return StageKind("other")
        return StageKind("runner", "minitest") if script and _testish(script) else StageKind("other")
    if prog == "php":
        script = next((a for a in args if not a.startswith("-")), "")
        if _base(script) == "phpunit":
            return StageKind("runner", "phpunit")
        if script == "artisan" and "test" in args:
            return StageKind("wrapper", None, "artisan")
        return StageKind("other")
    sub = next((a for a in args if not a.startswith("-") and not a.startswith("+")), "")
    if (prog, sub) in RUNNER_SUBCOMMANDS:
        return StageKind("runner", RUNNER_SUBCOMMANDS[(prog, sub)])
    if prog == "cmake" and "--target" in args:
        target = args[args.index("--target") + 1] if args.index("--target") + 1 < len(args) else ""
        return StageKind("wrapper", None, "cmake") if target in ("test", "check") else StageKind("other")
    if prog in SCRIPT_RUNNERS:
        return _classify_script_runner(prog, args)
    if prog in ("manage.py",) and sub == "test":
        return StageKind("runner", "unittest")
    if prog in KNOWN_NOT_TEST:
        return StageKind("other")
    if _testish(prog) or any(_testish(a) for a in args[:3] if not a.startswith("-")):
        # an unknown program or script named like a test (./run_tests.sh, bin/test)
        return StageKind("maybe")
    return StageKind("other")


def _skip_options(args: list[str], value_opts: frozenset) -> list[str]:
    k = 0
    while k < len(args) and args[k].startswith("-"):
        if args[k] == "--":
            k += 1
            break
        k += 2 if args[k] in value_opts else 1
    return args[k:]


def _classify_python(args: list[str]) -> StageKind:
    k = 0
    while k < len(args):
        a = args[k]
        if a == "-m" and k + 1 < len(args):
            mod = args[k + 1]
            if mod in PYTHON_MODULES:
                runner = PYTHON_MODULES[mod]
                if any(x in NOT_RUN_OPTIONS for x in args[k + 2:]):
                    return StageKind("other")
                if runner in TEST_WRAPPERS:
                    return StageKind("wrapper", None, runner)
                return StageKind("runner", runner)
            return StageKind("other")
        if a.startswith("-m") and len(a) > 2:
            return _classify_python(["-m", a[2:]] + args[k + 1:])
        if a in ("-c",):
            return StageKind("other")
        if a.startswith("-"):
            k += 1
            continue
        script = _base(a)
        if script == "manage.py" and k + 1 < len(args) and args[k + 1] == "test":
            return StageKind("runner", "unittest")
        if script in ("runtests.py", "run_tests.py", "setup.py") and (script != "setup.py" or "test" in args):
            return StageKind("maybe")
        return StageKind("maybe") if _testish(a) else StageKind("other")
    return StageKind("other")


def _classify_script_runner(prog: str, args: list[str]) -> StageKind:
    """npm test, yarn test, pnpm run test:unit, make test, make -C dir check, ..."""
    rest = [a for a in args if not a.startswith("-")]
    if prog in ("make", "gmake"):
        skip_next = False
        targets = []
        for a in args:
            if skip_next:
                skip_next = False
                continue
            if a in ("-C", "-f", "--directory", "--file", "-j", "-l", "-I", "-o", "-W"):
                skip_next = a not in ("-j",) or False
                continue
            if not a.startswith("-") and "=" not in a:
                targets.append(a)
        return StageKind("wrapper", None, "make") if any(_testish(t) for t in targets) else StageKind("other")
    if not rest:
        return StageKind("other")
    script = rest[0]
    if script in ("run", "run-script", "exec") and prog != "make":
        script = rest[1] if len(rest) > 1 else ""
    elif script in NPM_NOT_TEST_SCRIPTS:
        return StageKind("other")
    if prog in ("yarn", "pnpm", "bun") and script in RUNNER_PROGRAMS:
        return StageKind("runner", RUNNER_PROGRAMS[script])
    if script in ("t", "tst") or _testish(script):
        return StageKind("wrapper", None, prog)
    return StageKind("other")


KNOWN_NOT_TEST = frozenset((
    "grep", "egrep", "fgrep", "rg", "ag", "ack", "cat", "bat", "head", "tail", "less", "more", "ls", "find", "fd", "tree",
    "git", "gh", "sed", "awk", "gawk", "cut", "sort", "uniq", "wc", "diff", "cmp", "cp", "mv", "rm", "mkdir", "rmdir", "touch",
    "chmod", "chown", "ln", "pip", "pip3", "pipx", "curl", "wget", "tar", "zip", "unzip", "gzip", "jq", "yq", "which", "type",
    "file", "stat", "du", "df", "ps", "kill", "pwd", "false", "tee", "apt", "apt-get", "dpkg", "brew", "gcc", "cc", "clang",
    "g++", "clang++", "rustc", "tsc", "eslint", "ruff", "mypy", "black", "flake8", "pylint", "prettier", "isort", "cmake",
    "docker", "podman", "kubectl", "ssh", "scp", "rsync", "open", "xdg-open", "vim", "nano", "code", "man", "history",
    "uname", "whoami", "id", "hostname", "env", "printenv", "realpath", "dirname", "basename", "readlink", "base64",
    "sha256sum", "md5sum", "xxd", "od", "hexdump", "strings", "nl", "column", "tr", "paste", "join", "comm", "rev",
    "python-config", "go", "cargo", "rustup", "deno", "bun", "node", "npm", "yarn", "pnpm", "gem", "bundle", "composer",
    "mvn", "gradle", "dotnet", "swift", "mix", "gofmt", "golangci-lint", "shellcheck", "perl", "ruby", "php", "lua",
))


class CommandShape:
    """The test-running part of a command, and whether its exit status survives."""

    __slots__ = ("kind", "runner", "wrapper", "exit_decisive", "mask", "clean_prefix")

    def __init__(self) -> None:
        self.kind: str | None = None  # 'runner' | 'wrapper' | 'maybe' | None (no test stage)
        self.runner: str | None = None
        self.wrapper: str | None = None
        self.exit_decisive = False
        self.mask = ""  # how the runner's status is hidden, for evidence
        self.clean_prefix = True  # nothing non-trivial ran before the runner


KIND_RANK = {"runner": 3, "wrapper": 2, "maybe": 1}


def command_shape(command: str, declared: tuple[str, ...] = ()) -> CommandShape:
    shape = CommandShape()
    stages = shell_stages(command) if command else []
    pipefail = False
    last_test = -1
    kinds: list[StageKind] = []
    for idx, stage in enumerate(stages):
        sk = _generic_stage(stage.words, classify_stage(stage.words), declared)
        kinds.append(sk)
        words = stage.words
        if words and words[0] == "set" and any("pipefail" in w for w in words[1:]):
            pipefail = True
        if sk.kind in KIND_RANK:
            last_test = idx  # the last test stage is the one whose status the shell reports
            if shape.kind is None or KIND_RANK[sk.kind] > KIND_RANK[shape.kind]:
                shape.kind = sk.kind
            if sk.runner and not shape.runner:
                shape.runner = sk.runner
            if sk.wrapper and not shape.wrapper:
                shape.wrapper = sk.wrapper
    if last_test < 0:
        return shape
    last_kind = kinds[last_test]
    if last_kind.runner:
        shape.runner = last_kind.runner
    shape.clean_prefix = all(k.kind == "trivial" for k in kinds[:last_test])
    # Does the runner's status reach the exit code?
    decisive, mask = True, ""
    if stages[last_test].op in ("|", "|&") and not pipefail:
        nxt = stages[last_test + 1].words if last_test + 1 < len(stages) else []
        decisive, mask = False, "| " + (_base(nxt[0]) if nxt else "")
    elif stages[last_test].op in ("|", "|&"):
        decisive = True  # pipefail: a failing runner still fails the pipeline
    j = last_test
    while j < len(stages) and stages[j].op in ("|", "|&"):
        j += 1
    # j is the last stage of the runner's pipeline; look at what follows it
    while decisive and j < len(stages) - 1:
        op = stages[j].op
        nxt_kind = kinds[j + 1]
        if op == "&&" and nxt_kind.kind == "trivial":
            j += 1
            while j < len(stages) and stages[j].op in ("|", "|&"):
                j += 1
            continue
        if op == "&&":
            decisive, mask = False, "&& " + _base(stages[j + 1].words[0]) if stages[j + 1].words else "&&"
        elif op == "||":
            decisive, mask = False, "|| " + (" ".join(stages[j + 1].words[:2]))
        elif op in (";", "\n", "&", ";;"):
            decisive, mask = False, "; " + (" ".join(stages[j + 1].words[:2]))
        else:
            decisive = False
        break
    shape.exit_decisive = decisive
    shape.mask = mask
    return shape


# programs that never run tests and launch nothing: the generic layer need not look
PLAIN_TOOLS = frozenset(("grep", "egrep", "fgrep", "rg", "ag", "ack", "cat", "bat", "head", "tail", "less", "more", "ls", "find", "fd",
                         "tree", "git", "gh", "sed", "awk", "cut", "sort", "uniq", "wc", "diff", "cp", "mv", "rm", "mkdir", "touch",
                         "chmod", "ln", "curl", "wget", "tar", "jq", "which", "pwd", "stat", "du", "df", "ps", "file", "tee"))


def _generic_stage(words: list[str], kind: StageKind, declared: tuple[str, ...] = ()) -> StageKind:
    """The generic layer's say on one stage (ralph.rules.outcome.generic): listing
    and counting commands run no test; runners and interpreters running test
    code that the tables above do not know are test stages; so are the
    project's own test commands declared in `[tests] commands`."""
    if kind.kind == "trivial" or (kind.kind == "other" and not declared and words and _base(words[0]) in PLAIN_TOOLS):
        return kind  # the common case costs no import
    from ralph.rules.outcome import generic

    stripped = unwrap(words)
    if generic.is_listing(stripped) or generic.runs_no_code(stripped):
        return StageKind("other")
    if kind.kind == "maybe" and generic.only_reports(stripped):
        return StageKind("other")  # named like a test, but it reports: its summary lines are not a run
    if declared:
        text = " ".join(stripped)
        if any(text == d or text.startswith(d + " ") for d in declared):
            return StageKind("runner", kind.runner if kind.kind == "runner" else DECLARED)
    if kind.kind == "other" or (kind.kind == "maybe" and kind.runner is None):
        found = generic.stage_evidence(stripped, _testish)
        if found is not None and (kind.kind == "other" or found[0] == "runner"):
            return StageKind(found[0], found[1])
    return kind


# ---------------------------------------------------------------------------
# The output: summaries and failure markers, per runner family.

class Finding:
    """One runner's reading of the output: its status, where, and what it says."""

    __slots__ = ("runner", "status", "pos", "evidence", "failing")

    def __init__(self, runner: str, status: str, pos: int, evidence: list[str], failing: list[str] | None = None) -> None:
        self.runner = runner
        self.status = status  # FAIL | PASS | ZERO
        self.pos = pos
        self.evidence = evidence
        self.failing = failing or []


_ANSI = None
_PATTERNS: dict[str, re.Pattern] = {}

# name -> (literal that must be in the text, pattern); compiled on first use
PATTERN_SOURCES = {
    "pytest_summary": ("in ", r"^(?:=+ )?(?P<body>(?:\d{1,9} [a-z]{4,12}(?:, |\s(?=in )))+|no tests ran|(?:\d{1,9} [a-z]{4,12}))\s?in \d{1,7}(?:\.\d{1,4})?s\b[^\n=]{0,40}(?: =+)?[ \t]*$"),
    "pytest_interrupted": ("Interrupted", r"^(?:!+ )?Interrupted: (\d+) errors? during collection"),
    "pytest_failed_line": ("FAILED ", r"^FAILED (\S{1,300}?)(?: - [^\n]{0,300})?$"),
    "pytest_error_line": ("ERROR ", r"^ERROR (\S{1,300})(?: - [^\n]{0,300})?$"),
    "pytest_collect_error": ("ERROR collecting", r"^_+ ERROR collecting (\S{1,300}) _+$"),
    "pytest_verbose_failed": (" FAILED", r"^(\S{1,300}\.py::\S{1,300}) FAILED(?:[ \t]+\[[ \t]{0,2}\d{1,3}%\])?[ \t]*$"),
    "pytest_progress": (".py ", r"^\S{1,300}\.py [.FEsxX]{1,2000}(?:\s+\[\s{0,2}\d{1,3}%\])?[ \t]*$"),
    "unittest_ran": ("Ran ", r"^Ran (\d+) tests? in [\d.]+s[ \t]*\n(?:[ \t]*\n){0,3}(?P<status>OK|FAILED|NO TESTS RAN)(?: \((?P<detail>[^)\n]{0,200})\))?[ \t]*$"),
    "unittest_fail_line": (": ", r"^(?:FAIL|ERROR): (\S{1,200}) \(([^)\n]{1,300})\)"),
    "jest_tests": ("Tests:", r"^Tests:[ \t]+(?P<body>[^\n]{1,300})$"),
    "jest_suites": ("Test Suites:", r"^Test Suites:[ \t]+(?P<body>[^\n]{1,300})$"),
    "jest_no_tests": ("No tests found", r"^No tests found, exiting with code (\d+)"),
    "jest_failing": ("\u25cf ", r"^[ \t]{0,4}\u25cf (?!Test suite failed to run)(?!Console)([^\n]{1,300})$"),
    "jest_suite_failed": ("Test suite failed to run", r"^[ \t]{0,4}\u25cf Test suite failed to run"),
    "jest_file_fail": ("FAIL ", r"^FAIL (\S{1,300}\.(?:[cm]?[jt]sx?))"),
    "vitest_files": ("Test Files", r"^[ \t]*Test Files[ \t]+(?P<body>[^\n]{1,200})$"),
    "vitest_tests": ("Tests ", r"^[ \t]*Tests[ \t]{2,}(?P<body>[^\n]{1,200})$"),
    "vitest_errors": ("Errors", r"^[ \t]*Errors[ \t]+(\d+) errors?"),
    "vitest_no_files": ("No test files found", r"^No test files found"),
    "vitest_failing": ("FAIL ", r"^[ \t]*FAIL[ \t]+(\S{1,300} > [^\n]{1,300}?)[ \t]*(?:\[[^\n]{0,40}\])?$"),
    "mocha_passing": ("passing", r"^[ \t]+(\d+) passing \([^)\n]{1,30}\)"),
    "mocha_failing": ("failing", r"^[ \t]+(\d+) failing[ \t]*$"),
    "mocha_pending": ("pending", r"^[ \t]+(\d+) pending[ \t]*$"),
    "mocha_failure_item": (") ", r"^[ \t]{2,4}(\d+)\) ([^\n]{1,300})$"),
    "tap_counts": ("# ", r"^(?:#|\u2139)[ \t]+(tests|pass|fail|cancelled|skipped|skip|todo|suites|ok)\b[ \t]*(\d*)[ \t]*$"),
    "tap_line": ("ok", r"^(not )?ok\b[ \t]*(\d*)[ \t]*(?:- )?([^\n]{0,300})$"),
    "tap_plan": ("1..", r"^1\.\.(\d+)(?:[ \t]*#[^\n]{0,200})?[ \t]*$"),
    "tap_bail": ("Bail out!", r"^Bail out!"),
    "node_spec_fail": ("\u2716 ", r"^[ \t]*\u2716 ([^\n]{1,300}?)(?: \([\d.]+m?s\))?[ \t]*$"),
    "tap18_asserts": ("Asserts:", r"^Asserts:[ \t]+(\d+) pass[ \t]+(\d+) fail"),
    "tap18_total": ("total:", r"^# \{ total: (\d+)(?:, pass: (\d+))?(?:, fail: (\d+))?"),
    "tap18_file": ("FAIL ", r"^[ \t]*FAIL[ \t]+(\S{1,300})[ \t]+\d+ failed"),
    "prove_result": ("Result: ", r"^Result: (PASS|FAIL|NOTESTS)[ \t]*$"),
    "prove_all_ok": ("All tests successful", r"^All tests successful\."),
    "prove_files": ("Files=", r"^Files=(\d+), Tests=(\d+)"),
    "prove_failed_file": ("Wstat", r"^(\S{1,300}?)[ \t]+\(Wstat: \d+"),
    "bats_pretty": (" tests, ", r"^(\d+) tests?, (\d+) failures?(?:, (\d+) skipped)?"),
    "go_pkg": ("\t", r"^(ok  |FAIL|\?   )\t(\S{1,300})\t([^\n]{0,120})$"),
    "go_bare": ("FAIL", r"^(PASS|FAIL)[ \t]*$"),
    "go_test_fail": ("--- FAIL", r"^[ \t]*--- FAIL: (\S{1,300})"),
    "go_json": ('"Action"', r'^\{"Time":"[^"\n]{0,60}","Action":"(pass|fail|skip)","Package":"([^"\n]{0,300})"(?:,"Test":"([^"\n]{0,300})")?'),
    "go_build_error": ("setup failed", r"^(?:# \S{1,300}|FAIL\t\S{1,300} \[(?:build|setup) failed\])$"),
    "go_panic": ("panic: ", r"^panic: [^\n]{0,300}$"),
    "cargo_result": ("test result: ", r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed;(?: (\d+) ignored;)?"),
    "cargo_error": ("error", r"^error(?:\[E\d{4}\])?: (?:test failed|could not compile|[^\n]{0,300})"),
    "cargo_test_failed": ("FAILED", r"^test (\S{1,300}) \.\.\. FAILED$"),
    "cargo_running_zero": ("running 0 tests", r"^running 0 tests$"),
    "nextest_summary": ("Summary", r"^[ \t]*Summary \[[^\]\n]{0,40}\] (\d+) tests? run: (\d+) passed(?: \([^)\n]{0,40}\))?, (\d+) failed"),
    "rspec_summary": ("example", r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?(?:, (\d+) errors? occurred outside of examples)?"),
    "rspec_failed": ("rspec ", r"^rspec (\S{1,300}) # ([^\n]{1,300})$"),
    "minitest_summary": ("assertions", r"^(\d+) (?:runs|tests), (\d+) assertions, (\d+) failures, (\d+) errors, (\d+) (?:skips|pendings)"),
    "minitest_failed": ("#", r"^[ \t]*(?:\d+\) )?(?:Failure|Error):\n[ \t]*(\S{1,200}#\S{1,200})"),
    "phpunit_ok": ("OK", r"^OK \((\d+) tests?, (\d+) assertions?\)"),
    "phpunit_ok_but": ("OK, but", r"^OK, but [^\n]{1,80}!"),
    "phpunit_bad": ("!", r"^(FAILURES|ERRORS)!$"),
    "phpunit_counts": ("Tests: ", r"^Tests: (\d+), Assertions: (\d+)(?P<rest>[^\n]{0,200})$"),
    "phpunit_none": ("No tests executed", r"^No tests executed!"),
    "phpunit_failed": ("::", r"^\d+\) (\S{1,200}::\S{1,200})"),
    "php_fatal": ("PHP ", r"^PHP (?:Parse|Fatal) error:[^\n]{0,300}$"),
    "ctest_summary": ("tests passed", r"^(\d+)% tests passed, (\d+) tests? failed out of (\d+)"),
    "ctest_failed_header": ("FAILED", r"^(?:The following tests FAILED:|Errors while running CTest)[ \t]*$"),
    "rspec_failed_header": ("Failed examples:", r"^Failed examples:[ \t]*$"),
    "mocha_test_frame": ("Context.<anonymous>", r"^[ \t]+at Context\.<anonymous> \([^\n]{1,300}\)$"),
    "ctest_total_time": ("Total Test time", r"^Total Test time \(real\) = [^\n]{0,60}$"),
    "ctest_none": ("No tests were found", r"^No tests were found"),
    "ctest_failed": ("- ", r"^[ \t]+\d+ - (\S{1,300}) \((?:Failed|Not Run|Timeout|SEGFAULT|Exception|Subprocess aborted|Child aborted|OTHER_FAULT|ILLEGAL|INTERRUPT|NUMERICAL|BAD_COMMAND|Bus error)"),
    "deno_summary": (" passed ", r"^(ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed"),
    "deno_error": ("error: ", r"^error: (?:Test failed|No test modules found|[^\n]{0,300})"),
    "deno_failing": (" => ", r"^([^\n]{1,300}?) => \S{1,300}:\d+:\d+$"),
    "bun_ran": ("Ran ", r"^Ran (\d+) tests? across (\d+) files?\."),
    "bun_counts": ("", r"^[ \t]*(\d+) (pass|fail|skip|todo|errors?|snapshots?|expect\(\) calls)[ \t]*$"),
    "bun_fail_item": ("(fail)", r"^\(fail\) ([^\n]{1,300}?)(?: \[[\d.]+m?s\])?$"),
    "bun_bailed": ("Bailed out", r"^Bailed out after (\d+) failures?"),
    "bun_no_tests": ("t", r"^(?:error: )?(?:No tests found|The following filters did not match any test files|0 test files matching)"),
    "tox_env": (": ", r"^[ \t]+(\S{1,60}): (OK|FAIL)(?: code (\d+))? \("),
    "tox_end": (":", r"^[ \t]+(congratulations :\)|evaluation failed :\()"),
    "tox3_env": ("commands ", r"^(?:ERROR: )?[ \t]+(\S{1,60}): commands (succeeded|failed)"),
    "nox_session": ("nox > ", r"^nox > (?:\* )?(?:Session )?(\S{1,100})(?: was successful| failed|: success|: failed| was skipped|: skipped)"),
    "make_error": ("***", r"^g?make(?:\[\d+\])?: \*\*\* [^\n]{0,200}Error (\d+)"),
    "npm_error": ("rror", r"^(?:npm (?:ERR!|error) (?:Test failed|code ELIFECYCLE|Lifecycle script [^\n]{0,100} failed|command failed)|error Command failed with exit code \d+|[ \t]*ELIFECYCLE[ \t]+(?:Test|Command) failed|[ \t]*ERR_PNPM_\w+|error: script \"[^\n]{0,60}\" exited with code \d+)"),
    "plain_summary": ("passed", r"^(?:\w{1,30}: )?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?[ \t]*$"),
    "compile_error": ("rror", r"^(?:\S{1,300}:\d+:\d+: error: |error\[E\d{4}\]: |SyntaxError: |\S{1,300}\.go:\d+:\d+: |ImportError: |ModuleNotFoundError: |error TS\d+: )[^\n]{0,300}$"),
}


def _pattern(name: str) -> re.Pattern:
    pat = _PATTERNS.get(name)
    if pat is None:
        pat = _PATTERNS[name] = re.compile(PATTERN_SOURCES[name][1], re.M)
    return pat


class Text:
    """The examined part of the output: the tail (and head, if cut), ANSI-free."""

    __slots__ = ("text", "full", "_cache")

    def __init__(self, output: str) -> None:
        global _ANSI
        if _ANSI is None:
            _ANSI = re.compile(r"\x1b(?:\[[0-?]{0,30}[ -/]{0,5}[@-~]|\][^\x07\x1b]{0,500}(?:\x07|\x1b\\)|[()][0-9A-Za-z])")
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
            text = _ANSI.sub("", text)
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        self.text = text
        self._cache: dict[str, list[re.Match]] = {}

    def find(self, name: str) -> list[re.Match]:
        got = self._cache.get(name)
        if got is None:
            literal = PATTERN_SOURCES[name][0]
            got = list(_pattern(name).finditer(self.text)) if literal in self.text else []
            self._cache[name] = got
        return got

    def last(self, name: str) -> re.Match | None:
        found = self.find(name)
        return found[-1] if found else None


def _cut(line: str) -> str:
    line = line.strip()
    return line if len(line) <= MAX_LINE else line[:MAX_LINE - 1] + "\u2026"


def _counts(body: str) -> dict[str, int]:
    """'1 failed, 2 passed, 3 total' / '1 failed | 2 passed (3)' -> {'failed': 1, ...}"""
    counts: dict[str, int] = {}
    for part in re.split(r"[,|]", body):
        words = part.split()
        if len(words) >= 2 and words[0].isdigit():
            key = words[1].lower().rstrip(".:")
            counts[key] = counts.get(key, 0) + int(words[0])
    return counts


def _names(matches: list[re.Match], group: int = 1) -> list[str]:
    seen: list[str] = []
    for m in matches:
        name = _cut(m.group(group))
        if name and name not in seen:
            seen.append(name)
        if len(seen) >= MAX_FAILING:
            break
    return seen


# --- per-runner readers: Text -> Finding | None ------------------------------

def read_pytest(t: Text) -> Finding | None:
    interrupted = t.last("pytest_interrupted")
    m = t.last("pytest_summary")
    failing = _names(t.find("pytest_failed_line")) + _names(t.find("pytest_error_line")) + _names(t.find("pytest_collect_error"))
    if m is not None:
        body = m.group("body")
        c = _counts(body)
        evidence = [_cut(m.group(0))]
        if interrupted is not None:
            evidence.insert(0, _cut(interrupted.group(0)))
        if c.get("failed", 0) or c.get("error", 0) or c.get("errors", 0) or interrupted is not None:
            return Finding("pytest", FAIL, m.start(), evidence, failing)
        ran = c.get("passed", 0) + c.get("xfailed", 0) + c.get("xpassed", 0)
        return Finding("pytest", PASS if ran else ZERO, m.start(), evidence)
    if interrupted is not None:
        return Finding("pytest", FAIL, interrupted.start(), [_cut(interrupted.group(0))], failing)
    return None


def markers_pytest(t: Text) -> Finding | None:
    verbose = t.find("pytest_verbose_failed")  # `pytest -v`: `path::test FAILED [ 50%]`
    hits = t.find("pytest_failed_line") + t.find("pytest_collect_error") + verbose
    progress = [m for m in t.find("pytest_progress") if "F" in m.group(0).rsplit(".py ", 1)[1] or "E" in m.group(0).rsplit(".py ", 1)[1]]
    if hits or progress:
        first = (hits or progress)[0]
        return Finding("pytest", FAIL, first.start(), [_cut(first.group(0))], _names(t.find("pytest_failed_line")) + _names(t.find("pytest_collect_error")) + _names(verbose))
    return None


def read_unittest(t: Text) -> Finding | None:
    m = t.last("unittest_ran")
    if m is None:
        return None
    status = m.group("status")
    ran = int(m.group(1))
    evidence = [_cut(x) for x in m.group(0).split("\n") if x.strip()]
    if status == "FAILED":
        failing = [f"{a} ({b})" if "." not in b else b for a, b in ((x.group(1), x.group(2)) for x in t.find("unittest_fail_line"))][:MAX_FAILING]
        return Finding("unittest", FAIL, m.start(), evidence, failing)
    if status == "NO TESTS RAN" or ran == 0:
        return Finding("unittest", ZERO, m.start(), evidence)
    return Finding("unittest", PASS, m.start(), evidence)


def markers_unittest(t: Text) -> Finding | None:
    hits = t.find("unittest_fail_line")
    if hits:
        return Finding("unittest", FAIL, hits[0].start(), [_cut(hits[0].group(0))], _names(hits, 2))
    return None


def read_jest(t: Text) -> Finding | None:
    tests = t.last("jest_tests")
    suites = t.last("jest_suites")
    none = t.last("jest_no_tests")
    if tests is None and suites is None:
        if none is not None:
            return Finding("jest", ZERO, none.start(), [_cut(none.group(0))])
        return None
    anchor = tests or suites
    tc = _counts(tests.group("body")) if tests else {}
    sc = _counts(suites.group("body")) if suites else {}
    evidence = [_cut(m.group(0)) for m in (suites, tests) if m is not None]
    if tc.get("failed", 0) or sc.get("failed", 0):
        failing = [n for n in _names(t.find("jest_failing"))]
        if not failing:
            failing = _names(t.find("jest_file_fail"))
        return Finding("jest", FAIL, anchor.start(), evidence, failing)
    if tc.get("passed", 0):
        return Finding("jest", PASS, anchor.start(), evidence)
    return Finding("jest", ZERO, anchor.start(), evidence)


def markers_jest(t: Text) -> Finding | None:
    hits = t.find("jest_file_fail") + t.find("jest_suite_failed")
    if hits:
        return Finding("jest", FAIL, hits[0].start(), [_cut(hits[0].group(0))], _names(t.find("jest_failing")) or _names(t.find("jest_file_fail")))
    return None


def read_vitest(t: Text) -> Finding | None:
    files = t.last("vitest_files")
    tests = t.last("vitest_tests")
    if files is None:
        none = t.last("vitest_no_files")
        return Finding("vitest", ZERO, none.start(), [_cut(none.group(0))]) if none else None
    fc = _counts(files.group("body"))
    tc = _counts(tests.group("body")) if tests is not None and tests.start() > files.start() else {}
    errors = t.last("vitest_errors")
    evidence = [_cut(files.group(0))] + ([_cut(tests.group(0))] if tc else [])
    if errors is not None and errors.start() > files.start():
        evidence.append(_cut(errors.group(0)))
    if fc.get("failed", 0) or tc.get("failed", 0) or (errors is not None and errors.start() > files.start()):
        return Finding("vitest", FAIL, files.start(), evidence, _names(t.find("vitest_failing")))
    if tc.get("passed", 0) or (not tc and fc.get("passed", 0)):
        return Finding("vitest", PASS, files.start(), evidence)
    return Finding("vitest", ZERO, files.start(), evidence)


def markers_vitest(t: Text) -> Finding | None:
    hits = t.find("vitest_failing")
    if hits:
        return Finding("vitest", FAIL, hits[0].start(), [_cut(hits[0].group(0))], _names(hits))
    return None


def read_mocha(t: Text) -> Finding | None:
    passing = t.last("mocha_passing")
    if passing is None:
        return None
    after = [m for m in t.find("mocha_failing") if m.start() > passing.start()]
    evidence = [_cut(passing.group(0))] + [_cut(m.group(0)) for m in after[:1]]
    if after and int(after[0].group(1)):
        items = [m for m in t.find("mocha_failure_item") if m.start() > after[0].start()]
        failing = []
        for m in items:
            name = _cut(m.group(2)).rstrip(":")
            if name not in failing:
                failing.append(name)
        return Finding("mocha", FAIL, passing.start(), evidence, failing[:MAX_FAILING])
    if int(passing.group(1)):
        return Finding("mocha", PASS, passing.start(), evidence)
    return Finding("mocha", ZERO, passing.start(), evidence)


def _tap_counts(t: Text) -> tuple[dict[str, int], list[re.Match]]:
    """The LAST block of '# tests N / # pass N / # fail N' comment lines."""
    found = t.find("tap_counts")
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
    lines = t.find("tap_line")
    top = [m for m in lines if _directive(m.group(3)) is None]
    not_ok = [m for m in top if m.group(1)]
    plans = t.find("tap_plan")
    bail = t.last("tap_bail")
    failing = _names(not_ok, 3) + _names(t.find("node_spec_fail"))
    if block and ("tests" in counts or "pass" in counts or "fail" in counts):
        anchor = block[-1].start()
        evidence = [_cut(m.group(0)) for m in block if m.group(1) in ("tests", "pass", "fail", "ok", "cancelled")]
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
        return Finding(runner, FAIL, bail.start(), [_cut(bail.group(0))], failing)
    if not lines and not plans:
        return None
    plan = plans[-1] if plans else None
    anchor = max([m.start() for m in lines[-1:]] + [plan.start() if plan else 0])
    if not_ok:
        return Finding(runner, FAIL, anchor, [_cut(m.group(0)) for m in not_ok[:MAX_EVIDENCE]], failing)
    if plan is not None:
        planned = int(plan.group(1))
        if planned == 0:
            return Finding(runner, ZERO, plan.start(), [_cut(plan.group(0))])
        ok_count = len([m for m in lines if not m.group(1) and m.group(0)[:1] == "o"])
        really_ok = [m for m in lines if not m.group(1) and _directive(m.group(3)) is None]
        if ok_count >= planned and not really_ok:
            return Finding(runner, ZERO, plan.start(), [_cut(plan.group(0)), "every test skipped"])
        if ok_count >= planned:
            return Finding(runner, PASS, anchor, [_cut(plan.group(0)), f"{ok_count} ok"])
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


def markers_tap(t: Text, runner: str = "tap") -> Finding | None:
    not_ok = [m for m in t.find("tap_line") if m.group(1) and _directive(m.group(3)) is None]
    if not_ok:
        return Finding(runner, FAIL, not_ok[0].start(), [_cut(not_ok[0].group(0))], _names(not_ok, 3))
    return None


def read_node(t: Text) -> Finding | None:
    return read_tap(t, "node")


def read_tape(t: Text) -> Finding | None:
    return read_tap(t, "tape")


def read_bats(t: Text) -> Finding | None:
    pretty = t.last("bats_pretty")
    if pretty is not None:
        failures = int(pretty.group(2))
        if failures:
            return Finding("bats", FAIL, pretty.start(), [_cut(pretty.group(0))], _names(t.find("node_spec_fail")) or _names([m for m in t.find("tap_line") if m.group(1)], 3))
        return Finding("bats", PASS if int(pretty.group(1)) else ZERO, pretty.start(), [_cut(pretty.group(0))])
    return read_tap(t, "bats")


def read_tap18(t: Text) -> Finding | None:
    asserts = t.last("tap18_asserts")
    total = t.last("tap18_total")
    if asserts is None and total is None:
        return read_tap(t, "tap")
    failing = _names(t.find("tap18_file"))
    if asserts is not None:
        fails = int(asserts.group(2))
        evidence = [_cut(asserts.group(0))] + ([_cut(total.group(0))] if total else [])
        if fails:
            return Finding("tap", FAIL, asserts.start(), evidence, failing)
        return Finding("tap", PASS if int(asserts.group(1)) else ZERO, asserts.start(), evidence)
    fails = int(total.group(3) or 0)
    if fails:
        return Finding("tap", FAIL, total.start(), [_cut(total.group(0))], failing)
    return Finding("tap", PASS if int(total.group(1)) else ZERO, total.start(), [_cut(total.group(0))])


def read_prove(t: Text) -> Finding | None:
    result = t.last("prove_result")
    files = t.last("prove_files")
    ok = t.last("prove_all_ok")
    failing = _names(t.find("prove_failed_file"))
    if result is not None:
        status = {"PASS": PASS, "FAIL": FAIL, "NOTESTS": ZERO}[result.group(1)]
        evidence = [_cut(m.group(0)) for m in (files, result) if m is not None]
        return Finding("prove", status, result.start(), evidence, failing if status == FAIL else [])
    if ok is not None:
        return Finding("prove", PASS, ok.start(), [_cut(ok.group(0))])
    return read_tap(t, "prove")


def read_go(t: Text) -> Finding | None:
    js = t.find("go_json")
    if js:
        return _read_go_json(t, js)
    pkgs = t.find("go_pkg")
    pkgs = [m for m in pkgs if m.group(1) != "?   " or "[no test files]" in m.group(3)]
    pkgs = [m for m in pkgs if m.group(1) == "?   " or _looks_like_go_timing(m.group(3))]
    # a package's last status line is its result (a test may print one earlier)
    last_by_pkg: dict[str, re.Match] = {}
    for m in pkgs:
        last_by_pkg[m.group(2)] = m
    pkgs = sorted(last_by_pkg.values(), key=lambda m: m.start())
    failed_tests = _names(t.find("go_test_fail"))
    bare = t.last("go_bare")
    full_fail = _go_fail_anywhere(t)
    if pkgs:
        bad = [m for m in pkgs if m.group(1) == "FAIL"]
        good = [m for m in pkgs if m.group(1) == "ok  "]
        anchor = pkgs[-1].start()
        if bad or full_fail:
            evidence = [_cut(m.group(0)) for m in bad[:MAX_EVIDENCE]] or [full_fail]
            return Finding("go", FAIL, anchor, evidence, failed_tests)
        if any("[no tests to run]" not in m.group(3) for m in good):
            return Finding("go", PASS, anchor, [_cut(m.group(0)) for m in good[-MAX_EVIDENCE:]])
        return Finding("go", ZERO, anchor, [_cut(m.group(0)) for m in pkgs[-MAX_EVIDENCE:]])
    if bare is not None:
        status = FAIL if bare.group(1) == "FAIL" else PASS
        return Finding("go", status, bare.start(), [_cut(bare.group(0))], failed_tests if status == FAIL else [])
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
                return _cut(line)
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
    hits = t.find("go_test_fail") + t.find("go_build_error") + t.find("go_panic")
    if hits:
        hits.sort(key=lambda m: m.start())
        return Finding("go", FAIL, hits[0].start(), [_cut(hits[0].group(0))], _names(t.find("go_test_fail")))
    return None


def read_cargo(t: Text) -> Finding | None:
    results = t.find("cargo_result")
    nextest = t.last("nextest_summary")
    failed_names = _names(t.find("cargo_test_failed"))
    errors = [m for m in t.find("cargo_error") if "test failed" in m.group(0) or "could not compile" in m.group(0)]
    if nextest is not None:
        status = FAIL if int(nextest.group(3)) else (PASS if int(nextest.group(1)) else ZERO)
        return Finding("cargo", status, nextest.start(), [_cut(nextest.group(0))], failed_names)
    if results:
        bad = [m for m in results if m.group(1) == "FAILED" or int(m.group(3))]
        anchor = results[-1].start()
        if bad or errors:
            evidence = [_cut(m.group(0)) for m in bad[:2]] + [_cut(m.group(0)) for m in errors[:1]]
            return Finding("cargo", FAIL, anchor, evidence or ["test result: FAILED"], failed_names)
        if any(int(m.group(2)) for m in results):
            return Finding("cargo", PASS, anchor, [_cut(m.group(0)) for m in results[-2:]])
        if "Running " not in t.text and "Doc-tests " not in t.text:
            # only the last (doc-test) result is visible: cargo stops at the first
            # failing binary, so an `ok` here closes a run with nothing failed
            return Finding("cargo", PASS, anchor, [_cut(m.group(0)) for m in results[-2:]])
        return Finding("cargo", ZERO, anchor, [_cut(m.group(0)) for m in results[-2:]])
    if errors:
        return Finding("cargo", FAIL, errors[-1].start(), [_cut(m.group(0)) for m in errors[-2:]], failed_names)
    return None


def markers_cargo(t: Text) -> Finding | None:
    hits = t.find("cargo_test_failed") + [m for m in t.find("cargo_error") if m.group(0).startswith("error[E")]
    if hits:
        hits.sort(key=lambda m: m.start())
        return Finding("cargo", FAIL, hits[0].start(), [_cut(hits[0].group(0))], _names(t.find("cargo_test_failed")))
    return None


def read_rspec(t: Text) -> Finding | None:
    m = t.last("rspec_summary")
    if m is None:
        return None
    examples, failures = int(m.group(1)), int(m.group(2))
    errors = int(m.group(4) or 0)
    if failures or errors:
        failing = [f"{d} ({p})" for p, d in ((x.group(1), x.group(2)) for x in t.find("rspec_failed"))][:MAX_FAILING]
        return Finding("rspec", FAIL, m.start(), [_cut(m.group(0))], failing)
    return Finding("rspec", PASS if examples - int(m.group(3) or 0) > 0 else ZERO, m.start(), [_cut(m.group(0))])


def read_minitest(t: Text) -> Finding | None:
    m = t.last("minitest_summary")
    if m is None:
        return None
    runs, failures, errors, skips = int(m.group(1)), int(m.group(3)), int(m.group(4)), int(m.group(5))
    runs -= skips
    if failures or errors:
        return Finding("minitest", FAIL, m.start(), [_cut(m.group(0))], _names(t.find("minitest_failed")))
    return Finding("minitest", PASS if runs else ZERO, m.start(), [_cut(m.group(0))])


def read_phpunit(t: Text) -> Finding | None:
    ok = t.last("phpunit_ok")
    ok_but = t.last("phpunit_ok_but")
    bad = t.last("phpunit_bad")
    counts = t.last("phpunit_counts")
    none = t.last("phpunit_none")
    cands = [m for m in (ok, ok_but, bad, none) if m is not None]
    if not cands:
        return None
    last = max(cands, key=lambda m: m.start())
    evidence = [_cut(last.group(0))] + ([_cut(counts.group(0))] if counts is not None and counts.start() > last.start() else [])
    if last is bad:
        return Finding("phpunit", FAIL, last.start(), evidence, _names(t.find("phpunit_failed")))
    if last is none:
        return Finding("phpunit", ZERO, last.start(), evidence)
    if last is ok and int(ok.group(1)) == 0:
        return Finding("phpunit", ZERO, last.start(), evidence)
    return Finding("phpunit", PASS, last.start(), evidence)


def markers_phpunit(t: Text) -> Finding | None:
    m = t.last("php_fatal")
    return Finding("phpunit", FAIL, m.start(), [_cut(m.group(0))]) if m else None


def read_ctest(t: Text) -> Finding | None:
    m = t.last("ctest_summary")
    if m is None:
        none = t.last("ctest_none")
        if none is not None:
            return Finding("ctest", ZERO, none.start(), [_cut(none.group(0))])
        total = t.last("ctest_total_time")
        failed_after = [h for h in t.find("ctest_failed_header") if total is not None and h.start() > total.start()]
        if total is not None and not failed_after:
            # ctest lists failures right after this closing line; none follow it
            return Finding("ctest", PASS, total.start(), [_cut(total.group(0))])
        return None
    failed, total = int(m.group(2)), int(m.group(3))
    if failed:
        return Finding("ctest", FAIL, m.start(), [_cut(m.group(0))], _names(t.find("ctest_failed")))
    return Finding("ctest", PASS if total else ZERO, m.start(), [_cut(m.group(0))])


def markers_ctest(t: Text) -> Finding | None:
    hits = t.find("ctest_failed_header")
    return Finding("ctest", FAIL, hits[0].start(), [_cut(m.group(0)) for m in hits[:2]], _names(t.find("ctest_failed"))) if hits else None


def markers_rspec(t: Text) -> Finding | None:
    hits = t.find("rspec_failed_header") + t.find("rspec_failed")
    if not hits:
        return None
    failing = [f"{d} ({p})" for p, d in ((x.group(1), x.group(2)) for x in t.find("rspec_failed"))][:MAX_FAILING]
    return Finding("rspec", FAIL, hits[0].start(), [_cut(hits[0].group(0))], failing)


def markers_mocha(t: Text) -> Finding | None:
    # mocha prints failure details (with the test body's stack frame) after its summary
    hits = t.find("mocha_test_frame")
    return Finding("mocha", FAIL, hits[0].start(), [_cut(hits[0].group(0))]) if hits else None


def read_deno(t: Text) -> Finding | None:
    m = t.last("deno_summary")
    errors = [e for e in t.find("deno_error") if not e.group(0).startswith("error: No test modules")]
    none = [e for e in t.find("deno_error") if e.group(0).startswith("error: No test modules")]
    failing = _names(t.find("deno_failing"))
    if m is not None:
        passed, failed = int(m.group(2)), int(m.group(3))
        if m.group(1) == "FAILED" or failed:
            return Finding("deno", FAIL, m.start(), [_cut(m.group(0))], failing)
        late_errors = [e for e in errors if e.start() > m.start()]
        if late_errors:
            return Finding("deno", FAIL, late_errors[-1].start(), [_cut(m.group(0)), _cut(late_errors[-1].group(0))], failing)
        return Finding("deno", PASS if passed else ZERO, m.start(), [_cut(m.group(0))])
    if none:
        return Finding("deno", ZERO, none[-1].start(), [_cut(none[-1].group(0))])
    if errors:
        return Finding("deno", FAIL, errors[-1].start(), [_cut(errors[-1].group(0))], failing)
    return None


def read_bun(t: Text) -> Finding | None:
    ran = t.last("bun_ran")
    counts_m = t.find("bun_counts")
    none = t.last("bun_no_tests")
    if ran is None and none is None:
        return None
    if ran is None:
        return Finding("bun", ZERO, none.start(), [_cut(none.group(0))])
    bailed = t.last("bun_bailed")
    if bailed is not None and bailed.start() > ran.start():
        # `--bail`: no count block, only "Bailed out after N failure(s)"
        return Finding("bun", FAIL, bailed.start(), [_cut(ran.group(0)), _cut(bailed.group(0))], _names(t.find("bun_fail_item")))
    block = [m for m in counts_m if 0 < ran.start() - m.start() < 600]
    counts: dict[str, int] = {}
    for m in block:
        key = m.group(2).split()[0].rstrip("s") if m.group(2).startswith("error") else m.group(2)
        counts[key] = int(m.group(1))
    evidence = [_cut(m.group(0)) for m in block if m.group(2) in ("pass", "fail")] + [_cut(ran.group(0))]
    if counts.get("fail", 0) or counts.get("error", 0):
        return Finding("bun", FAIL, ran.start(), evidence, _names(t.find("bun_fail_item")))
    if counts.get("pass", 0) or ("pass" not in counts and "fail" in counts and int(ran.group(1))):
        return Finding("bun", PASS, ran.start(), evidence)
    return Finding("bun", ZERO, ran.start(), evidence)


def markers_bun(t: Text) -> Finding | None:
    hits = t.find("bun_fail_item")
    return Finding("bun", FAIL, hits[0].start(), [_cut(hits[0].group(0))], _names(hits)) if hits else None


def read_plain(t: Text) -> Finding | None:
    m = t.last("plain_summary")
    if m is None:
        return None
    passed, failed = int(m.group(1)), int(m.group(2))
    status = FAIL if failed else (PASS if passed else ZERO)
    return Finding("unknown", status, m.start(), [_cut(m.group(0))])


# wrappers: their own status lines (inner runner summaries decide first)
def read_tox(t: Text) -> Finding | None:
    envs = t.find("tox_env") + t.find("tox3_env")
    end = t.last("tox_end")
    if end is None and not envs:
        return None
    bad = [m for m in envs if m.group(2) in ("FAIL", "failed")]
    anchor = end.start() if end is not None else envs[-1].start()
    evidence = [_cut(m.group(0)) for m in (bad or envs)[:MAX_EVIDENCE]] + ([_cut(end.group(0))] if end is not None else [])
    failed = bad or (end is not None and "failed" in end.group(1))
    return Finding("tox", FAIL if failed else PASS, anchor, evidence)


def read_nox(t: Text) -> Finding | None:
    sessions = t.find("nox_session")
    if not sessions:
        return None
    bad = [m for m in sessions if "failed" in m.group(0)]
    good = [m for m in sessions if "success" in m.group(0)]
    if bad:
        return Finding("nox", FAIL, bad[-1].start(), [_cut(m.group(0)) for m in bad[:MAX_EVIDENCE]])
    if good:
        return Finding("nox", PASS, good[-1].start(), [_cut(good[-1].group(0))])
    return Finding("nox", ZERO, sessions[-1].start(), [_cut(sessions[-1].group(0))])


def read_wrapper_error(t: Text) -> Finding | None:
    hits = t.find("make_error") + t.find("npm_error")
    if not hits:
        return None
    hits.sort(key=lambda m: m.start())
    return Finding("wrapper", FAIL, hits[-1].start(), [_cut(hits[-1].group(0))])


# runner -> (summary reader, failure-marker reader or None)
READERS = {
    "pytest": (read_pytest, markers_pytest),
    "unittest": (read_unittest, markers_unittest),
    "jest": (read_jest, markers_jest),
    "vitest": (read_vitest, markers_vitest),
    "mocha": (read_mocha, markers_mocha),
    "node": (read_node, markers_tap),
    "tape": (read_tape, markers_tap),
    "tap": (read_tap18, None),
    "prove": (read_prove, markers_tap),
    "bats": (read_bats, markers_tap),
    "go": (read_go, markers_go),
    "cargo": (read_cargo, markers_cargo),
    "rspec": (read_rspec, markers_rspec),
    "minitest": (read_minitest, None),
    "phpunit": (read_phpunit, markers_phpunit),
    "ctest": (read_ctest, markers_ctest),
    "deno": (read_deno, None),
    "bun": (read_bun, markers_bun),
}
# when the command names no runner: try these, most specific first (generic TAP last)
# (bats' pretty `N tests, N failures` line is generic: the generic grammar reads it
# and says so, instead of naming bats for an ExUnit or shell-unit summary)
UNKNOWN_RUNNER_ORDER = ("pytest", "unittest", "jest", "vitest", "mocha", "go", "cargo", "rspec", "minitest", "phpunit", "ctest", "deno", "bun", "tap", "prove", "node")
# runners whose TAP-ish output also counts for the runner
RUNNER_ALSO = {"tap": ("node", "tape"), "tape": ("node",), "prove": (), "bats": (), "node": ("tape",), "karma": ("jest",), "ava": ("tap",)}

# runner -> exit code -> meaning, when the runner's status reaches the exit code
EXIT_MEANINGS = {
    "pytest": {0: PASS, 1: FAIL, 2: FAIL, 5: ZERO},
    "unittest": {0: PASS, 1: FAIL, 5: ZERO},
    "jest": {0: PASS, 1: FAIL}, "vitest": {0: PASS, 1: FAIL},
    "node": {0: PASS, 1: FAIL}, "tape": {0: PASS, 1: FAIL}, "tap": {0: PASS, 1: FAIL}, "bats": {0: PASS, 1: FAIL},
    "go": {0: PASS, 1: FAIL, 2: FAIL}, "cargo": {0: PASS, 101: FAIL, 1: FAIL},
    "ctest": {0: PASS, 8: FAIL}, "rspec": {0: PASS, 1: FAIL}, "minitest": {0: PASS, 1: FAIL},
    "phpunit": {0: PASS, 1: FAIL, 2: FAIL, 255: FAIL}, "deno": {0: PASS, 1: FAIL}, "bun": {0: PASS, 1: FAIL},
    "doctest": {0: PASS, 1: FAIL},
}
# mocha and prove exit with the number of failures
COUNTING_EXITS = frozenset(("mocha", "prove"))
# the shell's own codes: the runner did not run or was killed; says nothing about tests
SHELL_CODES = {126: "not executable", 127: "command not found", 124: "timed out", 130: "interrupted", 137: "killed", 143: "terminated"}


def _exit_meaning(runner: str | None, code: int) -> str | None:
    if code in SHELL_CODES or runner is None:
        return None
    if runner == DECLARED:  # the project said this command is its test run: its status is the verdict
        return PASS if code == 0 else FAIL
    if runner in COUNTING_EXITS:
        return PASS if code == 0 else (FAIL if 0 < code < 126 else None)
    return EXIT_MEANINGS.get(runner, {}).get(code)


def _findings(t: Text, runners: list[str], with_markers: bool) -> list[Finding]:
    out: list[Finding] = []
    for runner in runners:
        read, markers = READERS[runner]
        f = read(t)
        if f is None and with_markers and markers is not None:
            f = markers(t)
            if f is not None:
                f.status = "marker"
        if f is not None:
            out.append(f)
    return out


DECLARED = "project"  # the runner name of a command declared in `[tests] commands`


def judge_test_run(command: str, exit_code: int | None, output: str, tests_config: object | None = None,
                   shape: CommandShape | None = None) -> TestVerdict:
    """Verdict on one Bash call: 'fail', 'pass', 'not_test' or 'unknown'.
    `tests_config` (ralph.rules.outcome.tests_config.TestsConfig) adds the project's own
    test commands and their fail/pass patterns; `shape`, the command's
    command_shape() when the caller already has it."""
    command = command if isinstance(command, str) else ""
    output = output if isinstance(output, str) else ""
    if shape is None:
        shape = command_shape(command, tuple(getattr(tests_config, "commands", ()) or ()))
    if shape.kind is None:
        return TestVerdict(NOT_TEST)
    t = Text(output)
    runner = shape.runner if shape.runner in READERS else None
    if runner is not None:
        runners = [runner] + [r for r in RUNNER_ALSO.get(runner, ()) if r in READERS]
    else:
        runners = list(UNKNOWN_RUNNER_ORDER)
    findings = _findings(t, runners, with_markers=True)
    if runner is None:
        plain = read_plain(t)
        if plain is not None:
            findings.append(plain)
    if not any(f.status in (FAIL, PASS, ZERO) for f in findings) and shape.runner == DECLARED:
        findings.extend(_declared_findings(output, tests_config))
    if not any(f.status in (FAIL, PASS, ZERO) for f in findings):
        findings.extend(_generic_findings(t, shape, exit_code))
    wrapper = None
    if shape.wrapper in ("tox", "nox"):
        wrapper = read_tox(t) if shape.wrapper == "tox" else read_nox(t)
    if wrapper is None and shape.kind == "wrapper":
        wrapper = read_wrapper_error(t)
    return _decide(shape, exit_code, findings, wrapper, t)


GENERIC_NOTE = "read with the generic summary grammar (no dedicated reader for this runner)"


def _declared_findings(output: str, tests_config: object | None) -> list[Finding]:
    """`[tests] fail_patterns` / `pass_patterns` for a declared test command."""
    if tests_config is None:
        return []
    from ralph.rules.outcome.tests_config import pattern_verdict

    found = pattern_verdict(output, tests_config)
    if found is None:
        return []
    return [Finding(DECLARED, FAIL if found[0] == "fail" else PASS, len(output), [found[1], f"matched a [tests] {found[0]}_patterns entry"])]


def _generic_findings(t: Text, shape: CommandShape, exit_code: int | None) -> list[Finding]:
    """The generic layer (ralph.rules.outcome.generic) when no runner's own summary was read."""
    from ralph.rules.outcome import generic

    summary = generic.read_generic(t.text)
    if summary is not None:
        return [Finding("generic", summary.status, summary.pos, summary.evidence + [GENERIC_NOTE], summary.failing)]
    # failure markers in cut or filtered output (`| head`, `| grep`), or beside a failing exit
    if not shape.exit_decisive or exit_code not in (None, 0):
        marks = generic.failure_markers(t.text)
        if marks is not None:
            return [Finding("generic", "marker", 0, marks[0] + ["failure markers read by the generic layer"], marks[1])]
    return []


def _who(f: Finding, named: str | None) -> str | None:
    if f.runner == "unknown":
        return named
    if f.runner == "generic":
        return named or "generic"
    return f.runner


HUNG_CODES = {124: "timed out (`timeout` exit 124)", 137: "killed (SIGKILL, exit 137)", 143: "terminated (SIGTERM, exit 143)"}


def _hung(shape: CommandShape, exit_code: int | None, t: Text | None) -> TestVerdict | None:
    """A test run stopped by `timeout` or a signal did not pass: fail, naming the
    test that was running when the output shows it."""
    if exit_code not in HUNG_CODES or not shape.exit_decisive or t is None:
        return None
    from ralph.rules.outcome.generic import running_test

    running = running_test(t.text)
    if shape.kind not in ("runner", "wrapper") and running is None:
        return None  # a program merely named like a test, with nothing showing a test running
    evidence = [f"exit code {exit_code}: the test run {HUNG_CODES[exit_code]} before it finished"]
    if running:
        evidence.append(f"running when it stopped: {running}")
    return TestVerdict(FAIL, shape.runner, evidence, [running] if running else [])


def _decide(shape: CommandShape, exit_code: int | None, findings: list[Finding], wrapper: Finding | None, t: Text | None = None) -> TestVerdict:
    summaries = [f for f in findings if f.status in (FAIL, PASS, ZERO)]
    markers = [f for f in findings if f.status == "marker"]
    named = shape.runner
    exit_note = [] if exit_code is None else [f"exit code {exit_code}" + (f" (masked by `{shape.mask}`)" if shape.mask else "")]
    if summaries:
        failed = [f for f in summaries if f.status == FAIL]
        if failed:
            f = failed[-1]
            return TestVerdict(FAIL, _who(f, named), f.evidence[:MAX_EVIDENCE + 1] + exit_note, f.failing[:MAX_FAILING])
        passed = [f for f in summaries if f.status == PASS]
        final = max(summaries, key=lambda f: f.pos)
        who = _who(final, named)
        if not passed:
            return TestVerdict(UNKNOWN, who, ["no tests ran"] + final.evidence[:MAX_EVIDENCE] + exit_note)
        f = max(passed, key=lambda f: f.pos)
        who = _who(f, named)
        # The summary says passed; does the runner's own exit status disagree?
        if exit_code and shape.exit_decisive and exit_code not in SHELL_CODES:
            if shape.kind == "runner":
                return TestVerdict(FAIL, who, f.evidence[:MAX_EVIDENCE] + exit_note + ["the runner exited non-zero although its summary reports no failures"])
            return TestVerdict(UNKNOWN, who, f.evidence[:MAX_EVIDENCE] + (wrapper.evidence[:2] if wrapper else []) + exit_note + ["tests passed but the command failed after them"])
        if wrapper is not None and wrapper.status == FAIL:
            return TestVerdict(UNKNOWN, who, f.evidence[:MAX_EVIDENCE] + wrapper.evidence[:2] + ["tests passed but the wrapper reports a failure"])
        return TestVerdict(PASS, who, f.evidence[:MAX_EVIDENCE] + exit_note)
    if markers:
        f = markers[0]
        return TestVerdict(FAIL, _who(f, named), f.evidence[:MAX_EVIDENCE] + exit_note + ["no closing summary visible (output cut or run aborted)"], f.failing[:MAX_FAILING])
    if wrapper is not None and wrapper.runner in ("tox", "nox"):
        if wrapper.status == FAIL:
            return TestVerdict(FAIL, named or wrapper.runner, wrapper.evidence[:MAX_EVIDENCE] + exit_note)
        if wrapper.status == PASS:
            return TestVerdict(PASS, named or wrapper.runner, wrapper.evidence[:MAX_EVIDENCE] + exit_note)
    if exit_code is None or not shape.exit_decisive:
        why = "exit status unknown" if exit_code is None else f"exit status masked by `{shape.mask}`"
        return TestVerdict(UNKNOWN, named, [f"no test summary visible; {why}"])
    hung = _hung(shape, exit_code, t)
    if hung is not None:
        return hung
    if exit_code in SHELL_CODES:
        return TestVerdict(UNKNOWN, named, exit_note + [SHELL_CODES[exit_code]])
    if shape.kind == "runner":
        meaning = _exit_meaning(named, exit_code)
        if meaning == FAIL and shape.clean_prefix:
            return TestVerdict(FAIL, named, exit_note + [f"{named} exits {exit_code} on failing tests; no summary visible"])
        if meaning == PASS:
            return TestVerdict(PASS, named, exit_note)
        if meaning == ZERO:
            return TestVerdict(UNKNOWN, named, exit_note + ["no tests ran"])
        return TestVerdict(UNKNOWN, named, exit_note + ["no test summary visible"])
    if shape.kind == "wrapper" and exit_code and wrapper is not None and wrapper.status == FAIL:
        return TestVerdict(FAIL, named, wrapper.evidence[:MAX_EVIDENCE] + exit_note + ["the test script failed; no runner summary visible"])
    return TestVerdict(UNKNOWN, named, exit_note + ["no test summary visible"])
