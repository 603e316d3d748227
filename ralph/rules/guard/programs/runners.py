"""The models of task runners: what `npm test` and `pytest` will run, read from
their files as this command wrote them or as they are on disk, and the
helpers the other runners' models share (ralph.rules.guard.programs.task_files:
tox, nox, invoke, just, task, pre-commit, cmake, which need the file readers
of ralph.rules.guard.readers).

- npm/pnpm/yarn/bun: the package.json scripts a call runs, with their
  `pre`/`post` scripts, and the lifecycle scripts of installing (`prepare`,
  `preinstall`, `install`, `postinstall`, ...), packing and versioning.
- pytest: the test files and directories given (or the project's
  testpaths), and every conftest.py from the project's top down to them.
- tox: the commands (`commands_pre`, `commands`, `commands_post`) of the
  environments asked for, from tox.ini, setup.cfg or pyproject.toml.
- nox / invoke: the module-level code of noxfile.py / tasks.py and the
  sessions or tasks asked for, with what they call.
- just / task: the recipes or tasks asked for (the default when none is) and
  their dependencies; backticks and `sh:` variables, run while loading.
- pre-commit run: the local hooks (`repo: local`) of .pre-commit-config.yaml.
- cmake -P (and configuring a source tree): execute_process commands and
  file(REMOVE ...); `cmake -E rm` deletes.

What they run is judged as shell commands (Python files as interpreter code).
A file the command wrote is judged as strictly as the command itself; a file
already on disk counts by what it does (ralph.rules.guard.programs.disk_scripts). A
runner file that cannot be read or followed blocks only when it mentions
push/merge, with a reason that says to run its commands plainly.
"""
import posixpath

from ralph import fastjson
from ralph.rules.guard.interp import RUN_PLAINLY, Analysis
from ralph.rules.guard.state import UNKNOWN, Scope, lookup_file, program_name, shell_quote, show

# npm's lifecycle: what a subcommand runs, in order ("<x>" = the named script)
NPM_LIFECYCLE = {
    "install": ("preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"),
    "ci": ("preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"),
    "rebuild": ("preinstall", "install", "postinstall", "prepare"),
    "pack": ("prepack", "prepare", "postpack"),
    "publish": ("prepublishOnly", "prepack", "prepare", "postpack", "publish", "postpublish"),
    "version": ("preversion", "version", "postversion"),
    "test": ("pretest", "test", "posttest"),
    "start": ("prestart", "start", "poststart"),
    "stop": ("prestop", "stop", "poststop"),
    "restart": ("prerestart", "restart", "postrestart"),
    "link": ("preinstall", "install", "postinstall", "prepare"),
}
NPM_ALIASES = {"i": "install", "in": "install", "ins": "install", "inst": "install", "insta": "install", "instal": "install",
               "isnt": "install", "isnta": "install", "isntal": "install", "isntall": "install", "add": "install",
               "clean-install": "ci", "ic": "ci", "install-clean": "ci", "isntall-clean": "ci", "t": "test", "tst": "test",
               "run-script": "run", "rum": "run", "urn": "run", "rb": "rebuild", "ln": "link"}
# subcommands of each package manager that run no project script
PACKAGE_BUILTINS = frozenset(("exec", "dlx", "x", "view", "info", "ls", "list", "outdated", "audit", "why", "config", "get", "set",
                              "cache", "help", "login", "logout", "whoami", "search", "remove", "rm", "uninstall", "un", "update",
                              "up", "upgrade", "init", "create", "store", "licenses", "dedupe", "prune", "fund", "doctor",
                              "explain", "bin", "root", "prefix", "pkg", "query", "owner", "team", "token", "access", "deprecate",
                              "dist-tag", "hook", "org", "profile", "repo", "docs", "bugs", "edit", "explore", "completion",
                              "shrinkwrap", "star", "stars", "unstar", "sbom", "diff", "approve-builds", "patch", "patch-commit"))
PACKAGE_OPTIONS_WITH_VALUE = frozenset(("--prefix", "-C", "--dir", "--cwd", "-w", "--workspace", "--filter", "-F", "--registry",
                                        "--cache", "--userconfig", "--loglevel", "--reporter", "--tag"))
PYTEST_OPTIONS_WITH_VALUE = frozenset(("-k", "-m", "-p", "-c", "-o", "--rootdir", "--confcutdir", "--basetemp", "-W",
                                       "--maxfail", "--tb", "-n", "--numprocesses", "--junitxml", "--junit-xml", "--durations",
                                       "--deselect", "--ignore", "--ignore-glob", "--cov", "--cov-report", "--cov-config",
                                       "--log-level", "--log-file", "--log-cli-level", "--color", "--capture", "--import-mode",
                                       "--override-ini", "--dist", "--timeout", "--count", "-r", "--lf-scope", "--pyargs",
                                       "--html", "--report-log", "--result-log", "--cache-dir", "--durations-min"))
