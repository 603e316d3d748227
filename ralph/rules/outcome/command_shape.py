"""The command of a Bash call: does it run tests, which runner, and does the
runner's exit status reach the exit code? Pure: no I/O.

A command whose stages are all non-test programs (grep, cat, git, builds,
installs) is not a test run, whatever it prints. The command is split into
simple commands with the guard's bash parser (ralph.rules.guard.syntax); each
stage is classified by the runner tables below (the program is a runner, a
wrapper such as tox or `npm test`, named like a test, trivial, or other), then
by the generic evidence at the end of this module for what the tables do not
know:

- BDD and other-language runners named by their program, and interpreters
  running test code (`python -m doctest`, `lua tests.lua`, `ruby -e` loading
  minitest), are test stages;
- listing and counting commands (`go test -list`, `ctest -N`, `bats --count`,
  `vitest list`, `cargo test -- --list`) and interpreters that only check
  their script (`bash -n`, `php -l`) run no test;
- a project's own test commands (`[tests] commands`) are test runs too.

The shape keeps the strongest test stage, the runner of the last one (the
shell reports its status), whether anything non-trivial ran before it, and
what masks its status (`| tail`, `|| true`, `; echo`).
"""
from __future__ import annotations

import re

from ralph.rules.guard.programs.facts import SHELLS, unwrap
from ralph.rules.guard.syntax.parser import ShellSyntaxError, TooDeep, parse

DECLARED = "project"  # the runner name of a command declared in `[tests] commands`

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
    ("mvn", "package"): "maven", ("mvn", "install"): "maven", ("./mvnw", "test"): "maven", ("mvnw", "test"): "maven",
    ("./mvnw", "verify"): "maven", ("mvnw", "verify"): "maven", ("playwright", "test"): "playwright",
}
# coverage's `run` options that take a value (`coverage run --source src -m pytest`)
COVERAGE_VALUE_OPTIONS = frozenset(("--source", "--rcfile", "--include", "--omit", "--context", "--concurrency", "--data-file", "--debug"))
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
TESTISH_SOURCE = (r"(?i)(?:^|[\W_])(?:tests?|specs?|check|unittests?|spec_helper|testsuite|checks)(?:$|[\W_])|test_|_test\b|\.test\.|\.spec\.|tests?[-:]|^test"
                  r"|(?:^|[\W_])test[-_]?runner")


def _testish(word: str) -> bool:
    """Is this a name a test script or target would have (run_tests.sh, test:unit, spec/)?"""
    return re.search(TESTISH_SOURCE, word) is not None


class Stage:
    """One simple command; `op` is the operator that follows it ('' at the end)."""

    __slots__ = ("words", "op")

    def __init__(self, words: list[str], op: str) -> None:
        self.words = words
        self.op = op


def shell_stages(command: str, depth: int = 0) -> list[Stage]:
    """Split a shell command into simple commands and the operators between
    them, with the guard's bash parser (ralph.rules.guard.syntax): quotes, escapes,
    heredocs, compound commands as bash reads them; redirections dropped;
    `bash -c '...'` expanded in place. Words keep substitutions as text
    (`$(…)`, `$x`): enough to find the runner, not to expand it."""
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
    if prog in ("coverage", "coverage3") and args[:1] == ["run"]:
        return _classify_coverage(args[1:])
    if prog.startswith("tclsh") or prog == "wish":
        # tcltest's convention is a tests/all.tcl that calls runAllTests; test files are *.test
        script = next((a for a in args if not a.startswith("-")), "")
        return StageKind("runner", "tcltest") if script and (_base(script) == "all.tcl" or _testish(script)) else StageKind("other")
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


def _classify_coverage(args: list[str]) -> StageKind:
    """`coverage run [options] -m pytest ...` / `coverage run [options] script.py`: what it runs."""
    k = 0
    while k < len(args) and args[k].startswith("-") and args[k] != "-m":
        k += 2 if args[k] in COVERAGE_VALUE_OPTIONS else 1
    return _classify_python(args[k:])


def _classify_python(args: list[str]) -> StageKind:
    k = 0
    while k < len(args):
        a = args[k]
        if a == "-m" and k + 1 < len(args) and args[k + 1] == "coverage" and args[k + 2:k + 3] == ["run"]:
            return _classify_coverage(args[k + 3:])
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

    __slots__ = ("kind", "runner", "wrapper", "exit_decisive", "mask", "clean_prefix", "test_stages")

    def __init__(self) -> None:
        self.kind: str | None = None  # 'runner' | 'wrapper' | 'maybe' | None (no test stage)
        self.runner: str | None = None
        self.wrapper: str | None = None
        self.exit_decisive = False
        self.mask = ""  # how the runner's status is hidden, for evidence
        self.clean_prefix = True  # nothing non-trivial ran before the runner
        self.test_stages = 0  # how many stages run tests (two or more: their summaries are separate runs)


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
            shape.test_stages += 1
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


