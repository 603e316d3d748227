"""The models of shell builtins and file tools that change what later
commands see.

`cd`/`pushd` (where git runs next), `export`/`declare`/`local`/... and `set`,
`shift`, `unset`, `read`, `mapfile` (variables, arrays and positional
parameters; mapfile -C runs a callback), `alias`/`unalias` and `hash -p`
(what a command word runs), `printf` (its output, or `-v` a variable), and
the file tools whose writes the walk follows: `tee`, `cp`/`ln`/`install`
(a copy of a program runs that program).
"""
import os

from ralph.rules.guard.interp import Analysis
from ralph.rules.guard.programs.facts import COMMAND_ENV
from ralph.rules.guard.state import UNKNOWN, Scope, file_key, lookup_file, option_values, program_name, shell_quote, show
from ralph.rules.guard.syntax.lexer import decode_ansi_c


def run_cd(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """Where later commands run (git in another repository is judged by it)."""
    paths = [a for a in argv[1:] if not a.startswith("-") or a == "-"]
    target = paths[0] if paths else "~"
    if target.startswith("/") or target.startswith("~") or UNKNOWN in target or target == "-":
        scope.cwd = target if target != "-" else UNKNOWN
    else:
        scope.cwd = (scope.cwd.rstrip("/") + "/" + target) if scope.cwd else target
    if UNKNOWN not in scope.cwd:
        scope.cwd = os.path.normpath(scope.cwd) if scope.cwd not in ("", ".") else ""
        scope.cwd = "" if scope.cwd == "." else scope.cwd
    return ""


def run_declare(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    exporting = argv[0] == "export" or any(a.startswith("-") and "x" in a for a in argv[1:])
    for arg in argv[1:]:
        if arg.startswith("-") or arg.startswith("+"):
            continue
        name, eq, value = arg.partition("=")
        if not eq:
            continue
        if name.endswith("+"):
            name = name[:-1]
        if any(a.startswith("-") and "n" in a for a in argv[1:]):
            scope.refs[name] = value  # a nameref: reads and writes of name go to value
            continue
        analysis.assign(scope, name, [value], False, where)
        if exporting:
            scope.exported[name] = value
        if name in COMMAND_ENV and analysis.runs_something(value, scope):
            analysis.check_env({name: value}, scope, where)
    return None


def run_set(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    if "--" in argv:
        scope.positional = list(argv[argv.index("--") + 1:])
    elif len(argv) > 1 and not argv[1].startswith(("-", "+")):
        scope.positional = list(argv[1:])
    return None


def run_shift(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    count = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
    if scope.positional is not None:
        scope.positional = scope.positional[count:]
    return None


def run_unset(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    functions = "-f" in argv[1:]
    for arg in argv[1:]:
        if arg.startswith("-"):
            continue
        if functions:
            scope.funcs.pop(arg, None)
        else:
            scope.vars[arg] = [""]
            scope.arrays.pop(arg, None)
            scope.exported.pop(arg, None)
    return None


def run_read(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    names = []
    i = 1
    array = None
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("-"):
            if arg in ("-a",):
                array = argv[i + 1] if i + 1 < len(argv) else None
                i += 2
                continue
            i += 2 if arg in ("-d", "-n", "-N", "-p", "-t", "-u", "-i") else 1
            continue
        names.append(arg)
        i += 1
    line = None if stdin is None else (stdin.split("\n", 1)[0] if stdin else "")
    if array:
        scope.arrays[array] = [UNKNOWN] if line is None else line.split()
        scope.vars[array] = [UNKNOWN] if line is None else [scope.arrays[array][0] if scope.arrays[array] else ""]
    names = names or ["REPLY"]
    fields = None if line is None else line.split(None, len(names) - 1)
    for k, name in enumerate(names):
        if fields is None:
            scope.vars[name] = None
        else:
            scope.vars[name] = [fields[k] if k < len(fields) else ""]
    return None


def run_mapfile(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    for callback in option_values(argv[1:], ("-C",)):
        # mapfile -C runs the callback with an index and the line appended
        analysis.run_script(callback + " 0 line", scope.fork(), "", f"{where} > mapfile -C")
    names = [a for k, a in enumerate(argv[1:], 1) if not a.startswith("-") and argv[k - 1] not in ("-C", "-c", "-d", "-n", "-O", "-s", "-u")]
    name = names[-1] if names else "MAPFILE"
    scope.arrays[name] = [UNKNOWN] if stdin is None else stdin.splitlines()
    scope.vars[name] = None if stdin is None else [scope.arrays[name][0] if scope.arrays[name] else ""]
    return None


def run_alias(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    for arg in argv[1:]:
        if "=" in arg and not arg.startswith("-"):
            name, _, value = arg.partition("=")
            scope.aliases[name] = value
            analysis.note(where, f"defines alias {name}")
    return None


def run_unalias(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    for arg in argv[1:]:
        if arg == "-a":
            scope.aliases.clear()
        scope.aliases.pop(arg, None)
    return None


def run_hash(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """hash -p PATH NAME: NAME now runs PATH (the shell's command table)."""
    for path in option_values(argv[1:], ("-p",)):
        names = [a for a in argv[argv.index(path) + 1:] if not a.startswith("-")] if path in argv else []
        for name in names:
            scope.aliases[name] = shell_quote(path)
            analysis.note(where, f"hash: {name} runs {show(path)}")
    return None


def run_printf(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    if len(argv) > 2 and argv[1] == "-v":
        value = printf_output(argv[3:]) if len(argv) > 3 else ""
        analysis.assign(scope, argv[2], [value if value is not None else UNKNOWN], False)
        return ""
    return printf_output(argv[1:])


def run_tee(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    appends = any(a in ("-a", "--append") or (a.startswith("-") and not a.startswith("--") and "a" in a) for a in argv[1:])
    for arg in argv[1:]:
        if not arg.startswith("-"):
            if not appends:
                analysis.judge_overwrite(arg, scope, where, "tee", argv)
            scope.files[file_key(arg)] = stdin
            analysis.check_written(arg, stdin, where, scope)
    return stdin


def run_mkdir(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """mkdir without -p fails on a directory that exists: what it makes is the
    command's own, and deleting it later loses nothing."""
    if not any(a.startswith("-") and ("p" in a or a == "--parents") for a in argv[1:]):
        scope.made = scope.made + tuple(file_key(a).rstrip("/") for a in argv[1:] if not a.startswith("-") and a)
    return ""


def run_copy(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """cp / ln / mv / install SOURCE DEST: DEST now holds what SOURCE held; a
    copy or link of a program (`ln -s /usr/bin/git g`) runs that program."""
    paths = [a for k, a in enumerate(argv[1:], 1) if not a.startswith("-") and argv[k - 1] not in ("-m", "-o", "-g", "-t", "-S")]
    name = program_name(argv[0]) or "cp"
    options = [a for a in argv[1:] if a.startswith("-")]
    keeps = any(a in ("-n", "--no-clobber", "-i", "--interactive", "--update=none") for a in options)
    replaces = name != "ln" or any(a in ("-f", "--force") or (not a.startswith("--") and "f" in a) for a in options)
    directories = [a for k, a in enumerate(argv[1:], 1) if argv[k - 1] == "-t"] + [a[17:] for a in options if a.startswith("--target-directory=")]
    if len(paths) >= 2 and replaces and not keeps and not directories:
        analysis.judge_overwrite(paths[-1], scope, where, name, argv)
    for directory in directories:
        analysis.judge_overwrite(directory, scope, where, name, argv)
    if len(paths) == 2:
        source = file_key(paths[0])
        if source in ("/dev/stdin", "-"):
            content = stdin
        else:
            found, content = lookup_file(scope.files, source)
            if not found:
                program = program_name(source)
                # a program, not a file this command wrote: the copy runs it with its arguments
                content = f'exec {shell_quote(source)} "$@"\n' if program and "/" in source else None
        target = file_key(paths[1])
        if target.endswith("/") or target in (".", ".."):
            target = (target.rstrip("/") + "/" if target not in (".",) else "") + source.rsplit("/", 1)[-1]
        scope.files[target] = content
        analysis.check_written(paths[1], content, where, scope)
    return ""


def printf_output(args: list[str]) -> str | None:
    """printf's output for %s/%b/%d-only formats, else None."""
    if not args:
        return ""
    fmt, values = args[0], list(args[1:])
    if UNKNOWN in fmt:
        return None
    out = []
    i = 0
    n = len(fmt)
    used_any = True
    first = True
    while first or (values and used_any):
        first = False
        used_any = False
        i = 0
        while i < n:
            c = fmt[i]
            if c == "\\" and i + 1 < n:
                out.append(decode_ansi_c(fmt[i:i + 2]) if fmt[i + 1] not in "01234567xuU" else "")
                if fmt[i + 1] in "01234567xuU":
                    j = i + 2
                    while j < n and j < i + 5 and fmt[j] in "0123456789abcdefABCDEF":
                        j += 1
                    out.append(decode_ansi_c(fmt[i:j]))
                    i = j
                    continue
                i += 2
            elif c == "%" and i + 1 < n:
                spec = fmt[i + 1]
                if spec == "%":
                    out.append("%")
                elif spec in "sbdqc":
                    value = values.pop(0) if values else ""
                    used_any = True
                    if spec == "b":
                        value = decode_ansi_c(value)
                    elif spec == "c":
                        value = value[:1]
                    out.append(value)
                else:
                    return None
                i += 2
            else:
                out.append(c)
                i += 1
    return "".join(out)
