"""Models of the programs agents run most, loaded on first use: `cd`/`pushd`,
`export`/`declare`/`local`/..., `set`, `cp`/`ln`/`install`, `tee`, `printf`
(its output: printf_output), `find` (its -exec), interpreters up to their code
(`python -m pytest` runs no code string), `make` up to its makefiles, `sed` up
to its `e` command.

Apart from ralph.rules.guard.programs.models (shells, wrappers, code strings,
data-executing programs: loaded when one of these finds code to judge, e.g.
`python -c ..`, `make -f -`, `sed 's/x/y/e'`), so that the many commands
using only these do not load that much larger module. CommonPrograms is
mixed into guard.Analysis by guard.analysis_class() the first time the walk
calls one of its methods (guard.Analysis.__getattr__); the names are listed in
guard.COMMON_PROGRAMS.
"""
import os
from ralph.rules.guard.git_policy import _option_values
from ralph.rules.guard.state import UNKNOWN, Scope, file_key, lookup_file, program_name, shell_quote, show
from ralph.rules.guard.programs.facts import COMMAND_ENV, INTERPRETERS
from ralph.rules.guard.syntax.lexer import decode_ansi_c


class CommonPrograms:
    """Program-model methods of the analysis for the programs agents run most."""

    __slots__ = ()

    def run_cd(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
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

    def run_declare(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
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
            self.assign(scope, name, [value], False, where)
            if exporting:
                scope.exported[name] = value
            if name in COMMAND_ENV and self.policy.could_push(value):
                self.check_env({name: value}, scope, where)
        return None

    def run_set(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        if "--" in argv:
            scope.positional = list(argv[argv.index("--") + 1:])
        elif len(argv) > 1 and not argv[1].startswith(("-", "+")):
            scope.positional = list(argv[1:])
        return None

    def run_copy(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        """cp / ln / mv / install SOURCE DEST: DEST now holds what SOURCE held; a
        copy or link of a program (`ln -s /usr/bin/git g`) runs that program."""
        paths = [a for k, a in enumerate(argv[1:], 1) if not a.startswith("-") and argv[k - 1] not in ("-m", "-o", "-g", "-t", "-S")]
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
            self.check_written(paths[1], content, where, scope)
        return ""

    def run_tee(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        for arg in argv[1:]:
            if not arg.startswith("-"):
                scope.files[file_key(arg)] = stdin
                self.check_written(arg, stdin, where, scope)
        return stdin

    def run_printf(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        if len(argv) > 2 and argv[1] == "-v":
            value = printf_output(argv[3:]) if len(argv) > 3 else ""
            self.assign(scope, argv[2], [value if value is not None else UNKNOWN], False)
            return ""
        return printf_output(argv[1:])

    def run_find(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        i = 1
        while i < len(argv):
            if argv[i] in ("-exec", "-execdir", "-ok", "-okdir"):
                j = i + 1
                while j < len(argv) and argv[j] not in (";", "+"):
                    j += 1
                command = [UNKNOWN if "{}" in a else a for a in argv[i + 1:j]]
                self.run_argv(command, env, None, scope, f"{where} > find {argv[i]}")
                i = j + 1
            else:
                i += 1
        return None

    def run_interpreter(self, name: str, argv: list[str], stdin: str | None, scope: Scope, where: str) -> str | None:
        flags = INTERPRETERS.get(name, ("-c",))
        code = None
        found_flag = False
        args: list[str] = []  # the program's own arguments (sys.argv[1:], ARGV, process.argv.slice(..))
        i = 1
        while i < len(argv):
            arg = argv[i]
            low = arg.lower()
            if low in flags:
                found_flag = True
                code = argv[i + 1] if i + 1 < len(argv) else ""
                args = argv[i + 2:]
                break
            attached = next((f for f in flags if f.startswith("-") and len(f) == 2 and arg.startswith(f) and len(arg) > 2), None)
            if attached:
                found_flag = True
                code = arg[2:]
                args = argv[i + 1:]
                break
            if arg in ("-m",) and name.startswith("py"):
                return None
            if not arg.startswith("-") or arg == "-":
                break
            i += 1
        if not found_flag:
            rest = argv[i:]
            args = rest[1:]
            if rest and rest[0] != "-":
                path = file_key(rest[0])
                if path in scope.files:
                    code = scope.files[path]
                    if code is None:
                        self.not_sure(False, f"{name} runs `{show(path)}`, written in this command with content that cannot be seen", where, "fail-closed.script-content")
                        return None
                else:
                    self.note(where, f"{name} runs file {show(path)} (not visible to the guard)")
                    return None
            else:
                code = stdin
                if code is None:
                    self.not_sure(False, f"{name} reads its program from input the guard cannot see", where, "fail-closed.interpreter-stdin")
                    return None
        self.judge_code(name, code or "", scope, where, args=args)
        return None

    def run_make(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        """make runs its makefile's recipes and `$(shell ..)`: judge a makefile
        read from stdin, written by this command, or given with --eval.
        (A makefile already in the project is not visible: a documented limit.)"""
        texts: list[tuple[str, str | None]] = []
        i = 1
        while i < len(argv):
            arg = argv[i]
            value = argv[i + 1] if i + 1 < len(argv) else ""
            if arg in ("-f", "--file", "--makefile"):
                texts.append((value, stdin if value in ("-", "/dev/stdin") else self.read_written(value, scope)))
                i += 2
                continue
            if arg.startswith(("--file=", "--makefile=")):
                path = arg.split("=", 1)[1]
                texts.append((path, stdin if path in ("-", "/dev/stdin") else self.read_written(path, scope)))
            elif arg.startswith("-f") and len(arg) > 2:
                texts.append((arg[2:], stdin if arg[2:] in ("-", "/dev/stdin") else self.read_written(arg[2:], scope)))
            elif arg in ("-E", "--eval"):
                texts.append(("--eval", value))
                i += 2
                continue
            elif arg.startswith("--eval="):
                texts.append(("--eval", arg[7:]))
            i += 1
        if texts:
            self.judge_makefiles(texts, scope, where)
        return None

    def read_written(self, path: str, scope: Scope) -> str | None:
        """The content of a file this command wrote (or stdin for `-`), None when unknown."""
        if path in ("-", "/dev/stdin"):
            return None
        return lookup_file(scope.files, path)[1]

    def run_sed(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        scripts = _option_values(argv[1:], ("-e", "--expression"))
        if not scripts:
            rest = [a for a in argv[1:] if not a.startswith("-")]
            scripts = rest[:1]
        for script in scripts:
            if _sed_executes(script):
                self.judge_code("sed", script, scope, where, starts_programs=True)
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