# programs that never run tests and launch nothing: the generic evidence need not look
PLAIN_TOOLS = frozenset(("grep", "egrep", "fgrep", "rg", "ag", "ack", "cat", "bat", "head", "tail", "less", "more", "ls", "find", "fd",
                         "tree", "git", "gh", "sed", "awk", "cut", "sort", "uniq", "wc", "diff", "cp", "mv", "rm", "mkdir", "touch",
                         "chmod", "ln", "curl", "wget", "tar", "jq", "which", "pwd", "stat", "du", "df", "ps", "file", "tee"))


def _generic_stage(words: list[str], kind: StageKind, declared: tuple[str, ...] = ()) -> StageKind:
    """The generic evidence's say on one stage (below): listing and counting
    commands run no test; runners and interpreters running test code that the
    tables above do not know are test stages; so are the project's own test
    commands declared in `[tests] commands`."""
    if kind.kind == "trivial" or (kind.kind == "other" and not declared and words and _base(words[0]) in PLAIN_TOOLS):
        return kind  # the common case: no generic check can change it
    stripped = unwrap(words)
    if is_listing(stripped) or runs_no_code(stripped):
        return StageKind("other")
    if kind.kind == "maybe" and only_reports(stripped):
        return StageKind("other")  # named like a test, but it reports: its summary lines are not a run
    if declared:
        text = " ".join(stripped)
        if any(text == d or text.startswith(d + " ") for d in declared):
            return StageKind("runner", kind.runner if kind.kind == "runner" else DECLARED)
    if kind.kind == "other" or (kind.kind == "maybe" and kind.runner is None):
        found = stage_evidence(stripped)
        if found is not None and (kind.kind == "other" or found[0] == "runner"):
            return StageKind(found[0], found[1])
    return kind


# ---------------------------------------------------------------------------
# Generic evidence: test runs the runner tables do not know, and stages that run no test

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
REPORT_WORDS = r"(?i)(?:^|[\W_])(?:reports?|summary|summari[sz]e|results?|logs?|show|print|coverage|lint|format|stats|history|dashboard|notify|upload)(?:$|[\W_])"
LISTING_SUBCOMMANDS = {"vitest": ("list",), "jest": ("list",), "meson": ("introspect",)}
# for these, a short option is only a listing option when the runner itself is named
SHORT_LISTING = {"-N": ("ctest",), "-d": ("behave",), "--count": ("bats",), "-n": ("make", "gmake", "ninja"), "--just-print": ("make", "gmake"),
                 "--recon": ("make", "gmake"), "-h": None, "-V": None}
# code given on the command line that loads a test framework
TESTISH_CODE = r"(?i)minitest|test/unit|\bTestCase\b|\bunittest\b|\beunit:test|\bExUnit\b|\bdoctest\b|\bpytest\.main\b|\bbusted\b|require[ (]['\"][^'\"]{0,120}_test['\"]"


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


def stage_evidence(words: list[str]) -> tuple[str, str | None] | None:
    """(kind, runner) for a stage the runner tables call 'other', when its
    words show it runs tests; None when they do not. `words` has its exec
    prefixes stripped."""
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
        if script and _testish(script):
            return ("maybe", None)
    return None


TEST_FILE = r"(?:^|/)(?:tests?|spec)/|_test\.\w{1,5}$|_spec\.\w{1,5}$|(?:^|/)test_\w{1,100}\.\w{1,5}$"


def code_runs_tests(args: list[str], flag: str) -> bool:
    """Code given on the command line runs tests only when it loads a test
    framework, or requires the test files named after it (`ruby -Itest -e
    'ARGV.each { |f| require f }' test/a_test.rb`)."""
    at = args.index(flag) + 1
    code = args[at] if at < len(args) else ""
    if re.search(TESTISH_CODE, code):
        return True
    files = [a for a in args[at + 1:] if not a.startswith("-")]
    return bool(files) and re.search(r"\brequire|\bload\b|\bimport\b|\bdofile\b", code) is not None and all(re.search(TEST_FILE, f) for f in files)


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
    elif prog in ("coverage", "coverage3") and words[1:2] == ["run"]:  # its name is not what it runs
        names = [a.rsplit("/", 1)[-1] for a in words[2:] if not a.startswith("-")][:1]
    return any(re.search(REPORT_WORDS, n) for n in names)


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
