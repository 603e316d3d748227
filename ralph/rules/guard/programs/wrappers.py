"""The models of programs that run their arguments as a command.

Wrappers (sudo, env, timeout, nice, flock, su, watch, ... with their options:
ralph.rules.guard.programs.facts.WRAPPERS), remote runners (ssh), and the
programs that build commands from data: xargs (from stdin or -a files),
find -exec, parallel, tmux/screen/at (a command string run later), and
busybox/toybox (argv[1] is the program).
"""
from ralph.rules.guard.expand import split_words
from ralph.rules.guard.interp import Analysis
from ralph.rules.guard.programs.facts import (ASSIGNING_WRAPPERS, PARALLEL_OPTS_WITH_ARG, SSH_OPTS_WITH_ARG, WRAPPER_SCRIPT_OPTS, WRAPPERS,
                                              XARGS_LONG_WITH_ARG, XARGS_SHORT_WITH_ARG)
from ralph.rules.guard.state import MAX_ALTERNATIVES, UNKNOWN, Scope, normalize_program, program_name, read_written, shell_quote
from ralph.rules.guard.syntax.lexer import ShellSyntaxError, decode_ansi_c


def run_wrapper(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """A wrapper (facts.WRAPPERS): its options taken off, the command it runs judged."""
    name = normalize_program(program_name(argv[0]) or "")
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
                return analysis.run_script(script, scope.fork(), stdin, f"{where} > {name} {option}")
            if name == "env" and option == "--split-string":
                split_string = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
                i += 1 if eq else 2
                break
            if name == "gdb" and option == "--args":
                i += 1
                break
            i += 1 if eq or option not in long_with_arg else 2
            continue
        if name == "env" and arg == "-":
            i += 1  # `env -`: -i, an empty environment
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
                    return analysis.run_script(script, scope.fork(), stdin, f"{where} > {name} -{ch}")
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
            rest = split_words(split_string) + rest
        except ShellSyntaxError:
            analysis.not_sure(False, "env -S string cannot be read", where, "fail-closed.env-split-string")
            return None
        while rest and "=" in rest[0] and not rest[0].startswith("-"):
            key, _, value = rest.pop(0).partition("=")
            env[key] = value
    if name in ("su", "runuser", "sg"):
        # the command may follow the user name: `su - alice -c 'cmd'`, `sg group cmd`
        for k, arg in enumerate(rest):
            if arg in ("-c", "--command", "--session-command") and k + 1 < len(rest):
                return analysis.run_script(rest[k + 1], scope.fork(), stdin, f"{where} > {name} -c")
            if arg.startswith("--command="):
                return analysis.run_script(arg[10:], scope.fork(), stdin, f"{where} > {name} -c")
        if name == "runuser" and any(a in ("-u", "--user") or a.startswith(("-u", "--user=")) for a in argv[1:i]):
            return analysis.run_argv(rest, env, stdin, scope, f"{where} > runuser")
        if name == "sg" and len(rest) > 1:
            return analysis.run_script(" ".join(rest[1:]), scope.fork(), stdin, f"{where} > sg")
        # `su user` with no -c runs a login shell reading stdin
        return analysis.run_stdin_script(stdin, scope.fork(), f"{where} > {name}") if stdin else None
    if name == "watch":
        if "-x" in argv[1:i] or "--exec" in argv[1:i]:
            return analysis.run_argv(rest, env, stdin, scope, f"{where} > watch -x")
        return analysis.run_script(" ".join(rest), scope.fork(), stdin, f"{where} > watch")
    if name in ("gdb", "perf", "valgrind", "firejail", "unshare", "systemd-run"):
        analysis.scan_for_command(rest, env, stdin, scope, where)
        return None
    rest = rest[positionals:]
    if name == "flock":
        if rest and rest[0] in ("-c", "--command"):
            return analysis.run_script(rest[1] if len(rest) > 1 else "", scope.fork(), stdin, f"{where} > flock -c")
        if not rest:
            return None
    if rest:
        analysis.check_env(env, scope, where)
        return analysis.run_argv(rest, env, stdin, scope, f"{where} > {name}")
    return None


def run_ssh(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
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
        return analysis.run_script(" ".join(rest), scope.fork(), stdin, f"{where} > ssh (remote command)")
    if stdin:
        return analysis.run_script(stdin, scope.fork(), "", f"{where} > ssh (remote script on stdin)")
    if stdin is None:
        analysis.not_sure(False, "ssh runs a remote script read from input the guard cannot see", where, "fail-closed.ssh-stdin")
    return None


def run_xargs(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
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
                stdin = read_written(value if eq else (argv[i + 1] if i + 1 < len(argv) else ""), scope)
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
                stdin = read_written(arg[2:] or (argv[i + 1] if i + 1 < len(argv) else ""), scope)
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
            items = split_words(stdin.replace("\n", " "))
        except ShellSyntaxError:
            items = stdin.split()
    if items is None or len(items) > MAX_ALTERNATIVES:
        items = [UNKNOWN]
    if replace:
        commands = [[a.replace(replace, item) for a in template] for item in items]
    else:
        commands = [template + items] if items != [UNKNOWN] else [template + [UNKNOWN]]
    for command in commands:
        analysis.run_argv(command, env, None, scope, f"{where} > xargs")
    return None


def run_parallel(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
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
        values = [UNKNOWN] if stdin is None else [line for line in stdin.splitlines() if line]  # one input per line
    if len(values) > MAX_ALTERNATIVES:
        values = [UNKNOWN]
    for value in values or [""]:
        text = " ".join(template)
        if not template:
            text = value  # no command: each input is one
        else:
            text = text.replace("{}", value) if "{}" in text else text + " " + shell_quote(value)
        analysis.run_script(text, scope.fork(), None, f"{where} > parallel")
    return None


def run_find(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """find runs -exec commands with `{}` a path it found (below a start path),
    and deletes with -delete (ralph.rules.guard.programs.destroy)."""
    found = find_targets(argv)
    if "-delete" in argv:
        analysis.model("destroy").judge_find_delete(analysis, argv, found, scope, where)
    runs = any(arg in ("-exec", "-execdir", "-ok", "-okdir") for arg in argv)
    i = 1
    while i < len(argv):
        if argv[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(argv) and argv[j] not in (";", "+"):
                j += 1
            for path in found[:MAX_ALTERNATIVES]:
                # (-execdir runs in the found file's directory; the full path says the same place)
                command = [a.replace("{}", path) for a in argv[i + 1:j]]
                analysis.run_argv(command, env, None, scope, f"{where} > find {argv[i]}")
            i = j + 1
        else:
            i += 1
    if runs or any(arg in ("-print0", "-printf", "-fprint", "-fprint0", "-fprintf", "-ls", "-fls") for arg in argv):
        return None
    return "".join(path + "\n" for path in found)  # each a path below a start path


def find_targets(argv: list[str]) -> list[str]:
    """What find finds, per start path: a path below it whose tail is only
    known when it runs (named as its -name pattern says, when it has one)."""
    starts = []
    i = 1
    while i < len(argv) and argv[i] in ("-H", "-L", "-P"):
        i += 1
    while i < len(argv) and not argv[i].startswith(("-", "(", "!")):
        starts.append(argv[i])
        i += 1
    names = [argv[k + 1] for k in range(i, len(argv) - 1) if argv[k] in ("-name", "-iname")]
    leaf = "/" + names[0] if len(names) == 1 and "/" not in names[0] else ""
    return [start.rstrip("/") + "/" + UNKNOWN + leaf for start in (starts or ["."])]


def run_multiplexer(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """tmux/screen/at: a command string or typed keys run later in a shell."""
    name = program_name(argv[0]) or ""
    if name in ("at", "batch"):
        if "-f" in argv:
            return analysis.run_file(argv[argv.index("-f") + 1] if argv.index("-f") + 1 < len(argv) else "", scope.fork(), None, f"{where} > {name}")
        return analysis.run_stdin_script(stdin, scope.fork(), f"{where} > {name} (script on stdin)")
    if name == "screen":
        analysis.scan_for_command(argv[1:], env, stdin, scope, where)
    for arg in argv[1:]:
        if not arg.startswith("-") and (analysis.policy.could_push(arg) or UNKNOWN in arg):
            analysis.run_script(arg, scope.fork(), "", f"{where} > {name} (command string)")
    return None


def run_multicall(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """busybox/toybox: argv[1] is the program."""
    return analysis.run_argv(argv[1:], env, stdin, scope, where)