SKIPPED_DIRS = frozenset(("node_modules", "__pycache__", "venv", "site-packages", "build", "dist", "htmlcov"))
MAX_TEST_FILES = 300
MAX_TEST_DIRECTORIES = 1000  # a tree walked for tests: past these, the rest is not read


# ---- shared ----


def find_file(analysis: Analysis, scope: Scope, names: tuple[str, ...], directory: str = "") -> tuple[str, str | None, bool]:
    """(path, text, written by this command) of the first of `names` in
    `directory` that exists; ("", None, False) when none does."""
    for name in names:
        path = posixpath.join(directory, name) if directory and not name.startswith("/") else name
        found, content = lookup_file(scope.files, path)
        if found:
            return path, content, True
        text = analysis.read_project_file(path, scope)
        if text is not None:
            return path, text, False
    return "", None, False


def judge_file(analysis: Analysis, path: str, text: str, written: bool, where: str, judge: object) -> None:
    """Run `judge(target)` on what a runner's file makes run: in this analysis
    when the command wrote the file, else in a probe whose findings count as
    ralph.rules.guard.programs.disk_scripts says."""
    if written:
        judge(analysis)
        return
    probe = analysis.probe()
    probe.note(where, f"reads {show(path)} from disk")
    judge(probe)
    analysis.model("disk_scripts").absorb(analysis, probe, text, where)


def unreadable(analysis: Analysis, path: str, text: str | None, why: str, where: str) -> None:
    """A runner's file the guard cannot follow: fail closed when it mentions push/merge."""
    if text is None or analysis.policy.mentions_push(text):
        analysis.unsure.append((text is not None, f"{why} ({show(path)})", where, "fail-closed.runner-file", RUN_PLAINLY))
        analysis.note(where, f"UNSURE [fail-closed.runner-file]: {why} ({show(path)})")
    else:
        analysis.note(where, f"{why} ({show(path)}); it never mentions push/merge/pull")


def in_directory(scope: Scope, directory: str) -> Scope:
    inner = scope.fork()
    if directory:
        if directory.startswith("/") or UNKNOWN in directory:
            inner.cwd = directory
        else:
            inner.cwd = posixpath.normpath(posixpath.join(scope.cwd, directory)) if scope.cwd else posixpath.normpath(directory)
            inner.cwd = "" if inner.cwd == "." else inner.cwd
    return inner


def judge_python(analysis: Analysis, text: str, scope: Scope, where: str, written: bool, runs: bool = False) -> None:
    """runs: the file's code starts programs by the runner's own API
    (`session.run`, `c.run`), which no import names."""
    analysis.model("shells").judge_code(analysis, "python", text, scope, where, starts_programs=runs, from_disk=not written)


# ---- npm, pnpm, yarn, bun ----


