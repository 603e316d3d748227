"""The make model: what `make` would run, read from its makefile as make reads it.

The makefile is the one make picks (`-f FILE`, else GNUmakefile, makefile,
Makefile in the directory `-C` names), read as this command wrote it or as
it is on disk, with the files it includes (`include`, `-include`, `sinclude`),
or given on stdin (`-f -`) or with `--eval`. What runs: the `$(shell ...)` of
every variable and directive line and `!=` assignments (make runs them while
reading), then the recipes of the goals asked for (the default goal when none
is: the first target) and of everything they depend on, explicit and
pattern rules, with make's variables expanded (`$(MAKE)` is make, `$$` is
`$`). With `-n` only the recipe lines make still runs (`$(MAKE)`, `+`).

What make would run is then judged as shell commands; a makefile on disk that
cannot be read decides nothing unless the command mentions push/merge.
"""
import posixpath

from ralph.rules.guard.interp import PLAIN_SCRIPT, Analysis
from ralph.rules.guard.state import UNKNOWN, Scope, lookup_file, show

DEFAULT_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
OPTIONS_WITH_VALUE = frozenset(("-f", "--file", "--makefile", "-C", "--directory", "-E", "--eval", "-I", "--include-dir",
                                "-j", "--jobs", "-l", "--load-average", "-o", "--old-file", "--assume-old", "-W", "--what-if",
                                "--new-file", "--assume-new", "-O", "--output-sync", "--debug", "--jobserver-style"))
DRY_RUN = frozenset(("-n", "--just-print", "--dry-run", "--recon", "-q", "--question", "-t", "--touch", "-p",
                     "--print-data-base"))
MAX_DEPTH = 24  # variable references within variable references
MAX_RECIPES = 400


class Makefile:
    """A makefile as make reads it: variables, rules (target -> [(prerequisites,
    recipe lines)]), pattern rules, the default goal and the commands make
    runs while reading."""

    __slots__ = ("variables", "rules", "patterns", "default_goal", "read_time", "one_shell")

    def __init__(self) -> None:
        self.variables: dict[str, str] = {"MAKE": "make", "SHELL": "/bin/sh", "CURDIR": "."}
        self.rules: dict[str, list[tuple[list[str], list[str]]]] = {}
        self.patterns: list[tuple[str, list[str], list[str]]] = []  # (target pattern, prerequisites, recipe)
        self.default_goal = ""
        self.read_time: list[str] = []  # $(shell ...) and != commands, run while the makefile is read
        self.one_shell = False


