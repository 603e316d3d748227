"""Program models: how shells, interpreters, wrappers and the programs that
run what they read execute their arguments (mvdan/sh's interp/, for the
programs the guard must see through).

Shells (`bash -c`, a script on stdin or written earlier in the command),
interpreters (code strings that start programs), wrappers (sudo, env,
timeout, ... from ralph.rules.guard.programs.facts), remote runners (ssh), data-executing
programs (xargs, find -exec, parallel, awk, sed `e`, tmux/screen/at), and the
builtins that change the shell's state (alias, read, unset, ...).
The programs agents run most (cd, export, cp, find, python, make, sed, ...)
are modelled in ralph.rules.guard.programs.common, which calls into this module
only when they carry code to judge. Loaded on first use (guard.Analysis).
"""
from ralph.rules.guard.state import ENCODINGS, MAX_ALTERNATIVES, UNKNOWN, Scope, file_key, lookup_file, normalize_program, program_name, shell_quote, show
from ralph.rules.guard.programs.facts import (ASSIGNING_WRAPPERS, DATA_PROGRAMS, EXEC_APIS, INTERPRETERS, PARALLEL_OPTS_WITH_ARG, SHELLS, SSH_OPTS_WITH_ARG, WRAPPER_SCRIPT_OPTS,
                                  WRAPPERS, XARGS_LONG_WITH_ARG, XARGS_SHORT_WITH_ARG)
from ralph.rules.guard.syntax.lexer import ShellSyntaxError, decode_ansi_c
from ralph.rules.guard.expand import _split_words
from ralph.rules.guard.git_policy import _option_values


PLAIN_SCRIPT = ("Write the commands themselves on the command line (not in a file, descriptor or "
                "generated script), one per line.")
# interpreter code that reads its own command-line arguments
ARGV_MARKERS = ("argv", "process.argv", "@argv", "$argv", "arguments", "args", "$*", "$@", "...")
# calls that start a process with the literal (list) that follows them
PROCESS_CALLS = ("run", "system", "check_output", "check_call", "call", "popen", "execsync", "exec", "spawn",
                 "spawnsync", "execfile", "execfilesync", "qx", "capture2", "capture3", "shell_exec", "passthru",
                 "proc_open", "command", "getoutput", "getstatusoutput", "output", "$")
# programs whose judged invocation accounts for push/merge words in a string literal
GIT_PROGRAMS = frozenset(("git", "gh", "glab", "hub", "jj", "yadm"))


