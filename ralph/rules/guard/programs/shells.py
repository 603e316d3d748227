"""The models of shells and interpreters: programs whose arguments are code.

Shells (`bash -c`, a script file written earlier in the command, a script on
stdin, `--rcfile`), the builtins that run shell code (`eval`, `source`, `.`,
`trap`) and interpreters (python, node, perl, ... from
ralph.rules.guard.programs.facts.INTERPRETERS): their code strings, a file
the command wrote, or stdin. Interpreter code that can start programs is
judged by the commands its string literals spell (judge_code, which the
data-executing programs use too: awk, sed `e`, ed/vim).
"""
from ralph.rules.guard.interp import Analysis
from ralph.rules.guard.programs.facts import EXEC_APIS, INTERPRETERS
from ralph.rules.guard.state import ENCODINGS, Scope, file_key, normalize_program, program_name, show
from ralph.rules.guard.syntax.lexer import decode_ansi_c

# interpreter code that reads its own command-line arguments
ARGV_MARKERS = ("argv", "process.argv", "@argv", "$argv", "arguments", "args", "$*", "$@", "...")
# calls that start a process with the literal (list) that follows them
PROCESS_CALLS = ("run", "system", "check_output", "check_call", "call", "popen", "execsync", "exec", "spawn",
                 "spawnsync", "execfile", "execfilesync", "qx", "capture2", "capture3", "shell_exec", "passthru",
                 "proc_open", "command", "getoutput", "getstatusoutput", "output", "$")
# python -m <module> -> the program it is
PYTHON_MODULE_RUNNERS = {"pytest": "pytest", "py.test": "pytest", "tox": "tox", "nox": "nox", "invoke": "invoke",
                         "pre_commit": "pre-commit", "pip": "pip"}
# interpreter calls that delete files (ralph.rules.guard.programs.destroy.DELETE_CALLS has them all)
DELETE_HINTS = ("rmtree", "rm_r", "rmsync", "rmdirsync", "unlink", "os.remove", "os.rmdir", "rimraf", "remove_tree",
                "remove_dir_all", "removeall", "deltree", "remove-item", "fs.rm(", "fs.promises.rm(", "file.delete(",
                "remove_file", "fileutils.rm", "removedirs")
# programs a string in code may run that delete or overwrite (judged as shell commands)
DESTRUCTIVE_PROGRAMS = frozenset(("rm", "unlink", "shred", "dd", "wipefs", "truncate", "chmod", "chown", "chgrp", "find",
                                  "psql", "mysql", "sqlite3", "mongosh", "dropdb", "redis-cli", "mkfs", "mkfs.ext4"))
DESTRUCTIVE_HINTS = ("rm ", "rm\t", "shred", "dd ", "mkfs", "wipefs", "chmod", "chown", "drop ", "truncate")
# programs whose judged invocation accounts for push/merge words in a string literal
GIT_PROGRAMS = frozenset(("git", "gh", "glab", "hub", "jj", "yadm"))


