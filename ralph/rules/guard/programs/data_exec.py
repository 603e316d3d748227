"""The models of programs that run commands found in their data.

awk (`system()` and pipes, with the commands taken from its input lines),
sed (its `e` command and the `e` flag of `s`), make (the recipes and
`$(shell ..)` of a makefile read from stdin, written by this command, or
given with --eval) and the editors ed/ex/vim (`!cmd`, given with -c/+cmd or,
in ex/ed mode, read from stdin). Their code is judged as interpreter code
(ralph.rules.guard.programs.shells.judge_code) or as shell commands.
"""
from ralph.rules.guard.interp import PLAIN_SCRIPT, Analysis
from ralph.rules.guard.programs.shells import judge_code
from ralph.rules.guard.state import Scope, lookup_file, option_values, program_name, read_written, show


def run_awk(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    i = 1
    program = None
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            i += 1
            break
        if arg in ("-f", "--file"):
            path = argv[i + 1] if i + 1 < len(argv) else ""
            program = scope.files.get(path, "") or ""
            if path in scope.files and scope.files[path] is None:
                analysis.not_sure(False, f"awk runs `{show(path)}`, written in this command with content that cannot be seen", where, "fail-closed.script-content")
            i += 2
            continue
        if arg in ("-F", "-v", "--assign", "--field-separator"):
            i += 2
            continue
        if arg.startswith("-") and len(arg) > 1:
            i += 1
            continue
        break
    files = argv[i:]
    if program is None:
        program = argv[i] if i < len(argv) else ""
        files = argv[i + 1:]
    if "system" in program or "|" in program:
        name = argv[0].rsplit("/", 1)[-1]
        judge_code(analysis, name, program, scope, where, starts_programs=True)
        # the commands may come from the input lines (`system($0)`): judge them as run
        inputs = [read_written(path, scope) for path in files if "=" not in path] if files else [stdin]
        for text in inputs:
            if text is None:
                analysis.not_sure(False, f"{name} runs commands built from input the guard cannot see", where,
                                  "fail-closed.awk-input", PLAIN_SCRIPT)
            else:
                analysis.run_script(text, scope.fork(), "", f"{where} > {name} input lines")
    return None


def run_sed(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    scripts = option_values(argv[1:], ("-e", "--expression"))
    if not scripts:
        rest = [a for a in argv[1:] if not a.startswith("-")]
        scripts = rest[:1]
    for script in scripts:
        if _sed_executes(script):
            judge_code(analysis, "sed", script, scope, where, starts_programs=True)
    return None


def run_make(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """make runs its makefile's recipes and `$(shell ..)`: judge a makefile
    read from stdin, written by this command, or given with --eval.
    (A makefile already in the project is not visible: a documented limit.)"""
    texts: list[tuple[str, str | None]] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        value = argv[i + 1] if i + 1 < len(argv) else ""
        if arg in ("-f", "--file", "--makefile"):
            texts.append((value, stdin if value in ("-", "/dev/stdin") else read_written(value, scope)))
            i += 2
            continue
        if arg.startswith(("--file=", "--makefile=")):
            path = arg.split("=", 1)[1]
            texts.append((path, stdin if path in ("-", "/dev/stdin") else read_written(path, scope)))
        elif arg.startswith("-f") and len(arg) > 2:
            texts.append((arg[2:], stdin if arg[2:] in ("-", "/dev/stdin") else read_written(arg[2:], scope)))
        elif arg in ("-E", "--eval"):
            texts.append(("--eval", value))
            i += 2
            continue
        elif arg.startswith("--eval="):
            texts.append(("--eval", arg[7:]))
        i += 1
    if texts:
        judge_makefiles(analysis, texts, scope, where)
    return None


def judge_makefiles(analysis: Analysis, texts: list[tuple[str, str | None]], scope: Scope, where: str) -> None:
    """The recipes of makefiles make reads (source, text; None when unseen)."""
    for source, text in texts:
        if text is None:
            if source not in ("--eval",) and (source in ("-", "/dev/stdin") or lookup_file(scope.files, source)[0]):
                analysis.not_sure(False, f"make reads a makefile `{show(source)}` the guard cannot see", where,
                                  "fail-closed.makefile", PLAIN_SCRIPT)
            continue
        for command in _make_commands(text):
            analysis.run_script(command, scope.fork(), "", f"{where} > make recipe")


def run_editor(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """ed, ex and vim run `!cmd` (and `r !cmd`, `w !cmd`) given with -c/+cmd
    or, in ex/ed mode, read from stdin."""
    name = program_name(argv[0]) or ""
    commands = []
    ex_mode = name in ("ex", "ed", "red") or any(a in ("-e", "-es", "-E", "-Es", "-s") for a in argv[1:]) and name != "ed"
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-c", "--cmd") and i + 1 < len(argv):
            commands.append(argv[i + 1])
            i += 2
            continue
        if arg.startswith("+") and len(arg) > 1:
            commands.append(arg[1:])
        elif arg == "-S" and i + 1 < len(argv):
            commands.extend((read_written(argv[i + 1], scope) or "").splitlines())
            i += 2
            continue
        i += 1
    if ex_mode or name in ("ed", "red"):
        if stdin is None:
            analysis.not_sure(False, f"{name} reads editor commands from input the guard cannot see", where,
                              "fail-closed.editor-input", PLAIN_SCRIPT)
        else:
            commands.extend(stdin.splitlines())
    for command in commands:
        shell = _editor_shell_command(command)
        if shell is not None:
            analysis.run_script(shell, scope.fork(), "", f"{where} > {name} !")
        elif "system(" in command:
            judge_code(analysis, name, command, scope, where, starts_programs=True)
    return None


def _sed_executes(script: str) -> bool:
    """Does a GNU sed script use the `e` command or the `e` flag of `s`?"""
    for command in script.replace("\n", ";").split(";"):
        command = command.strip().lstrip("0123456789$,!~ ")
        if command.startswith("/"):
            end = command.find("/", 1)
            command = command[end + 1:].lstrip("0123456789$,!~ /") if end > 0 else ""
        if command.startswith("e"):
            return True
        if command.startswith("s") and len(command) > 1:
            pieces = command[2:].split(command[1])
            if len(pieces) >= 3 and "e" in pieces[2]:
                return True
    return False


def _make_commands(text: str) -> list[str]:
    """The shell commands of a makefile: recipe lines (tab-indented, or after
    `target: ;`) and `$(shell ..)` bodies, with `$$` read as `$`."""
    commands = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("\t"):
            commands.append(line[1:].lstrip("@-+ "))
        elif ":" in line and ";" in line.split("#", 1)[0] and "=" not in line.split(":", 1)[0]:
            commands.append(line.split(";", 1)[1].strip().lstrip("@-+ "))
        start = line.find("$(shell ")
        while start >= 0:
            depth, j = 0, start + 1
            while j < len(line):
                depth += {"(": 1, ")": -1}.get(line[j], 0)
                if depth == 0:
                    break
                j += 1
            commands.append(line[start + 8:j])
            start = line.find("$(shell ", j)
    return [c.replace("$$", "$") for c in commands if c.strip()]


def _editor_shell_command(command: str) -> str | None:
    """The shell command of an ed/ex line: `!cmd`, `:!cmd`, `r !cmd`, `w !cmd`, `silent !cmd`."""
    line = command.strip().lstrip(":").lstrip("0123456789,.$%' ")
    for prefix in ("silent! ", "silent ", "r ", "w ", "e ", "read ", "write ", "r", "w", "e"):
        if line.startswith(prefix) and line[len(prefix):].lstrip().startswith("!"):
            line = line[len(prefix):].lstrip()
            break
    return line[1:] if line.startswith("!") else None