def run_make(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    files: list[str] = []
    evals: list[str] = []
    directory = ""
    goals: list[str] = []
    assignments: dict[str, str] = {}
    dry = False
    i = 1
    while i < len(argv):
        arg = argv[i]
        value = argv[i + 1] if i + 1 < len(argv) else ""
        option, eq, attached = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if option in OPTIONS_WITH_VALUE and not eq and arg.startswith("-") and len(arg) >= 2:
            _option(option, value, files, evals)
            directory = posixpath.join(directory, value) if option in ("-C", "--directory") else directory
            i += 2
            continue
        if eq and option in OPTIONS_WITH_VALUE:
            _option(option, attached, files, evals)
            directory = posixpath.join(directory, attached) if option == "--directory" else directory
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 2 and arg[1] in "fCEI":
            _option("-" + arg[1], arg[2:], files, evals)
            directory = posixpath.join(directory, arg[2:]) if arg[1] == "C" else directory
        elif arg in DRY_RUN or (arg.startswith("-") and not arg.startswith("--") and any(c in arg[1:] for c in "nqt")):
            dry = True
        elif not arg.startswith("-") and "=" in arg:
            name, _, text = arg.partition("=")
            assignments[name.rstrip(":+?")] = text
        elif not arg.startswith("-"):
            goals.append(arg)
        i += 1
    inner = scope.fork()
    if directory:
        _cd(inner, directory)
    sources: list[tuple[str, str | None, bool]] = []  # (name, text, written by this command or given inline)
    for name in files or []:
        if name in ("-", "/dev/stdin"):
            sources.append((name, stdin, True))
        else:
            sources.append(_read(analysis, name, inner))
    if not files:
        for name in DEFAULT_MAKEFILES:
            found = _read(analysis, name, inner)
            if found[1] is not None:
                sources.append(found)
                break
    for text in evals:
        sources.append(("--eval", text, True))
    if not sources:
        return None
    makefile = Makefile()
    makefile.variables.update(assignments)
    on_disk = []
    for name, text, written in sources:
        if text is None:
            if written or lookup_file(scope.files, name)[0] or name in files:
                analysis.not_sure(False, f"make reads a makefile `{show(name)}` the guard cannot see", where, "fail-closed.makefile",
                                  PLAIN_SCRIPT)
            continue
        if not written:
            on_disk.append(text)
        read_makefile(analysis, makefile, text, inner, 0)
    commands = _commands(makefile, goals, dry)
    run = on_disk and analysis.probe() or analysis
    for command in makefile.read_time + commands:
        run.run_script(command, inner.fork(), "", f"{where} > make recipe")
    if run is not analysis:
        analysis.model("disk_scripts").absorb(analysis, run, "\n".join(on_disk), where)
    return None


def _option(option: str, value: str, files: list[str], evals: list[str]) -> None:
    if option in ("-f", "--file", "--makefile"):
        files.append(value)
    elif option in ("-E", "--eval"):
        evals.append(value)


def _cd(scope: Scope, directory: str) -> None:
    if directory.startswith("/") or UNKNOWN in directory:
        scope.cwd = directory
    else:
        scope.cwd = posixpath.normpath(posixpath.join(scope.cwd, directory)) if scope.cwd else posixpath.normpath(directory)
        scope.cwd = "" if scope.cwd == "." else scope.cwd


def _read(analysis: Analysis, name: str, scope: Scope) -> tuple[str, str | None, bool]:
    found, content = lookup_file(scope.files, posixpath.join(scope.cwd, name) if scope.cwd and not name.startswith("/") else name)
    if found:
        return name, content, True
    return name, analysis.read_project_file(name, scope), False


def read_makefile(analysis: Analysis, makefile: Makefile, text: str, scope: Scope, depth: int) -> None:
    """Read one makefile's text into `makefile` (and the files it includes)."""
    lines = text.replace("\\\r\n", " ").replace("\\\n", " ").splitlines()
    current: list[list[str]] = []  # the recipes the next tab lines belong to
    prefix = "\t"
    defining = ""
    for line in lines:
        analysis.budget.check()
        if defining:
            if line.strip() == "endef":
                defining = ""
            else:
                makefile.variables[defining] = makefile.variables.get(defining, "") + line + "\n"
            continue
        if line.startswith(prefix) and current:
            for recipe in current:
                recipe.append(line[len(prefix):])
            continue
        stripped = line.split("#", 1)[0].strip() if "#" in line and "$(" not in line else line.strip()
        if not stripped:
            continue
        words = stripped.split()
        keyword = words[0]
        if keyword in ("ifeq", "ifneq", "ifdef", "ifndef", "else", "endif"):
            continue  # both branches count: the guard does not know the condition
        if keyword in ("include", "-include", "sinclude") and depth < 8:
            for name in expand(makefile, " ".join(words[1:]), 0).split():
                if UNKNOWN not in name:
                    included = lookup_file(scope.files, name)[1] if lookup_file(scope.files, name)[0] else analysis.read_project_file(name, scope)
                    if included is not None:
                        read_makefile(analysis, makefile, included, scope, depth + 1)
            continue
        if keyword == "define":
            defining = words[1] if len(words) > 1 else ""
            continue
        if keyword in ("export", "override", "unexport", "private"):
            stripped = stripped[len(keyword):].strip()
            if not stripped or "=" not in stripped and ":" not in stripped:
                continue
        current = []
        _collect_shell(makefile, stripped)
        assignment = _assignment(stripped)
        if assignment is not None:
            name, op, value = assignment
            if name == ".RECIPEPREFIX":
                prefix = value[:1] or "\t"
            elif name == ".DEFAULT_GOAL":
                makefile.default_goal = value.strip()
            if op == "!=":
                makefile.read_time.append(expand(makefile, value, 0))
                makefile.variables[name] = UNKNOWN
            elif op == "+=":
                makefile.variables[name] = makefile.variables.get(name, "") + " " + value
            elif op == "?=":
                makefile.variables.setdefault(name, value)
            elif op in (":=", "::=", ":::="):
                makefile.variables[name] = expand(makefile, value, 0)
            else:
                makefile.variables[name] = value
            continue
        if ":" in stripped:
            head, _, rest = stripped.partition(":")
            rest = rest[1:] if rest.startswith(":") else rest
            inline = None
            if ";" in rest:
                rest, _, inline = rest.partition(";")
            if "=" in rest.split("|", 1)[0] and not rest.strip().startswith("="):
                continue  # a target-specific variable
            targets = expand(makefile, head, 0).split()
            prerequisites = [p for p in expand(makefile, rest.replace("|", " "), 0).split()]
            recipe: list[str] = [inline.strip()] if inline is not None and inline.strip() else []
            for target in targets:
                if target == ".ONESHELL":
                    makefile.one_shell = True
                if "%" in target:
                    makefile.patterns.append((target, prerequisites, recipe))
                else:
                    makefile.rules.setdefault(target, []).append((prerequisites, recipe))
                    if not makefile.default_goal and not target.startswith("."):
                        makefile.default_goal = target
            current = [recipe]


def _assignment(line: str) -> tuple[str, str, str] | None:
    """(name, operator, value) of `NAME op value`, None for anything else."""
    for op in (":::=", "::=", ":=", "!=", "?=", "+=", "="):
        at = line.find(op)
        if at > 0:
            colon = line.find(":")
            if 0 <= colon < at and not op.startswith(":"):
                return None  # `target: VAR = value` or a rule
            name = line[:at].strip()
            if name and " " not in name and "$(" not in name[:1]:
                return name, op, line[at + len(op):].strip()
            return None
    return None


def _collect_shell(makefile: Makefile, line: str) -> None:
    """$(shell ...) in a line make reads (not a recipe): run while reading."""
    start = line.find("$(shell ")
    while start >= 0:
        end = _closing(line, start + 1)
        makefile.read_time.append(expand(makefile, line[start + 8:end], 0))
        start = line.find("$(shell ", end)


def _closing(text: str, start: int) -> int:
    depth = 0
    j = start
    while j < len(text):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j
        j += 1
    return len(text)


def expand(makefile: Makefile, text: str, depth: int) -> str:
    """Make's expansion of `$(VAR)`, `${VAR}`, `$X`, `$$`; automatic variables and
    functions the guard does not evaluate become UNKNOWN ($(shell) is judged
    separately)."""
    if "$" not in text:
        return text
    out = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c != "$" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
            continue
        if nxt in "({":
            end = _closing(text.replace("{", "(").replace("}", ")"), i + 1)
            inner = text[i + 2:end]
            i = end + 1
            name = inner.strip()
            if depth < MAX_DEPTH and name in makefile.variables and " " not in name:
                out.append(expand(makefile, makefile.variables[name], depth + 1))
            elif name.startswith("shell "):
                makefile.read_time.append(expand(makefile, name[6:], depth + 1))
                out.append(UNKNOWN)
            elif " " not in name and "," not in name and name not in ("@", "<", "^", "*", "?", "+", "|"):
                out.append("")  # an unset variable expands to nothing
            else:
                out.append(UNKNOWN)
            continue
        out.append(expand(makefile, makefile.variables[nxt], depth + 1) if nxt in makefile.variables and depth < MAX_DEPTH
                   else UNKNOWN if nxt in "@<^*?+|%" else "")
        i += 2
    return "".join(out)


def _commands(makefile: Makefile, goals: list[str], dry: bool) -> list[str]:
    """The recipe lines make runs for these goals, prerequisites first."""
    wanted = goals or ([makefile.default_goal] if makefile.default_goal else [])
    seen: set[str] = set()
    commands: list[str] = []

    def visit(target: str, depth: int) -> None:
        if target in seen or depth > 64 or len(commands) > MAX_RECIPES:
            return
        seen.add(target)
        rules = makefile.rules.get(target)
        if not rules:
            rules = [(prereqs, recipe) for pattern, prereqs, recipe in _matching(makefile, target)]
        for prerequisites, recipe in rules or []:
            for prerequisite in prerequisites:
                visit(prerequisite, depth + 1)
            lines = [_recipe_line(makefile, line, target) for line in recipe]
            if makefile.one_shell and lines:
                lines = ["\n".join(lines)]
            for line in lines:
                if not dry or line.startswith("+") or "make" in line.split():
                    commands.append(line.lstrip("@-+ \t"))

    for goal in wanted:
        visit(goal, 0)
    return [c for c in commands if c.strip()]


def _matching(makefile: Makefile, target: str) -> list[tuple[str, list[str], list[str]]]:
    """Pattern rules (`%.o: %.c`) that can make this target, stem substituted."""
    found = []
    for pattern, prerequisites, recipe in makefile.patterns:
        before, _, after = pattern.partition("%")
        if target.startswith(before) and target.endswith(after) and len(target) >= len(before) + len(after):
            stem = target[len(before):len(target) - len(after)]
            found.append((pattern, [p.replace("%", stem) for p in prerequisites], recipe))
    return found


def _recipe_line(makefile: Makefile, line: str, target: str) -> str:
    variables = makefile.variables
    saved = variables.get("@")
    variables["@"] = target
    try:
        return expand(makefile, line, 0).strip()
    finally:
        if saved is None:
            variables.pop("@", None)
        else:
            variables["@"] = saved