class ProgramModels:
    """Program-model methods of the analysis (mixed into guard.Analysis)."""

    __slots__ = ()
    HANDLERS: dict = {}  # program -> handler, filled in by ralph.rules.guard.judge

    def run_shell(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        i = 1
        command_mode = False
        read_stdin = False
        while i < len(argv):
            arg = argv[i]
            if arg == "--" or arg == "-":
                i += 1
                break
            if arg.startswith("--"):
                if arg in ("--rcfile", "--init-file") and i + 1 < len(argv):
                    # read by an interactive shell before anything else
                    self.run_file(argv[i + 1], scope.fork(), "", f"{where} > {argv[0]} {arg}")
                i += 2 if arg in ("--rcfile", "--init-file") else 1
                continue
            if len(arg) > 1 and arg[0] in "-+":
                takes = 0
                for ch in arg[1:]:
                    if ch == "c":
                        command_mode = True
                    elif ch == "s":
                        read_stdin = True
                    elif ch in "oO":
                        takes += 1
                i += 1 + takes
                continue
            break
        rest = argv[i:]
        inner = scope.fork()
        name = program_name(argv[0]) or "sh"
        if command_mode:
            if not rest:
                return None
            inner.positional = list(rest[2:])
            if len(rest) > 1:
                inner.vars["0"] = [rest[1]]
            return self.run_script(rest[0], inner, stdin, f"{where} > {name} -c")
        if rest and not read_stdin:
            inner.positional = list(rest[1:])
            return self.run_file(rest[0], inner, stdin, f"{where} > {name} {show(rest[0])}")
        inner.positional = list(rest)
        return self.run_stdin_script(stdin, inner, f"{where} > {name} (script on stdin)")

    def run_file(self, path: str, scope: Scope, stdin: str | None, where: str) -> str | None:
        if path in ("/dev/stdin", "-", "/proc/self/fd/0", "/dev/fd/0"):
            return self.run_stdin_script(stdin, scope, where)
        if path.startswith("\x03"):  # process substitution output
            return self.run_stdin_script(scope.files.get(path), scope, where)
        if path.startswith(("/dev/fd/", "/proc/self/fd/")):
            self.not_sure(False, f"runs a script read from descriptor `{show(path)}`, which the guard cannot follow", where,
                          "fail-closed.script-descriptor", PLAIN_SCRIPT)
            return None
        path = file_key(path)
        found, content = lookup_file(scope.files, path)
        if found:
            if content is None:
                self.not_sure(False, f"runs `{show(path)}`, written earlier in this command with content that cannot be seen", where, "fail-closed.script-content")
                return None
            self.note(where, f"runs {show(path)}, written earlier in this command")
            return self.run_script(content, scope, stdin, where)
        if UNKNOWN in path:
            self.not_sure(False, f"runs a script whose path `{show(path)}` is only known when the command runs", where, "fail-closed.script-path")
        else:
            self.note(where, f"runs script file {path} (not visible to the guard)")
        return None

    def run_stdin_script(self, stdin: str | None, scope: Scope, where: str) -> str | None:
        if stdin is None:
            self.not_sure(False, "a shell reads its script from input the guard cannot see", where, "fail-closed.shell-stdin")
            return None
        return self.run_script(stdin, scope, "", where)

    def judge_code(self, name: str, code: str, scope: Scope, where: str, starts_programs: bool = False,
                   args: list[str] | None = None) -> None:
        """Interpreter code that can start programs: judge the commands its
        string literals spell (a list of literals as one argv), and the
        program's own arguments when the code passes its argv to a process API.
        Block when push/merge words or encodings remain that no judged git
        command accounts for."""
        low = code.lower()
        starts_programs = starts_programs or any(api in low for api in EXEC_APIS)
        if not starts_programs:
            self.note(where, f"{name} code starts no programs")
            return
        before = (len(self.blocks), len(self.unsure))
        if args and any(marker in low for marker in ARGV_MARKERS):
            self.note(where, f"{name} code passes its arguments to a process API")
            self.run_argv(list(args), {}, None, scope.fork(), f"{where} > {name} argv")
        explained: set[int] = set()
        spans = _literal_spans(code)
        groups = _literal_groups(code)
        for group in groups:
            words = [code_literal for _, code_literal in group]
            mark = (len(self.blocks), len(self.unsure))
            if len(words) > 1:
                self.run_argv(words, {}, None, scope.fork(), f"{where} > {name} argv list")
            elif self.policy.could_push(words[0]) or "git" in words[0].lower():
                self.run_script(words[0], scope.fork(), "", f"{where} > {name} string")
            first = (words[0].split() or [""])[0]
            if ((len(self.blocks), len(self.unsure)) == mark and program_name(first) in GIT_PROGRAMS
                    and _passed_whole(code, spans, group)):
                explained.update(index for index, _ in group)
        if len(self.blocks) > before[0]:
            return
        literals = [literal for group in groups for literal in group]
        outside = _without_literals(code)
        risky = (self.policy.could_push(outside) or any(e in low for e in ENCODINGS)
                 or any(self.policy.could_push(text) for index, text in literals if index not in explained))
        if risky:
            self.blocks.append((f"{name} code", f"{name} code that starts programs mentions push/merge/pull or encodes text", where, "interpreter.code"))
            self.note(where, f"{name} code can start programs and could push or merge -> BLOCK")
        else:
            self.note(where, f"{name} code starts programs but none that push or merge")

    def run_wrapper(self, name: str, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        short_with_arg, long_with_arg, positionals = WRAPPERS[name]
        script_opts = WRAPPER_SCRIPT_OPTS.get(name, ())
        i = 1
        env = dict(env)
        split_string = None
        while i < len(argv):
            arg = argv[i]
            if arg == "--":
                i += 1
                break
            if name == "command" and arg in ("-v", "-V"):
                return "/usr/bin/" + argv[i + 1] if i + 1 < len(argv) and arg == "-v" else None
            if arg.startswith("--"):
                option, eq, value = arg.partition("=")
                if option in script_opts:
                    script = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
                    return self.run_script(script, scope.fork(), stdin, f"{where} > {name} {option}")
                if name == "env" and option == "--split-string":
                    split_string = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
                    i += 1 if eq else 2
                    break
                if name == "gdb" and option == "--args":
                    i += 1
                    break
                i += 1 if eq or option not in long_with_arg else 2
                continue
            if name == "nice" and arg[1:].isdigit():
                i += 1
                continue
            if len(arg) > 1 and arg[0] == "-":
                j = 1
                took = False
                while j < len(arg):
                    ch = arg[j]
                    if "-" + ch in script_opts:
                        script = arg[j + 1:] or (argv[i + 1] if i + 1 < len(argv) else "")
                        return self.run_script(script, scope.fork(), stdin, f"{where} > {name} -{ch}")
                    if name == "env" and ch == "S":
                        split_string = arg[j + 1:] or (argv[i + 1] if i + 1 < len(argv) else "")
                        took = not arg[j + 1:]
                        break
                    if ch in short_with_arg:
                        took = not arg[j + 1:]
                        break
                    j += 1
                i += 2 if took else 1
                if split_string is not None:
                    break
                continue
            if name in ASSIGNING_WRAPPERS and "=" in arg and arg[0] not in "=/":
                key, _, value = arg.partition("=")
                env[key] = value
                i += 1
                continue
            break
        rest = argv[i:]
        if split_string is not None:
            try:
                rest = _split_words(split_string) + rest
            except ShellSyntaxError:
                self.not_sure(False, "env -S string cannot be read", where, "fail-closed.env-split-string")
                return None
            while rest and "=" in rest[0] and not rest[0].startswith("-"):
                key, _, value = rest.pop(0).partition("=")
                env[key] = value
        if name in ("su", "runuser", "sg"):
            # the command may follow the user name: `su - alice -c 'cmd'`, `sg group cmd`
            for k, arg in enumerate(rest):
                if arg in ("-c", "--command", "--session-command") and k + 1 < len(rest):
                    return self.run_script(rest[k + 1], scope.fork(), stdin, f"{where} > {name} -c")
                if arg.startswith("--command="):
                    return self.run_script(arg[10:], scope.fork(), stdin, f"{where} > {name} -c")
            if name == "runuser" and any(a in ("-u", "--user") or a.startswith(("-u", "--user=")) for a in argv[1:i]):
                return self.run_argv(rest, env, stdin, scope, f"{where} > runuser")
            if name == "sg" and len(rest) > 1:
                return self.run_script(" ".join(rest[1:]), scope.fork(), stdin, f"{where} > sg")
            # `su user` with no -c runs a login shell reading stdin
            return self.run_stdin_script(stdin, scope.fork(), f"{where} > {name}") if stdin else None
        if name == "watch":
            if "-x" in argv[1:i] or "--exec" in argv[1:i]:
                return self.run_argv(rest, env, stdin, scope, f"{where} > watch -x")
            return self.run_script(" ".join(rest), scope.fork(), stdin, f"{where} > watch")
        if name in ("gdb", "perf", "valgrind", "firejail", "unshare", "systemd-run"):
            self.scan_for_command(rest, env, stdin, scope, where)
            return None
        rest = rest[positionals:]
        if name == "flock":
            if rest and rest[0] in ("-c", "--command"):
                return self.run_script(rest[1] if len(rest) > 1 else "", scope.fork(), stdin, f"{where} > flock -c")
            if not rest:
                return None
        if rest:
            self.check_env(env, scope, where)
            return self.run_argv(rest, env, stdin, scope, f"{where} > {name}")
        return None

    def scan_for_command(self, args: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> None:
        """Runners whose option syntax the guard does not know: judge the command
        starting at the first word that names a program we know."""
        for i, arg in enumerate(args):
            name = program_name(arg)
            if name is None:
                continue
            name = normalize_program(name)
            if name in DATA_PROGRAMS and name not in self.HANDLERS:
                self.run_argv(args[i:], env, stdin, scope, where)
                return
            if (name in self.HANDLERS or name.startswith("git") or name in SHELLS or name in INTERPRETERS
                    or name in WRAPPERS or name.startswith("python")):
                # an image or host may share a program's name (`alpine/git`): judge
                # from here, and keep looking further on
                before = len(self.blocks)
                self.run_argv(args[i:], env, stdin, scope, where)
                if len(self.blocks) > before:
                    return

    def run_ssh(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        i = 1
        while i < len(argv):
            arg = argv[i]
            if arg == "--":
                i += 1
                break
            if arg.startswith("-") and len(arg) > 1:
                i += 2 if arg[-1] in SSH_OPTS_WITH_ARG and len(arg) == 2 else 1
                continue
            break
        rest = argv[i + 1:]  # after the host
        if rest and rest[0] == "--":
            rest = rest[1:]
        if rest:
            return self.run_script(" ".join(rest), scope.fork(), stdin, f"{where} > ssh (remote command)")
        if stdin:
            return self.run_script(stdin, scope.fork(), "", f"{where} > ssh (remote script on stdin)")
        if stdin is None:
            self.not_sure(False, "ssh runs a remote script read from input the guard cannot see", where, "fail-closed.ssh-stdin")
        return None

    def run_xargs(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        i = 1
        replace = None
        delimiter = None  # None: blanks and newlines (with quotes); else one character
        while i < len(argv):
            arg = argv[i]
            if arg == "--":
                i += 1
                break
            if arg.startswith("--"):
                option, eq, value = arg.partition("=")
                if option == "--replace":
                    replace = value or "{}"
                if option == "--null":
                    delimiter = "\x00"
                if option == "--delimiter":
                    delimiter = decode_ansi_c(value if eq else (argv[i + 1] if i + 1 < len(argv) else "\n"))[:1] or "\n"
                if option == "--arg-file":
                    stdin = self.read_written(value if eq else (argv[i + 1] if i + 1 < len(argv) else ""), scope)
                i += 1 if eq or option not in XARGS_LONG_WITH_ARG else 2
                continue
            if arg.startswith("-") and len(arg) > 1:
                ch = arg[1]
                if ch == "0":
                    delimiter = "\x00"
                if ch == "d":
                    delimiter = decode_ansi_c(arg[2:] or (argv[i + 1] if i + 1 < len(argv) else "\n"))[:1] or "\n"
                if ch == "I":
                    replace = arg[2:] or (argv[i + 1] if i + 1 < len(argv) else "{}")
                    i += 1 if arg[2:] else 2
                    continue
                if ch == "i":
                    replace = arg[2:] or "{}"
                    i += 1
                    continue
                if ch == "a":  # arguments from a file instead of stdin
                    stdin = self.read_written(arg[2:] or (argv[i + 1] if i + 1 < len(argv) else ""), scope)
                took = ch in XARGS_SHORT_WITH_ARG and not arg[2:]
                i += 2 if took else 1
                continue
            break
        template = argv[i:] or ["echo"]
        if stdin is None:
            items = None
        elif delimiter is not None:
            items = [item for item in stdin.split(delimiter) if item]
        elif replace:
            items = [line.strip() for line in stdin.splitlines() if line.strip()]  # -I takes whole lines
        else:
            try:
                items = _split_words(stdin.replace("\n", " "))
            except ShellSyntaxError:
                items = stdin.split()
        if items is None or len(items) > MAX_ALTERNATIVES:
            items = [UNKNOWN]
        if replace:
            commands = [[a.replace(replace, item) for a in template] for item in items]
        else:
            commands = [template + items] if items != [UNKNOWN] else [template + [UNKNOWN]]
        for command in commands:
            self.run_argv(command, env, None, scope, f"{where} > xargs")
        return None

    def run_parallel(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        i = 1
        while i < len(argv) and argv[i].startswith("-"):
            i += 2 if argv[i] in PARALLEL_OPTS_WITH_ARG else 1
        rest = argv[i:]
        values: list[str] = []
        template = rest
        for sep in (":::", "::::", ":::+", "::::+"):
            if sep in rest:
                cut = rest.index(sep)
                template = rest[:cut]
                values = [v for v in rest[cut + 1:] if v not in (":::", "::::", ":::+", "::::+")]
                if sep.startswith("::::"):
                    values = [UNKNOWN]
                break
        else:
            values = [UNKNOWN] if stdin is None else stdin.split()
        if len(values) > MAX_ALTERNATIVES:
            values = [UNKNOWN]
        for value in values or [""]:
            text = " ".join(template)
            text = text.replace("{}", value) if "{}" in text else text + " " + shell_quote(value)
            self.run_script(text, scope.fork(), None, f"{where} > parallel")
        return None

    def run_awk(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
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
                    self.not_sure(False, f"awk runs `{show(path)}`, written in this command with content that cannot be seen", where, "fail-closed.script-content")
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
            self.judge_code(name, program, scope, where, starts_programs=True)
            # the commands may come from the input lines (`system($0)`): judge them as run
            inputs = [self.read_written(path, scope) for path in files if "=" not in path] if files else [stdin]
            for text in inputs:
                if text is None:
                    self.not_sure(False, f"{name} runs commands built from input the guard cannot see", where,
                                  "fail-closed.awk-input", PLAIN_SCRIPT)
                else:
                    self.run_script(text, scope.fork(), "", f"{where} > {name} input lines")
        return None

    def judge_makefiles(self, texts: list[tuple[str, str | None]], scope: Scope, where: str) -> None:
        """The recipes of makefiles make reads (source, text; None when unseen)."""
        for source, text in texts:
            if text is None:
                if source not in ("--eval",) and (source in ("-", "/dev/stdin") or lookup_file(scope.files, source)[0]):
                    self.not_sure(False, f"make reads a makefile `{show(source)}` the guard cannot see", where,
                                  "fail-closed.makefile", PLAIN_SCRIPT)
                continue
            for command in _make_commands(text):
                self.run_script(command, scope.fork(), "", f"{where} > make recipe")

    def run_editor(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
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
                commands.extend((self.read_written(argv[i + 1], scope) or "").splitlines())
                i += 2
                continue
            i += 1
        if ex_mode or name in ("ed", "red"):
            if stdin is None:
                self.not_sure(False, f"{name} reads editor commands from input the guard cannot see", where,
                              "fail-closed.editor-input", PLAIN_SCRIPT)
            else:
                commands.extend(stdin.splitlines())
        for command in commands:
            shell = _editor_shell_command(command)
            if shell is not None:
                self.run_script(shell, scope.fork(), "", f"{where} > {name} !")
            elif "system(" in command:
                self.judge_code(name, command, scope, where, starts_programs=True)
        return None

    def run_eval(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        return self.run_script(" ".join(argv[1:]), scope, stdin, f"{where} > eval")

    def run_source(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        if len(argv) < 2:
            return None
        saved = scope.positional
        if len(argv) > 2:
            scope.positional = list(argv[2:])
        try:
            return self.run_file(argv[1], scope, stdin, f"{where} > source {show(argv[1])}")
        finally:
            scope.positional = saved

    def run_trap(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        args = [a for a in argv[1:] if a not in ("-p", "-l", "--")]
        if len(args) >= 2 and args[0] != "-":
            self.run_script(args[0], scope, "", f"{where} > trap action")
        return None

    def run_ralph(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        words = [a for a in argv[1:] if not a.startswith("-")]
        if len(words) >= 2 and words[0].lower() == "stream" and words[1].lower() == "merge":
            self.block(argv, "ralph stream merge merges a stream into the main branch", where, "ralph.stream-merge")
        elif words and UNKNOWN in words[0]:
            self.not_sure(False, "the ralph subcommand is only known when the command runs", where, "fail-closed.ralph-subcommand")
        return None

    def run_alias(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        for arg in argv[1:]:
            if "=" in arg and not arg.startswith("-"):
                name, _, value = arg.partition("=")
                scope.aliases[name] = value
                self.note(where, f"defines alias {name}")
        return None

    def run_alias_call(self, argv: list[str], stdin: str | None, scope: Scope, where: str) -> str | None:
        """A command word that is an alias this command defined: the alias text
        with the arguments after it, judged as shell source."""
        word = argv[0]
        self.note(where, f"alias {word} -> {scope.aliases[word]}")
        text = scope.aliases[word] + " " + " ".join(shell_quote(a) for a in argv[1:])
        self.call_depth += 1
        try:
            return self.run_script(text, scope, stdin, f"{where} > alias {word}")
        finally:
            self.call_depth -= 1

    def run_unalias(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        for arg in argv[1:]:
            if arg == "-a":
                scope.aliases.clear()
            scope.aliases.pop(arg, None)
        return None

    def run_unset(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
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

    def run_read(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
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

    def run_mapfile(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        for callback in _option_values(argv[1:], ("-C",)):
            # mapfile -C runs the callback with an index and the line appended
            self.run_script(callback + " 0 line", scope.fork(), "", f"{where} > mapfile -C")
        names = [a for k, a in enumerate(argv[1:], 1) if not a.startswith("-") and argv[k - 1] not in ("-C", "-c", "-d", "-n", "-O", "-s", "-u")]
        name = names[-1] if names else "MAPFILE"
        scope.arrays[name] = [UNKNOWN] if stdin is None else stdin.splitlines()
        scope.vars[name] = None if stdin is None else [scope.arrays[name][0] if scope.arrays[name] else ""]
        return None

    def run_shift(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        count = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
        if scope.positional is not None:
            scope.positional = scope.positional[count:]
        return None

    def run_multiplexer(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        """tmux/screen/at: a command string or typed keys run later in a shell."""
        name = program_name(argv[0]) or ""
        if name in ("at", "batch"):
            if "-f" in argv:
                return self.run_file(argv[argv.index("-f") + 1] if argv.index("-f") + 1 < len(argv) else "", scope.fork(), None, f"{where} > {name}")
            return self.run_stdin_script(stdin, scope.fork(), f"{where} > {name} (script on stdin)")
        if name == "screen":
            self.scan_for_command(argv[1:], env, stdin, scope, where)
        for arg in argv[1:]:
            if not arg.startswith("-") and (self.policy.could_push(arg) or UNKNOWN in arg):
                self.run_script(arg, scope.fork(), "", f"{where} > {name} (command string)")
        return None

    def run_hash(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        """hash -p PATH NAME: NAME now runs PATH (the shell's command table)."""
        for path in _option_values(argv[1:], ("-p",)):
            names = [a for a in argv[argv.index(path) + 1:] if not a.startswith("-")] if path in argv else []
            for name in names:
                scope.aliases[name] = shell_quote(path)
                self.note(where, f"hash: {name} runs {show(path)}")
        return None


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


def _literal_spans(code: str) -> list[tuple[int, int, str]]:
    """Quoted strings in interpreter code (', ", `): (start, end, text), escapes decoded C-style."""
    out = []
    i = 0
    n = len(code)
    while i < n and len(out) < 200:
        c = code[i]
        if c in "'\"`":
            j = i + 1
            while j < n and code[j] != c:
                j += 2 if code[j] == "\\" else 1
            body = code[i + 1:j]
            out.append((i, min(j + 1, n), decode_ansi_c(body) if "\\" in body else body))
            i = j + 1
        else:
            i += 1
    return out


def _literal_groups(code: str) -> list[list[tuple[int, str]]]:
    """String literals, those separated only by commas and blanks (a list of
    argv words: `['git', 'log']`, `qw`-free) grouped together; (index, text)."""
    groups: list[list[tuple[int, str]]] = []
    previous_end = -1
    for index, (start, end, text) in enumerate(_literal_spans(code)):
        between = code[previous_end:start] if previous_end >= 0 else None
        if groups and between is not None and between.strip(" \t\n,") == "" and "," in between:
            groups[-1].append((index, text))
        else:
            groups.append([(index, text)])
        previous_end = end
    return groups


def _passed_whole(code: str, spans: list[tuple[int, int, str]], group: list[tuple[int, str]]) -> bool:
    """Is this literal (or list of literals) handed as it is to a process API
    (`run(['git', 'log'])`, `execSync('git log')`, a backtick string), not
    stored, sliced or joined with other text first?"""
    start, _, _ = spans[group[0][0]]
    _, end, _ = spans[group[-1][0]]
    if code[start] == "`":
        return True
    after = code[end:end + 8].lstrip(" \t\n]")
    if after[:1] in ("[", ".", "+", "*", "%"):
        return False
    before = code[max(0, start - 40):start].rstrip(" \t\n[(,").lower()
    return before.endswith(PROCESS_CALLS)


def _without_literals(code: str) -> str:
    pieces = []
    previous = 0
    for start, end, _ in _literal_spans(code):
        pieces.append(code[previous:start])
        previous = end
    pieces.append(code[previous:])
    return " ".join(pieces)
