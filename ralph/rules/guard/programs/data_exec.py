"""The models of programs that run commands found in their data.

awk (`system()` and pipes, with the commands taken from its input lines),
sed (its `e` command and the `e` flag of `s`; `-i` outside the project is an
overwrite) and the editors ed/ex/vim (`!cmd`, given with -c/+cmd or, in
ex/ed mode, read from stdin). Their code is judged as interpreter code
(ralph.rules.guard.programs.shells.judge_code) or as shell commands. (make,
whose makefiles are files too, has a model of its own:
ralph.rules.guard.programs.makefiles.)
"""
from ralph.rules.guard.interp import PLAIN_SCRIPT, Analysis
from ralph.rules.guard.programs.shells import judge_code
from ralph.rules.guard.state import Scope, option_values, program_name, read_written, show


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
    rest = [a for k, a in enumerate(argv[1:], 1) if not a.startswith("-") and argv[k - 1] not in ("-e", "--expression", "-f", "--file", "-l", "-E")]
    files = rest if scripts or option_values(argv[1:], ("-f", "--file")) else rest[1:]
    if not scripts:
        scripts = rest[:1]
    for script in scripts:
        if _sed_executes(script):
            for command in _sed_commands(script):
                analysis.run_script(command, scope.fork(), "", f"{where} > sed e")
            judge_code(analysis, "sed", script, scope, where, starts_programs=True)
    if any(a.startswith(("-i", "--in-place")) or (a.startswith("-") and not a.startswith("--") and "i" in a) for a in argv[1:]):
        for path in files:
            # an edit in place: work inside the project, destruction outside it
            if path.startswith(("/", "~")) or ".." in path.split("/"):
                analysis.judge_overwrite(path, scope, where, "edit", argv)
    return None


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


def _sed_commands(script: str) -> list[str]:
    """The shell commands of sed's `e command` lines (the `e` flag of `s`
    runs the pattern space, judged as code by the caller)."""
    commands = []
    for line in script.replace(";", "\n").splitlines():
        line = line.strip().lstrip("0123456789$,!~ ")
        if line.startswith("/"):
            end = line.find("/", 1)
            line = line[end + 1:].lstrip("0123456789$,!~ /") if end > 0 else ""
        if line.startswith("e ") and line[2:].strip():
            commands.append(line[2:].strip())
    return commands


def _editor_shell_command(command: str) -> str | None:
    """The shell command of an ed/ex line: `!cmd`, `:!cmd`, `r !cmd`, `w !cmd`, `silent !cmd`."""
    line = command.strip().lstrip(":").lstrip("0123456789,.$%' ")
    for prefix in ("silent! ", "silent ", "r ", "w ", "e ", "read ", "write ", "r", "w", "e"):
        if line.startswith(prefix) and line[len(prefix):].lstrip().startswith("!"):
            line = line[len(prefix):].lstrip()
            break
    return line[1:] if line.startswith("!") else None