def run_shell(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """A shell: its `-c` code, the script file it runs, or its script on stdin."""
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
                analysis.run_file(argv[i + 1], scope.fork(), "", f"{where} > {argv[0]} {arg}")
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
        return analysis.run_script(rest[0], inner, stdin, f"{where} > {name} -c")
    if rest and not read_stdin:
        inner.positional = list(rest[1:])
        return analysis.run_file(rest[0], inner, stdin, f"{where} > {name} {show(rest[0])}")
    inner.positional = list(rest)
    return analysis.run_stdin_script(stdin, inner, f"{where} > {name} (script on stdin)")


def run_interpreter(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """An interpreter, up to its code: a code option (`-c`, `-e`, ...), a file
    the command wrote, or stdin (`python -m pytest` runs no code string)."""
    name = normalize_program(program_name(argv[0]) or "")
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
            module = argv[i + 1] if i + 1 < len(argv) else ""
            if module in PYTHON_MODULE_RUNNERS:
                return analysis.run_argv([PYTHON_MODULE_RUNNERS[module]] + argv[i + 2:], env, stdin, scope, f"{where} > {name} -m {module}")
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
                    analysis.not_sure(False, f"{name} runs `{show(path)}`, written in this command with content that cannot be seen", where, "fail-closed.script-content")
                    return None
            else:
                text = analysis.read_project_file(path, scope)
                if text is not None:
                    inner = scope.fork()
                    inner.positional = list(args)
                    return analysis.model("disk_scripts").run_file_on_disk(analysis, text, path, inner, stdin, f"{where} > {name} {show(path)}", name)
                analysis.note(where, f"{name} runs file {show(path)} (not visible to the guard)")
                return None
        else:
            code = stdin
            if code is None:
                analysis.not_sure(False, f"{name} reads its program from input the guard cannot see", where, "fail-closed.interpreter-stdin")
                return None
    judge_code(analysis, name, code or "", scope, where, args=args)
    return None


def judge_code(analysis: Analysis, name: str, code: str, scope: Scope, where: str, starts_programs: bool = False,
               args: list[str] | None = None, from_disk: bool = False) -> None:
    """Interpreter code that can start programs: judge the commands its
    string literals spell (a list of literals as one argv), and the
    program's own arguments when the code passes its argv to a process API.
    Block when push/merge words or encodings remain that no judged git
    command accounts for. Code that deletes files (shutil.rmtree, ...) is
    judged by the paths it passes (ralph.rules.guard.programs.destroy).
    from_disk: the project's own file (a test, a noxfile, a script): only a
    push/merge word in a string, in code that names git, counts; encodings
    and words outside strings do not."""
    low = code.lower()
    if any(call in low for call in DELETE_HINTS):
        analysis.model("destroy").judge_code_deletions(analysis, name, code, scope, where, from_disk)
    if from_disk and not starts_programs and not analysis.policy.mentions_push(low) and not any(w in low for w in DESTRUCTIVE_HINTS):
        analysis.note(where, f"{name} code names neither push/merge nor a destructive program")
        return
    starts_programs = starts_programs or any(api in low for api in EXEC_APIS)
    if not starts_programs:
        analysis.note(where, f"{name} code starts no programs")
        return
    before = (len(analysis.blocks), len(analysis.unsure))
    if args and any(marker in low for marker in ARGV_MARKERS):
        analysis.note(where, f"{name} code passes its arguments to a process API")
        analysis.run_argv(list(args), {}, None, scope.fork(), f"{where} > {name} argv")
    explained: set[int] = set()
    spans = literal_spans(code)
    groups = _literal_groups(code)
    for group in groups:
        words = [code_literal for _, code_literal in group]
        if from_disk and not (_passed_whole(code, spans, group) or _stored_then_run(code, spans, group)):
            continue  # a string a test or script only compares or prints
        mark = (len(analysis.blocks), len(analysis.unsure))
        if len(words) > 1:
            analysis.run_argv(words, {}, None, scope.fork(), f"{where} > {name} argv list")
        elif analysis.policy.could_push(words[0]) or "git" in words[0].lower() or _may_destroy(words[0]):
            analysis.run_script(words[0], scope.fork(), "", f"{where} > {name} string")
        first = (words[0].split() or [""])[0]
        if ((len(analysis.blocks), len(analysis.unsure)) == mark and program_name(first) in GIT_PROGRAMS
                and _passed_whole(code, spans, group)):
            explained.update(index for index, _ in group)
    if len(analysis.blocks) > before[0]:
        return
    literals = [literal for group in groups for literal in group]
    if from_disk:
        risky = False  # the project's own code: only what it hands to a process API counts (judged above)
    else:
        outside = _without_literals(code)
        risky = (analysis.policy.could_push(outside) or any(e in low for e in ENCODINGS)
                 or any(analysis.policy.could_push(text) for index, text in literals if index not in explained))
    if risky:
        analysis.blocks.append((f"{name} code", f"{name} code that starts programs mentions push/merge/pull or encodes text", where, "interpreter.code"))
        analysis.note(where, f"{name} code can start programs and could push or merge -> BLOCK")
    else:
        analysis.note(where, f"{name} code starts programs but none that push or merge")


def _may_destroy(text: str) -> bool:
    """Could this string be a shell command that deletes or overwrites?"""
    return any((program_name(word) or "") in DESTRUCTIVE_PROGRAMS for word in text.replace(";", " ").replace("&", " ").split()[:40])


# PowerShell's parameters, which it matches case-insensitively by any prefix
# long enough to tell them apart, and by their aliases (`-c`, `-Com`,
# `-Command`; `-e`, `-ec`, `-EncodedCommand`; `-f`, `-File`); `-Name:value`
# carries its value (`/Command` is Windows only: here `/x` is a path)
PWSH_COMMAND = ("command", "c", "commandwithargs", "cwa")
PWSH_ENCODED = ("encodedcommand", "e", "ec", "encodedarguments", "ea")
PWSH_FILE = ("file", "f")
# parameters that take the next word as their value, with their aliases
PWSH_WITH_VALUE = ("executionpolicy", "ex", "ep", "windowstyle", "w", "workingdirectory", "wd", "configurationname", "config",
                   "configurationfile", "inputformat", "inp", "if", "outputformat", "o", "of", "settingsfile", "settings",
                   "custompipename", "psconsolefile", "psconfigfile")
PWSH_PLAIN = "Run the git commands themselves in the Bash tool's shell, not through PowerShell, one plain command per line."


def _pwsh_parameter(word: str, names: tuple[str, ...]) -> bool:
    """Is `word` (a parameter without its dash, lower case) one of `names`:
    itself, or a prefix of two letters or more of one?"""
    return word in names or (len(word) >= 2 and any(name.startswith(word) for name in names))


def run_powershell(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """PowerShell (pwsh, powershell): a shell, not an interpreter of string
    literals: its -Command text (the rest of the line), its -File script and
    a script on stdin are commands, judged as a shell's. Its command syntax
    agrees with bash's for a plain `git push origin main`; what bash cannot
    parse counts as unknown, and text that mentions push, merge or pull with
    no git call judged in it (`Invoke-Expression "git push"`) blocks.
    -EncodedCommand (base64 the guard does not decode) blocks."""
    name = normalize_program(program_name(argv[0]) or "pwsh")
    inner = scope.fork()
    as_file = name == "pwsh"  # pwsh takes its first word as -File; Windows PowerShell as -Command
    i = 1
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-") or arg == "-":
            break
        word, colon, _ = arg[1:].lower().partition(":")
        i += 1
        if _pwsh_parameter(word, PWSH_ENCODED):
            analysis.not_sure(True, f"{name} {arg} runs base64-encoded code the guard does not decode", where, "fail-closed.powershell-encoded",
                              PWSH_PLAIN)
            return None
        if _pwsh_parameter(word, PWSH_COMMAND):
            as_file = False
            break
        if _pwsh_parameter(word, PWSH_FILE):
            as_file = True
            break
        # a value never starts with a dash: `-v -c ...` is two parameters
        if not colon and _pwsh_parameter(word, PWSH_WITH_VALUE) and i < len(argv) and not argv[i].startswith("-"):
            i += 1
    rest = argv[i:]
    if not rest or rest == ["-"]:
        if stdin is None:
            analysis.note(where, f"{name} without a command: an interactive shell")
            return None
        return analysis.run_stdin_script(stdin, inner, f"{where} > {name} (script on stdin)")
    text = " ".join(rest)
    before = len(analysis.blocks)
    if as_file or rest[0].lower().endswith(".ps1"):
        inner.positional = list(rest[1:])
        output = analysis.run_file(rest[0], inner, stdin, f"{where} > {name} {show(rest[0])}")
    else:
        output = analysis.run_script(text, inner, stdin, f"{where} > {name} -Command")
    if len(analysis.blocks) == before and analysis.policy.mentions_push(text):
        # the command line mentions a push that no judged git call accounts for
        analysis.not_sure(True, f"{name} gets `{show(text)[:80]}`, which mentions push, merge or pull in a form the guard cannot follow",
                          where, "fail-closed.powershell-code", PWSH_PLAIN)
    return output


def run_eval(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    return analysis.run_script(" ".join(argv[1:]), scope, stdin, f"{where} > eval")


def run_source(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    if len(argv) < 2:
        return None
    saved = scope.positional
    if len(argv) > 2:
        scope.positional = list(argv[2:])
    try:
        return analysis.run_file(argv[1], scope, stdin, f"{where} > source {show(argv[1])}")
    finally:
        scope.positional = saved


def run_trap(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    args = [a for a in argv[1:] if a not in ("-p", "-l", "--")]
    if len(args) >= 2 and args[0] != "-":
        analysis.run_script(args[0], scope, "", f"{where} > trap action")
    return None


def literal_spans(code: str) -> list[tuple[int, int, str]]:
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
    for index, (start, end, text) in enumerate(literal_spans(code)):
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


def _stored_then_run(code: str, spans: list[tuple[int, int, str]], group: list[tuple[int, str]]) -> bool:
    """Is this literal (or list) stored in a variable that is then handed to a
    process API (`cmd = ["git", "push"]` ... `subprocess.run(cmd)`)?"""
    start, _, _ = spans[group[0][0]]
    _, end, _ = spans[group[-1][0]]
    before = code[max(0, start - 60):start].rstrip(" \t[(")
    if not before.endswith("=") or before.endswith(("==", "!=", "<=", ">=")):
        return False
    head = before[:-1].rstrip()
    name_start = len(head)
    while name_start > 0 and (head[name_start - 1].isalnum() or head[name_start - 1] in "_."):
        name_start -= 1
    name = head[name_start:]
    if not name or not (name[0].isalpha() or name[0] == "_"):
        return False
    low = code.lower()
    at = code.find(name, end)
    while at >= 0:
        left = low[max(0, at - 40):at].rstrip(" \t[(*,")
        if left.endswith(PROCESS_CALLS) and not code[at + len(name):at + len(name) + 1].isalnum():
            return True
        at = code.find(name, at + len(name))
    return False


def _without_literals(code: str) -> str:
    pieces = []
    previous = 0
    for start, end, _ in literal_spans(code):
        pieces.append(code[previous:start])
        previous = end
    pieces.append(code[previous:])
    return " ".join(pieces)
