"""The models of the task runners whose files need a reader of their own
(ralph.rules.guard.readers): tox (tox.ini, setup.cfg, pyproject's
legacy_tox_ini), nox and invoke (the sessions or tasks asked for, with the
module-level code and what they call), just and go-task (the recipes or tasks
asked for and their dependencies, and what runs while loading), pre-commit
(local hooks) and cmake (-P scripts, configuring, `cmake -E rm`). Shared
helpers and the npm/pytest models: ralph.rules.guard.programs.runners.
"""
import posixpath

from ralph.rules.guard.interp import Analysis
from ralph.rules.guard.programs.runners import find_file, in_directory, judge_file, judge_python, unreadable
from ralph.rules.guard.readers import Unreadable, cmake_commands, ini_sections, justfile, python_selection, yaml_load
from ralph.rules.guard.state import UNKNOWN, Scope, program_name, shell_quote, show

TASKFILES = ("Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml", "Taskfile.dist.yml", "taskfile.dist.yml",
             "Taskfile.dist.yaml", "taskfile.dist.yaml")
JUSTFILES = ("justfile", "Justfile", ".justfile", "JUSTFILE")


# ---- tox ----


def run_tox(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    envs: list[str] = []
    config = ""
    posargs: list[str] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            posargs = argv[i + 1:]
            break
        if arg in ("-e", "--env", "-c", "--conf", "--workdir", "-x", "--override", "--root", "-f", "--factor", "-m", "--labels"):
            value = argv[i + 1] if i + 1 < len(argv) else ""
            if arg in ("-e", "--env"):
                envs.extend(value.split(","))
            elif arg in ("-c", "--conf"):
                config = value
            i += 2
            continue
        if arg.startswith("-e") and len(arg) > 2:
            envs.extend(arg[2:].lstrip("=").split(","))
        elif arg in ("--help", "-h", "--version", "-l", "--listenvs", "-a", "--listenvs-all", "--showconfig", "config",
                     "list", "l", "quickstart", "devenv", "de"):
            return None
        i += 1
    if not envs and "TOXENV" in env:
        envs = env["TOXENV"].split(",")
    names = (config,) if config else ("tox.ini", "setup.cfg", "pyproject.toml")
    for name in names:
        path, text, written = find_file(analysis, scope, (name,))
        if text is None:
            continue
        if path.endswith("pyproject.toml"):
            if "[tool.tox" not in text:
                continue
            if "legacy_tox_ini" not in text:
                unreadable(analysis, path, text, "tox reads its environments from pyproject.toml's [tool.tox] tables, which the guard does not read", where)
                return None
            body = text.split("legacy_tox_ini", 1)[1].split('"""', 2)
            text = body[1] if len(body) > 2 else ""
        sections = ini_sections(text)
        if path.endswith("setup.cfg") and "tox:tox" not in sections:
            continue
        commands = _tox_commands(sections, envs, posargs)
        judge_file(analysis, path, text, written, where, lambda target, commands=commands: [
            target.run_script(command, scope.fork(), "", f"{where} > tox") for command in commands])
        return None
    return None


def _tox_commands(sections: dict[str, dict[str, str]], envs: list[str], posargs: list[str]) -> list[str]:
    chosen = [name for name in sections if name.startswith("testenv:") and (not envs or name[8:] in envs or "ALL" in envs)]
    out = []
    for section in ["testenv"] + chosen:
        values = sections.get(section, {})
        for key in ("commands_pre", "commands", "commands_post"):
            for line in values.get(key, "").splitlines():
                line = line.strip().lstrip("-!").strip()
                if line and not line.startswith("#"):
                    out.append(_tox_substitute(line, posargs))
    return out


def _tox_substitute(line: str, posargs: list[str]) -> str:
    out = []
    i = 0
    while i < len(line):
        if line[i] == "{":
            end = line.find("}", i)
            if end < 0:
                break
            name = line[i + 1:end]
            if name.startswith("posargs"):
                out.append(" ".join(shell_quote(a) for a in posargs) if posargs else name.partition(":")[2])
            elif name in ("envpython", "envbindir", "toxinidir", "envdir", "envsitepackagesdir", "toxworkdir", "envtmpdir"):
                out.append({"envpython": "python"}.get(name, "."))
            else:
                out.append(UNKNOWN)
            i = end + 1
            continue
        out.append(line[i])
        i += 1
    return "".join(out)


# ---- nox, invoke ----


def run_nox(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    names: set[str] | None = None
    path_name = "noxfile.py"
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-s", "--session", "--sessions", "-e"):
            names = names or set()
            j = i + 1
            while j < len(argv) and not argv[j].startswith("-"):
                names.add(argv[j].split("(", 1)[0].replace("-", "_"))
                j += 1
            i = j
            continue
        if arg in ("-f", "--noxfile") and i + 1 < len(argv):
            path_name = argv[i + 1]
            i += 2
            continue
        if arg in ("-l", "--list", "--list-sessions", "--help", "-h", "--version"):
            return None
        i += 1
    path, text, written = find_file(analysis, scope, (path_name,))
    if text is None:
        return None
    code = python_selection(text, names, "session")
    judge_file(analysis, path, text, written, where, lambda target: judge_python(target, code, scope, f"{where} > nox {show(path)}", written,
                                                                                 True))
    return None


def run_invoke(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    names: set[str] = set()
    collection = "tasks"
    root = ""
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-c", "--collection", "-r", "--search-root", "-f", "--config") and i + 1 < len(argv):
            if arg in ("-c", "--collection"):
                collection = argv[i + 1]
            elif arg in ("-r", "--search-root"):
                root = argv[i + 1]
            i += 2
            continue
        if arg in ("-l", "--list", "-h", "--help", "-V", "--version", "--complete"):
            return None
        if not arg.startswith("-"):
            names.add(arg.replace("-", "_").split(".")[-1])
        i += 1
    path, text, written = find_file(analysis, scope, (collection + ".py", collection + "/__init__.py"), root)
    if text is None:
        return None
    code = python_selection(text, names or None, "task")
    judge_file(analysis, path, text, written, where, lambda target: judge_python(target, code, scope, f"{where} > invoke {show(path)}",
                                                                                 written, True))
    return None


# ---- just ----


def run_just(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    wanted: list[str] = []
    path_name = ""
    directory = ""
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-f", "--justfile", "-d", "--working-directory", "--set", "--shell", "--shell-arg", "--dotenv-filename",
                   "--dotenv-path", "--command", "-c", "--chooser", "--color", "--dump-format", "--list-heading", "--list-prefix"):
            value = argv[i + 1] if i + 1 < len(argv) else ""
            if arg in ("-f", "--justfile"):
                path_name = value
            elif arg in ("-d", "--working-directory"):
                directory = value
            elif arg in ("-c", "--command"):
                analysis.run_script(value, scope.fork(), stdin, f"{where} > just --command")
            i += 3 if arg == "--set" else 2
            continue
        if arg in ("-l", "--list", "--summary", "--dump", "--evaluate", "--show", "-s", "--help", "-h", "--version", "-n",
                   "--dry-run", "--choose", "--edit", "-e", "--init", "--fmt", "--variables", "--groups"):
            if arg not in ("-n", "--dry-run"):
                return None
            return None
        if not arg.startswith("-"):
            wanted.append(arg)
        i += 1
    path, text, written = find_file(analysis, scope, (path_name,) if path_name else JUSTFILES, "")
    if text is None:
        return None
    recipes, variables, loading = justfile(text)
    by_name = {recipe.name: recipe for recipe in recipes}
    goals = [w for w in wanted if w in by_name] or ([recipes[0].name] if recipes and not wanted else [])
    commands: list[tuple[str, str]] = [("sh", command) for command in loading]
    seen: set[str] = set()

    def visit(name: str, depth: int) -> None:
        if name in seen or name not in by_name or depth > 32:
            return
        seen.add(name)
        recipe = by_name[name]
        for dependency in recipe.dependencies:
            visit(dependency, depth + 1)
        body = [_just_interpolate(line, variables) for line in recipe.body]
        if recipe.shebang:
            interpreter = recipe.shebang[2:].split()
            interpreter = [w for w in interpreter if program_name(w) != "env" and not w.startswith("-")]
            commands.append((program_name(interpreter[0]) if interpreter else "sh", "\n".join(body)))
        else:
            commands.extend(("sh", line.lstrip("@-")) for line in body if line.strip())

    for goal in goals:
        visit(goal, 0)
    inner = in_directory(scope, directory)

    def judge(target: Analysis) -> None:
        for language, command in commands:
            if language in ("sh", "bash", "zsh", "dash", None):
                target.run_script(command, inner.fork(), "", f"{where} > just recipe")
            else:
                target.model("shells").judge_code(target, language, command, inner, f"{where} > just recipe", from_disk=not written)

    judge_file(analysis, path, text, written, where, judge)
    return None


def _just_interpolate(line: str, variables: dict[str, str]) -> str:
    out = []
    i = 0
    while i < len(line):
        if line.startswith("{{{{", i):
            out.append("{{")
            i += 4
            continue
        if line.startswith("{{", i):
            end = line.find("}}", i)
            if end < 0:
                break
            name = line[i + 2:end].strip()
            value = variables.get(name, "")
            out.append(value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else UNKNOWN)
            i = end + 2
            continue
        out.append(line[i])
        i += 1
    return "".join(out)


# ---- go-task ----


def run_taskfile(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    wanted: list[str] = []
    path_name = ""
    directory = ""
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            break
        if arg in ("-t", "--taskfile", "-d", "--dir", "-o", "--output", "--sort", "-I", "--interval") and i + 1 < len(argv):
            if arg in ("-t", "--taskfile"):
                path_name = argv[i + 1]
            elif arg in ("-d", "--dir"):
                directory = argv[i + 1]
            i += 2
            continue
        if arg in ("-l", "--list", "-a", "--list-all", "--summary", "-h", "--help", "--version", "-n", "--dry", "--init", "-i"):
            return None
        if not arg.startswith("-") and "=" not in arg:
            wanted.append(arg)
        i += 1
    path, text, written = find_file(analysis, scope, (path_name,) if path_name else TASKFILES, directory)
    if text is None:
        return None
    try:
        document = yaml_load(text)
    except Unreadable as e:
        unreadable(analysis, path, text, f"task runs a Taskfile the guard cannot read: {e}", where)
        return None
    tasks = document.get("tasks") if isinstance(document, dict) else None
    if not isinstance(tasks, dict):
        return None
    commands = [v.get("sh") for v in (document.get("vars") or {}).values() if isinstance(v, dict) and isinstance(v.get("sh"), str)]
    seen: set[str] = set()

    def visit(name: str, depth: int) -> None:
        if name in seen or depth > 32:
            return
        seen.add(name)
        task = tasks.get(name)
        if isinstance(task, str):
            commands.append(task)
            return
        if isinstance(task, list):
            task = {"cmds": task}
        if not isinstance(task, dict):
            return
        for value in (task.get("vars") or {}).values() if isinstance(task.get("vars"), dict) else ():
            if isinstance(value, dict) and isinstance(value.get("sh"), str):
                commands.append(value["sh"])
        for dependency in task.get("deps") or []:
            visit(dependency.get("task", "") if isinstance(dependency, dict) else str(dependency), depth + 1)
        cmds = task.get("cmds") or ([task.get("cmd")] if task.get("cmd") else [])
        for command in cmds if isinstance(cmds, list) else [cmds]:
            if isinstance(command, str):
                commands.append(command)
            elif isinstance(command, dict):
                if isinstance(command.get("cmd"), str):
                    commands.append(command["cmd"])
                if command.get("task"):
                    visit(str(command["task"]), depth + 1)
                for key in ("for", "defer"):
                    if isinstance(command.get(key), str):
                        commands.append(command[key])

    for name in wanted or ["default"]:
        visit(name, 0)
    inner = in_directory(scope, directory)
    texts = [_go_template(c) for c in commands if c]
    judge_file(analysis, path, text, written, where, lambda target: [target.run_script(c, inner.fork(), "", f"{where} > task")
                                                                     for c in texts])
    return None


def _go_template(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        if text.startswith("{{", i):
            end = text.find("}}", i)
            if end < 0:
                break
            out.append(UNKNOWN)
            i = end + 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


# ---- pre-commit ----


def run_pre_commit(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    words = [a for a in argv[1:] if not a.startswith("-")]
    config = ".pre-commit-config.yaml"
    for k, arg in enumerate(argv[1:-1], 1):
        if arg in ("-c", "--config"):
            config = argv[k + 1]
            words = [w for w in words if w != config]
    if words[:1] not in (["run"], []) or any(a in ("-h", "--help", "-V", "--version") for a in argv[1:]):
        return None
    hook_ids = set(words[1:2])
    path, text, written = find_file(analysis, scope, (config,))
    if text is None:
        return None
    try:
        document = yaml_load(text)
    except Unreadable as e:
        unreadable(analysis, path, text, f"pre-commit reads a config the guard cannot read: {e}", where)
        return None
    repos = document.get("repos") if isinstance(document, dict) else None
    commands: list[tuple[str, str]] = []
    for repo in repos if isinstance(repos, list) else []:
        if not isinstance(repo, dict) or repo.get("repo") != "local":
            continue
        for hook in repo.get("hooks") or []:
            if not isinstance(hook, dict) or (hook_ids and hook.get("id") not in hook_ids):
                continue
            entry = hook.get("entry")
            if not isinstance(entry, str):
                continue
            args = [str(a) for a in hook.get("args") or [] if isinstance(a, (str, int))]
            language = str(hook.get("language") or "")
            commands.append((language, entry + "".join(" " + shell_quote(a) for a in args)))

    def judge(target: Analysis) -> None:
        for language, command in commands:
            if language in ("script", "unsupported_script"):
                first = command.split()[0] if command.split() else ""
                target.run_script((first if "/" in first else "./" + first) + command[len(first):], scope.fork(), "",
                                  f"{where} > pre-commit hook")
            elif language in ("system", "unsupported", "fail", ""):
                target.run_script(command, scope.fork(), "", f"{where} > pre-commit hook")
            else:
                target.note(where, f"pre-commit hook in {language}: {show(command)} (its code is installed by pre-commit, not read)")

    judge_file(analysis, path, text, written, where, judge)
    return None


# ---- cmake ----


def run_cmake(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    args = argv[1:]
    if args[:1] == ["-E"]:
        return _cmake_tool(analysis, argv, args[1:], scope, where)
    scripts = [args[k + 1] for k, a in enumerate(args[:-1]) if a == "-P"]
    source = next((args[k + 1] for k, a in enumerate(args[:-1]) if a == "-S"), None)
    if source is None and not scripts and not any(a in ("--build", "--install", "--open", "--help", "--version", "-N") for a in args):
        positional = [a for k, a in enumerate(args) if not a.startswith("-") and (k == 0 or args[k - 1] not in ("-B", "-G", "-T", "-A", "-D", "-C"))]
        source = positional[0] if positional else None
    if source is not None and not scripts:
        scripts = [posixpath.join(source, "CMakeLists.txt")]
    for name in scripts:
        path, text, written = find_file(analysis, scope, (name,))
        if text is None:
            continue
        judge_file(analysis, path, text, written, where, lambda target, text=text: _judge_cmake(target, argv, text, scope, where))
    return None


def _judge_cmake(analysis: Analysis, argv: list[str], text: str, scope: Scope, where: str) -> None:
    variables: dict[str, str] = {}
    for name, args in cmake_commands(text):
        args = [_cmake_expand(a, variables) for a in args]
        if name == "set" and len(args) >= 2:
            variables[args[0]] = " ".join(args[1:])
        elif name == "execute_process":
            current: list[str] | None = None
            for arg in args:
                if arg == "COMMAND":
                    if current:
                        analysis.run_argv(current, {}, None, scope.fork(), f"{where} > cmake execute_process")
                    current = []
                elif arg.isupper() and len(arg) > 3 and current is not None and arg not in ("ARGS",):
                    if current:
                        analysis.run_argv(current, {}, None, scope.fork(), f"{where} > cmake execute_process")
                    current = None
                elif current is not None:
                    current.append(arg)
            if current:
                analysis.run_argv(current, {}, None, scope.fork(), f"{where} > cmake execute_process")
        elif name == "exec_program" and args:
            analysis.run_script(" ".join([args[0]] + args[args.index("ARGS") + 1:] if "ARGS" in args else [args[0]]),
                                scope.fork(), "", f"{where} > cmake exec_program")
        elif name == "file" and args and args[0] in ("REMOVE", "REMOVE_RECURSE"):
            analysis.run_argv(["rm", "-rf" if args[0] == "REMOVE_RECURSE" else "-f", "--"] + args[1:], {}, None, scope.fork(),
                              f"{where} > cmake file({args[0]})")


def _cmake_expand(text: str, variables: dict[str, str]) -> str:
    out = []
    i = 0
    while i < len(text):
        if text.startswith("${", i):
            end = text.find("}", i)
            if end < 0:
                break
            name = text[i + 2:end]
            out.append(variables.get(name, UNKNOWN))
            i = end + 1
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _cmake_tool(analysis: Analysis, argv: list[str], args: list[str], scope: Scope, where: str) -> str | None:
    """cmake -E: its file deletions are rm's."""
    if not args:
        return None
    tool = args[0]
    if tool in ("rm", "remove", "remove_directory"):
        flags = "-rf" if tool == "remove_directory" or any(a in ("-r", "-R", "-rf", "-fr", "-Rf") for a in args[1:]) else "-f"
        paths = [a for a in args[1:] if not a.startswith("-")]
        analysis.run_argv(["rm", flags, "--"] + paths, {}, None, scope, f"{where} > cmake -E {tool}")
    elif tool in ("env",):
        rest = [a for a in args[1:] if "=" not in a and not a.startswith("-")]
        if rest:
            analysis.run_argv(rest, {}, None, scope, f"{where} > cmake -E env")
    return None