def run_package_scripts(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    name = program_name(argv[0]) or "npm"
    directory = ""
    words: list[str] = []
    ignore_scripts = False
    extra: list[str] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            extra = argv[i + 1:]
            break
        option, eq, value = arg.partition("=")
        if option in PACKAGE_OPTIONS_WITH_VALUE:
            value = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            if option in ("--prefix", "-C", "--dir", "--cwd"):
                directory = value
            if option in ("-w", "--workspace", "--filter", "-F"):
                analysis.note(where, f"{name} runs scripts of workspace {show(value)} (not read)")
                return None
            i += 1 if eq else 2
            continue
        if arg in ("--ignore-scripts",):
            ignore_scripts = True
        elif arg in ("--workspaces", "-ws", "-r", "--recursive"):
            analysis.note(where, f"{name} runs scripts in every workspace (not read)")
            return None
        elif not arg.startswith("-"):
            words.append(arg)
        i += 1
    if name == "yarn" and not words:
        words = ["install"]
    if not words:
        return None
    sub = NPM_ALIASES.get(words[0], words[0])
    if sub in PACKAGE_BUILTINS or (name == "bun" and sub in ("test", "build", "upgrade", "pm")):
        return None
    if sub == "run":
        if len(words) < 2:
            return None
        scripts = [words[1]]
        extra = extra or words[2:]
        order = ("pre" + words[1], words[1], "post" + words[1])
    elif sub in NPM_LIFECYCLE:
        if sub in ("install", "ci", "rebuild", "link") and ignore_scripts:
            return None
        order = NPM_LIFECYCLE[sub]
        scripts = [sub]
    elif name in ("yarn", "pnpm", "bun"):
        # `yarn build`, `pnpm lint`, `bun dev`: a script of that name
        order = ("pre" + sub, sub, "post" + sub)
        scripts = [sub]
        extra = extra or words[1:]
    else:
        return None
    inner = in_directory(scope, directory)
    path, text, written = find_file(analysis, inner, ("package.json",), "")
    if text is None:
        if path or written:
            unreadable(analysis, "package.json", None, f"{name} {sub} runs scripts from a package.json the guard cannot see", where)
        return None
    try:
        document = fastjson.loads(text)
        defined = document.get("scripts") if isinstance(document, dict) else None
    except ValueError:
        unreadable(analysis, path, text, f"{name} {sub} runs scripts from a package.json that is not valid JSON", where)
        return None
    if not isinstance(defined, dict):
        return None
    key = ("package.json", name, inner.cwd, scripts[0])
    if key in analysis.memo:
        return None
    analysis.memo.add(key)

    def judge(target: Analysis) -> None:
        for script in order:
            body = defined.get(script)
            if isinstance(body, str) and body.strip():
                if ignore_scripts and script != scripts[0]:
                    continue
                command = body + ("".join(" " + shell_quote(a) for a in extra) if script == scripts[0] else "")
                target.run_script(command, inner.fork(), stdin, f"{where} > {name} script {script!r}")

    judge_file(analysis, path, text, written, where, judge)
    return None


# ---- pytest ----


def run_pytest(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    targets = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("--help", "-h", "--version", "-V", "--co", "--collect-only", "--fixtures", "--markers"):
            if arg not in ("--co", "--collect-only"):
                return None
        if arg.split("=", 1)[0] in PYTEST_OPTIONS_WITH_VALUE and "=" not in arg:
            i += 2
            continue
        if not arg.startswith("-"):
            targets.append(arg.split("::", 1)[0])
        i += 1
    if not targets:
        targets = _testpaths(analysis, scope) or ["."]
    files: list[str] = []
    for target in targets:
        if UNKNOWN in target:
            continue
        _collect_tests(analysis, scope, target, files)
    seen: set[str] = set()
    for path in files:
        if path in seen:
            continue
        seen.add(path)
        found, content = lookup_file(scope.files, path)
        written = found
        text = content if found else analysis.read_project_file(path, scope)
        if text is None:
            continue
        judge_file(analysis, path, text, written, where, lambda target, text=text, written=written, path=path:
                   judge_python(target, text, scope, f"{where} > pytest {show(path)}", written))
    return None


def _testpaths(analysis: Analysis, scope: Scope) -> list[str]:
    """pytest's `testpaths` setting, read crudely from its config files."""
    for name in ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
        text = analysis.read_project_file(name, scope)
        if not text or "testpaths" not in text:
            continue
        line = text.split("testpaths", 1)[1].split("\n", 1)[0].lstrip(" =")
        paths = [w.strip("\"',[] ") for w in line.replace(",", " ").split()]
        return [p for p in paths if p]
    return []


def _collect_tests(analysis: Analysis, scope: Scope, target: str, files: list[str]) -> None:
    """Test files and conftest.py files pytest imports for one target:
    conftest.py from the top of the project down to it, the file itself, or
    every test_*.py / *_test.py / conftest.py below a directory (bounded)."""
    parts = [p for p in target.rstrip("/").split("/") if p not in ("", ".")]
    for depth in range(len(parts)):
        files.append("/".join(parts[:depth] + ["conftest.py"]) if depth else "conftest.py")
    for path in list(scope.files):
        if _is_test_file(path) and (target in (".", "") or path == target or path.startswith(target.rstrip("/") + "/")):
            files.append(path)
    if target.endswith(".py"):
        files.append(target)
        return
    reader = analysis.around.files
    full = analysis.disk_path(target, scope)
    if reader is None or full is None:
        return
    pending = [(target.rstrip("/") or ".", full)]
    count = 0
    directories = 0
    while pending and count < MAX_TEST_FILES and directories < MAX_TEST_DIRECTORIES:
        relative, directory = pending.pop()
        directories += 1
        entries = reader.list_dir(directory)
        for name, is_dir in sorted(entries or []):
            if is_dir:
                if not name.startswith(".") and name not in SKIPPED_DIRS and not name.endswith(".egg-info"):
                    pending.append((f"{relative}/{name}", f"{directory}/{name}"))
            elif _is_test_file(name):
                files.append(f"{relative}/{name}" if relative != "." else name)
                count += 1


def _is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name == "conftest.py" or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))
