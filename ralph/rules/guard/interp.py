"""The guard's walk over a command (mvdan/sh's interp/): what it would run,
what it blocks, what it cannot know.

Analysis walks the syntax tree (ralph.rules.guard.syntax) in order as a
shell would run it, keeping what the command itself defines (variables,
arrays, positional parameters, functions, aliases, files it writes; the
Scope), expanding each word (ralph.rules.guard.expand, its base class) and
judging each resulting argv in run_argv: aliases and functions the command
defined, scripts it wrote, then the program's model.

The program models are plain modules under ralph.rules.guard.programs, one
per family (git, forges, shells and interpreters, wrappers, data-executing
programs, shell builtins), each a set of functions taking the analysis as
their first argument. The table of models (ralph.rules.guard.models, handed
to the analysis by the judge) says which function of which module models a
program, and loads that module the first time a command needs it, so that a
command pays only for the models of the programs it runs
(tests/test_guard.py, TYPICAL_COMMANDS). A model imports this module, never
the table: it reaches another model through the analysis
(`analysis.model("shells")`).
"""
import os

from ralph.plugins import load
from ralph.rules.guard.expand import Expander
from ralph.rules.guard.policy import GuardPolicy
from ralph.rules.guard.programs.facts import COMMAND_ENV, DATA_PROGRAMS, RUNNER_SUBCOMMANDS
from ralph.rules.guard.state import (GLOB, MAX_ALTERNATIVES, MAX_CALL_DEPTH, UNKNOWN, Budget, Scope, Surroundings, bare_repository,
                                     file_key, lookup_file, normalize_program, program_name, shell_quote, show, show_argv)
from ralph.rules.guard.syntax.lexer import decode_ansi_c
from ralph.rules.guard.syntax.parser import Parser, ShellSyntaxError, TooDeep, parse

FUNCTION = type(lambda: ())  # for annotations: collections.abc.Callable would cost every hook call its import

# variables bash expands as prompt strings, and those naming a file a shell sources
PROMPT_VARS = frozenset(("PS0", "PS1", "PS2", "PS4"))
FILE_ENV = frozenset(("BASH_ENV", "ENV"))
PLAIN_SCRIPT = ("Write the commands themselves on the command line (not in a file, descriptor or "
                "generated script), one per line.")

# where writing loses nothing
HARMLESS_TARGETS = frozenset(("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"))
# the most project files a command's task runners and scripts are read for
MAX_READ_BYTES = 8 * 1024 * 1024

RUN_PLAINLY = ("Run what the task runner or script would run as plain commands on the command line, one per "
               "line, so that each can be checked (commit locally; pushing and merging are left to the person).")

# functions bash calls by itself
SHELL_CALLED_FUNCTIONS = frozenset(("command_not_found_handle", "command_not_found_handler"))


class Analysis(Expander):
    """One walk over a command: what it would run, what it blocks, what it cannot know."""

    __slots__ = ("policy", "budget", "text", "blocks", "unsure", "trace", "memo", "nesting", "call_depth", "cwd", "remotes",
                 "allow_rule", "around", "saves", "read_bytes", "models")

    def __init__(self, text: str, policy: GuardPolicy, budget: Budget, models: object) -> None:
        self.models = models  # ralph.rules.guard.models: program -> model, loaded on first use
        self.cwd = ""
        self.around = Surroundings()
        # work to save before the command runs: (kind, target, rule id, what, why); see save()
        self.saves: list[tuple[str, str, str, str, str]] = []
        self.read_bytes = [0]  # bytes of project files read so far (shared with probes), bounded by MAX_READ_BYTES
        self.remotes: tuple[str, ...] | FUNCTION = ()  # see local_remotes
        self.allow_rule = ""  # set when a [guard] family switch let something through
        self.policy = policy
        self.budget = budget
        self.text = text
        self.blocks: list[tuple[str, str, str, str]] = []  # (what, why, where, rule id)
        self.unsure: list[tuple[bool, str, str, str, str]] = []  # (strict, why, where, rule id, advice)
        self.trace: list[str] = []
        self.memo: set = set()
        self.nesting = 0
        self.call_depth = 0

    def local_remotes(self) -> tuple[str, ...]:
        """The repository's local-path remotes; read now when judge_command was
        given the function that reads them (most commands never ask)."""
        if isinstance(self.remotes, FUNCTION):
            self.remotes = absolute_paths(self.remotes())
        return self.remotes

    def status_of(self, node: tuple, scope: Scope) -> int | str | None:
        """certain_status, unless the command can disable builtins (`enable -n true`)."""
        return None if "enable" in self.text else certain_status(node, scope)

    def note(self, where: str, text: str) -> None:
        if len(self.trace) < 400:
            self.trace.append(f"{where}: {text}" if where else text)

    def block(self, argv: list[str], why: str, where: str, rule: str) -> None:
        what = show_argv(argv)
        self.blocks.append((what, why, where, rule))
        self.note(where, f"`{what}` -> BLOCK [{rule}] ({why})")

    def not_sure(self, strict: bool, why: str, where: str, rule: str, advice: str = "") -> None:
        """Something that decides the outcome cannot be known. strict: block
        whatever the text says; else block only when the text could push.
        advice: how to write it plainly (defaults to REWRITE)."""
        self.unsure.append((strict, why, where, rule, advice))
        self.note(where, f"UNSURE [{rule}]: {why}")

    def forge_block(self, family: str, argv: list[str], why: str, where: str, rule: str) -> None:
        """Block, unless the [guard] switch of this family of blocks
        (ralph.rules.guard.policy.FAMILIES) lets it through."""
        if self.policy.families.get(family, True):
            self.block(argv, why, where, rule)
        else:
            self.note(where, f"{why}: allowed by ralph.toml [guard] {family} = false")
            self.allow_rule = "allow.config-" + family.replace("_", "-")

    family_block = forge_block

    def save(self, kind: str, target: str, argv: list[str], why: str, where: str, rule: str, what: str = "") -> None:
        """The command destroys work inside the project that a snapshot can
        hold: ralph.claude.bash_guard saves it before allowing the command.
        kind: "tree" (the work tree and index; target: a path whose ignored
        files to save too, "" for none, or the argv of a `git clean`),
        "ref" (target: a ref to keep, e.g. refs/heads/x) or "stash" (target:
        stash@{n}, or "*" for every entry)."""
        if not self.policy.families.get("save_before_destroying", True):
            self.note(where, f"{why}: run without saving, as ralph.toml [guard] save_before_destroying = false")
            self.allow_rule = "allow.config-save-before-destroying"
            return
        what = what or show_argv(argv)
        self.saves.append((kind, target, rule, what, why))
        self.note(where, f"`{what}` -> SAVE FIRST [{rule}] ({why})")

    def probe(self) -> "Analysis":
        """A separate analysis of text this command stores for later (a hook,
        an alias, a config value) or a file it runs, sharing this one's
        budget, nesting and surroundings."""
        probe = Analysis(self.text, self.policy, self.budget, self.models)
        probe.nesting = self.nesting
        probe.cwd = self.cwd
        probe.remotes = self.remotes
        probe.around = self.around
        probe.read_bytes = self.read_bytes
        return probe

    def model(self, name: str) -> object:
        """The program-model module `name` (ralph.rules.guard.programs.<name>), loaded on first use."""
        return load(self.models.MODELS[name])

    def pushes(self) -> bool:
        """Did this analysis block a push or merge (not the destruction of work)?"""
        return any(not rule.startswith("destroy.") for _, _, _, rule in self.blocks) or any(u[0] for u in self.unsure)

    def run_script(self, text: str, scope: Scope, stdin: str | None, where: str) -> str | None:
        """Judge a piece of shell source run in `scope`; returns its known output."""
        self.budget.check()
        if not text.strip():
            return ""
        self.nesting += 1
        try:
            if self.nesting > 30:
                raise TooDeep("scripts nested too deep")
            try:
                tree = parse(text, self.nesting, self.budget)
            except ShellSyntaxError as e:
                self.not_sure(False, f"bash cannot parse `{show(text)[:80]}` ({e})", where, "fail-closed.nested-parse-error")
                return None
            return self.run(tree, scope, stdin, False, where)
        finally:
            self.nesting -= 1

    def run_file(self, path: str, scope: Scope, stdin: str | None, where: str) -> str | None:
        """A script file a shell runs (`bash x.sh`, `source x`, `./x.sh`, BASH_ENV):
        judged when it is stdin, a process substitution or a file this command wrote."""
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
            return None
        text = self.read_project_file(path, scope)
        if text is not None:
            return self.model("disk_scripts").run_file_on_disk(self, text, path, scope, stdin, where)
        self.note(where, f"runs script file {path} (not visible to the guard)")
        return None

    def disk_path(self, path: str, scope: Scope) -> str | None:
        """The absolute path of a file the command names, for reading it from
        disk; None when it cannot be known or nothing is read."""
        if self.around.files is None or UNKNOWN in path or GLOB in path or not path or path.startswith("\x03"):
            return None
        if not self.policy.families.get("task_runners", True):
            return None
        if path.startswith("~/") and self.around.home:
            path = self.around.home + path[1:]
        if path.startswith("/"):
            return os.path.normpath(path)
        if not self.cwd or UNKNOWN in scope.cwd or scope.cwd.startswith("~"):
            return None
        return os.path.normpath(os.path.join(self.cwd, scope.cwd, path))

    def read_project_file(self, path: str, scope: Scope) -> str | None:
        """A file as the command finds it: written earlier in the command, else
        on disk (through the reader ralph.claude.bash_guard passes in; the
        reads of one command are bounded by MAX_READ_BYTES). None: unknown."""
        found, content = lookup_file(scope.files, path)
        if found:
            return content
        full = self.disk_path(path, scope)
        if full is None or self.read_bytes[0] > MAX_READ_BYTES:
            return None
        text = self.around.files.read(full)
        if text is not None:
            self.read_bytes[0] += len(text) + 1
        return text

    def run_stdin_script(self, stdin: str | None, scope: Scope, where: str) -> str | None:
        """A script a shell reads from its stdin, when the guard can see it."""
        if stdin is None:
            self.not_sure(False, "a shell reads its script from input the guard cannot see", where, "fail-closed.shell-stdin")
            return None
        return self.run_script(stdin, scope, "", where)

    def run(self, node: tuple, scope: Scope, stdin: str | None, cond: bool, where: str) -> str | None:
        """Judge one tree node; returns its output when known (for pipes and `$(..)`)."""
        self.budget.check()
        kind = node[0]
        if kind == "cmd":
            return self.run_simple(node, scope, stdin, cond, where)
        if kind == "seq":
            outputs = []
            for child in node[1]:
                outputs.append(self.run(child, scope, stdin, cond, where))
                if self.status_of(child, scope) == "exit":
                    self.note(where, "`exit`: nothing after it runs")
                    break
            return None if None in outputs else "".join(outputs)
        if kind == "and":
            # `false && x`, `true || x`: x never runs; any other status is unknown
            outputs = []
            status: int | str | None = None
            for i, child in enumerate(node[1]):
                if i > 0 and status in (0, 1) and (node[2][i - 1] == "&&") != (status == 0):
                    self.note(where, f"skips `{node[2][i - 1]}` branch: the status before it is always {status}")
                    continue
                outputs.append(self.run(child, scope, stdin, cond or i > 0, where))
                status = self.status_of(child, scope) if i == 0 or status is not None else None
                if status == "exit":
                    break
            return None if None in outputs else "".join(outputs)
        if kind == "pipe":
            data = stdin
            for child in node[1]:
                data = self.run(child, scope.fork(), data, cond, where)
            return data
        if kind in ("sub", "grp", "if", "while", "for", "case"):
            redirected, _ = self.run_redirects(node[-1], scope, where)
            if redirected != "\x02":
                stdin = redirected
        if kind in ("sub", "grp"):
            return self.run(node[1], scope.fork() if kind == "sub" else scope, stdin, cond, where)
        return self.run_compound(node, scope, stdin, cond, where)

    def run_compound(self, node: tuple, scope: Scope, stdin: str | None, cond: bool, where: str) -> str | None:
        """if/while/for/case nodes (their redirects already read), function
        definitions, `(( ))` and `[[ ]]`."""
        kind = node[0]
        if kind == "if":
            parts = node[1]
            for i in range(0, len(parts), 2):
                if i + 1 == len(parts):  # else
                    self.run(parts[i], scope, stdin, True, where)
                    break
                self.run(parts[i], scope, stdin, cond or i > 0, where)
                status = self.status_of(parts[i], scope)
                if status != 1:
                    self.run(parts[i + 1], scope, stdin, True, where)
                else:
                    self.note(where, "skips a branch whose condition is always false")
                if status == 0:
                    break  # later elif/else branches never run
            return None
        if kind == "while":
            self.run(node[1], scope, stdin, True, where)
            if self.status_of(node[1], scope) == 1:
                self.note(where, "skips a loop body whose condition is always false")
                return None
            self.run(node[2], scope, stdin, True, where)
            return None
        if kind == "for":
            _, name, words, body, redirs = node
            if words is None:
                values: list[str] | None = None if scope.positional is None else list(scope.positional)
            else:
                values = []
                for word in words:
                    for fields in self.expand(word, scope, where):
                        values.extend(fields)
                if len(values) > MAX_ALTERNATIVES * 4:
                    values = None
            scope.vars[name] = values if values is None else (values or [""])
            self.run(body, scope, stdin, True, where)
            return None
        if kind == "case":
            _, subject, arms, redirs = node
            self.expand(subject, scope, where)
            for patterns, body in arms:
                for pattern in patterns:
                    self.expand(pattern, scope, where)
                self.run(body, scope, stdin, True, where)
            return None
        if kind == "func":
            scope.funcs[node[1]] = node[2]
            self.note(where, f"defines function {node[1]}()")
            if node[1] in SHELL_CALLED_FUNCTIONS:
                # bash calls it by itself (a command not found): judge it as called
                self.run(node[2], scope.fork(), None, True, f"{where} > {node[1]}()")
            return ""
        if kind == "arith":
            self.expand_parts(node[1], scope, where, in_quotes=True)
            return ""
        if kind == "test":
            for word in node[1]:
                self.expand(word, scope, where)
            return ""
        return None

    def run_redirects(self, redirs: list, scope: Scope, where: str) -> tuple[str | None, list[tuple[str, bool]]]:
        """Expand redirect targets; returns (stdin text when redirected, files written)."""
        stdin: str | None = ""
        redirected = False
        written = []
        for op, target in redirs:
            if op in ("<<", "<<-"):
                redirected = True
                if isinstance(target.body, str):
                    stdin = target.body
                else:
                    stdin = self.expand_joined(target.body, scope, where)
            elif op == "<&" and not (target and target[0][0] == "s" and target[0][1] in ("0", "-")):
                redirected = True
                stdin = None  # another file descriptor: not visible
                self.expand(target, scope, where)
            elif op == "<<<":
                redirected = True
                value = self.expand_joined(target, scope, where)
                stdin = None if value is None else value + "\n"
            else:
                values = self.expand(target, scope, where)
                path = values[0][0] if values and values[0] else UNKNOWN
                if op in ("<", "<>"):
                    redirected = True
                    stdin = "" if path == "/dev/null" else scope.files.get(file_key(path))
                elif op in (">", ">>", ">|", "&>", "&>>") or (op == ">&" and not path.isdigit() and path != "-"):
                    if path != "/dev/null":
                        written.append((file_key(path), op in (">>", "&>>")))
                        if op not in (">>", "&>>"):
                            self.judge_overwrite(path, scope, where)
        return (stdin if redirected else "\x02"), written

    def judge_overwrite(self, path: str, scope: Scope, where: str, how: str = ">", argv: list[str] | None = None) -> None:
        """A file whose content the command replaces (`>`, tee, cp, dd of=):
        outside the project that is denied, a tracked project file is saved
        first. The common case, a new or untracked file in the project,
        loads nothing."""
        key = file_key(path)
        if key in scope.files or path.startswith("\x03") or path in HARMLESS_TARGETS or path.startswith("/dev/fd/"):
            return
        if UNKNOWN not in path and GLOB not in path and not path.startswith(("/", "~")) and ".." not in path.split("/") \
                and not scope.cwd and path != ".git" and not path.startswith(".git/"):
            # plainly inside the project: lost only if git tracks it
            files = self.around.files
            if files is None or not self.cwd or not files.tracked(os.path.join(self.cwd, key)):
                return
        self.model("destroy").judge_overwrite(self, path, scope, where, how, argv)

    def run_simple(self, node: tuple, scope: Scope, stdin: str | None, cond: bool, where: str) -> str | None:
        _, assigns, words, redirs, text = node
        here = f"{where} > `{text}`" if where else f"`{text}`"
        if len(here) > 400:
            here = here[:397] + "..."
        redirected_stdin, written = self.run_redirects(redirs, scope, here)
        if redirected_stdin != "\x02":
            stdin = redirected_stdin
        values: list[tuple[str, str, list | None]] = []
        for assign in assigns:
            if assign[0] == "=()":
                elements = []
                for word in assign[2]:
                    for fields in self.expand(word, scope, here)[:1]:
                        elements.extend(fields)
                values.append((assign[1], " ".join(elements), elements))
            else:
                alternatives = self.expand_value(assign[2], scope, here)
                values.append((assign[1], alternatives, None))
        if not words:
            for name, alternatives, elements in values:
                if elements is not None:
                    scope.arrays[name] = elements
                    scope.vars[name] = [elements[0] if elements else ""]
                else:
                    self.assign(scope, name, alternatives, cond, here)
                if name in COMMAND_ENV or name.startswith("GIT_CONFIG"):
                    self.note(here, f"sets {name}")
                    if name in FILE_ENV:
                        self.check_env({name: (alternatives or [UNKNOWN])[0]}, scope, here)
            for path, append in written:
                if not append or path not in scope.files:
                    scope.files[path] = ""
            if not values and not written and redirected_stdin != "\x02":
                return redirected_stdin  # `$(< file)` is the file's content
            return ""
        env: dict[str, str] = {}
        for name, alternatives, elements in values:
            if elements is not None:
                env[name] = " ".join(elements)
            else:
                env[name] = alternatives[0] if alternatives else UNKNOWN
        self.check_env(env, scope, here)
        output = None
        argvs = self.expand_words(words, scope, here)
        for argv in argvs:
            output = self.run_argv(argv, env, stdin, scope, here, cond)
        if len(argvs) != 1:
            output = None
        for path, append in written:
            old = scope.files.get(path, "") if append else ""
            scope.files[path] = None if old is None or output is None else old + output
            self.check_written(path, scope.files[path], here, scope)
        return "" if written else output

    def assign(self, scope: Scope, name: str, alternatives: list[str] | None, cond: bool, where: str = "") -> None:
        for _ in range(8):  # a nameref (declare -n) assigns the variable it stands for
            if name not in scope.refs:
                break
            name = scope.refs[name]
        for value in alternatives or ():
            if "[" in value and ("$(" in value or "`" in value):
                # bash evaluates `a[$(cmd)]` in a value wherever the variable is
                # used in arithmetic (`$((x))`, `(( ))`, let, [[ -eq ]], subscripts,
                # offsets): judge the substitution as run
                self.run_script(": " + value, scope.fork(), "", f"{where} > {name} in arithmetic")
        if name in PROMPT_VARS:
            for value in alternatives or ():
                self.prompt_expand(value, scope, f"{where} > ${name}")
        if name == "IFS":
            scope.vars[name] = alternatives
            return
        if cond and name in scope.vars:
            old = scope.vars[name]
            if old is None or alternatives is None:
                scope.vars[name] = None
            else:
                merged = old + [a for a in alternatives if a not in old]
                scope.vars[name] = merged if len(merged) <= MAX_ALTERNATIVES else None
        else:
            scope.vars[name] = alternatives
        scope.arrays.pop(name, None)

    def check_env(self, env: dict[str, str], scope: Scope, where: str) -> None:
        """Variables whose value git or the shell runs as a command."""
        for name, value in env.items():
            if name in FILE_ENV:
                # BASH_ENV / ENV name a file a shell sources on start
                found, content = lookup_file(scope.files, value)
                if found:
                    self.run_file(value, scope.fork(), "", f"{where} > ${name}")
                continue
            if name in PROMPT_VARS:
                self.prompt_expand(value, scope, f"{where} > ${name}")
                continue
            if name in COMMAND_ENV and self.runs_something(value, scope):
                self.run_script(value, scope.fork(), "", f"{where} > ${name}")

    def runs_something(self, value: str, scope: Scope) -> bool:
        """Is a command-valued setting (GIT_SSH, core.sshCommand, ...) worth
        judging: does it mention push/merge, or name a script (written by the
        command, or on disk)?"""
        if self.policy.could_push(value):
            return True
        first = value.split(None, 1)[0] if value.split() else ""
        return bool(first) and ("/" in first or file_key(first) in scope.files)

    def prompt_expand(self, value: str, scope: Scope, where: str) -> None:
        """A prompt string (PS1/PS4, `${x@P}`): bash expands its `$(..)` when shown."""
        if "$" not in value and "`" not in value:
            return
        try:
            parts = Parser(value, 1, self.budget).read_dq(None, heredoc=True)
        except (ShellSyntaxError, TooDeep):
            self.not_sure(False, "a prompt string cannot be read", where, "fail-closed.prompt-string")
            return
        self.expand_parts(parts, scope.fork(), where, in_quotes=True)

    def check_written(self, path: str, content: str | None, where: str, scope: Scope | None = None) -> None:
        """A git hook or git config file written with a push in it arms a later
        push; a file written into another repository's refs is a push."""
        low = path.lower()
        parts = low.split("/")
        for k, part in enumerate(parts[:-1]):
            if parts[k + 1] in ("refs", "packed-refs", "head") and self.in_remote("/".join(path.split("/")[:k + 1]) or "/", scope or Scope()):
                self.block(["write", path], f"writes `{show(path)}`, a ref of another repository (a remote): that is a push", where,
                           "git.remote-write")
                return
        is_hook = "hooks/" in low
        is_config = low.endswith(("gitconfig", ".git/config", "git/config", ".gitmodules"))
        if not (is_hook or is_config):
            return
        self.model("git_config").judge_written_git_file(self, path, content, is_hook, where)

    def in_remote(self, path: str, scope: Scope, is_cwd: bool = False) -> bool:
        """Is this path (a -C/--git-dir/GIT_DIR/cd target, a file written) inside
        another repository: a bare one, or one of the configured local-path remotes?"""
        if any(bare_repository(part) for part in path.split("/")):
            return True
        if not self.cwd or UNKNOWN in path:
            return False
        remotes = self.local_remotes()
        if not remotes:
            return False
        here = self.cwd if is_cwd else os.path.join(self.cwd, scope.cwd) if scope.cwd else self.cwd
        full = os.path.normpath(os.path.join(here, path))
        return any(full == remote or full.startswith(remote + "/") for remote in remotes)

    def run_argv(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str, cond: bool = False) -> str | None:
        """Judge one expanded command; returns its output when known."""
        self.budget.check()
        if not argv:
            return ""
        word = argv[0]
        # aliases and functions this command defined
        if word in scope.aliases and self.call_depth < MAX_CALL_DEPTH:
            return self.run_alias_call(argv, stdin, scope, where)
        if word in scope.funcs and (word, tuple(argv[1:])) not in self.memo and self.call_depth < MAX_CALL_DEPTH:
            return self.run_function_call(argv, stdin, scope, where, cond)
        if "/" in word and file_key(word) in scope.files:
            # ./script.sh written earlier in this command
            inner = scope.fork()
            inner.positional = list(argv[1:])
            return self.run_file(word, inner, stdin, f"{where} > {show(word)}")
        if "/" in word and self.around.files is not None:
            text = self.read_project_file(word, scope)
            if text is not None:
                return self.model("disk_scripts").run_program_on_disk(self, text, argv, stdin, scope, where)
        name = program_name(word)
        if name is None and GLOB in word.rsplit("/", 1)[-1] and UNKNOWN not in word:
            # a glob for the program: judge every program it could name that pushes or merges
            matches = self.model("name_globs").glob_programs(word.rsplit("/", 1)[-1].replace(GLOB, ""))
            for match in matches:
                self.note(where, f"`{show(word)}` can match {match}")
                self.run_argv([match] + argv[1:], env, stdin, scope, where, cond)
            if matches:
                return None
        if name is None:
            self.not_sure(False, f"the program name `{show(word)}` is only known when the command runs", where, "fail-closed.program-name")
            self.scan_for_command(argv[1:], env, stdin, scope, where)
            return None
        name = normalize_program(name)
        for program, words in self.policy.block_programs:
            if name == program and _in_order(words, argv[1:]):
                self.block(argv, f"`{' '.join((program,) + words)}` is blocked by ralph.toml [guard] block_programs", where, "config.block-programs")
                return None
        model = self.models.program_model(name)
        if model is not None:
            module, function = model
            return getattr(load(module), function)(self, argv, env, stdin, scope, where)
        if len(argv) > 1:
            sub = argv[1].lower()
            if (name, sub) in RUNNER_SUBCOMMANDS or (name, "") in RUNNER_SUBCOMMANDS:
                self.note(where, f"{name} {sub} runs a command")
                self.scan_for_command(argv[2:] if (name, sub) in RUNNER_SUBCOMMANDS else argv[1:], env, stdin, scope, where)
                return None
            if name in ("docker", "podman", "nerdctl") and sub in ("compose", "container") and len(argv) > 2:
                self.scan_for_command(argv[2:], env, stdin, scope, where)
                return None
        if name == "cat" and len(argv) > 1 and not any(a.startswith("-") for a in argv[1:]):
            contents = [lookup_file(scope.files, a) for a in argv[1:]]
            if all(found and content is not None for found, content in contents):
                return "".join(content for _, content in contents)
        return static_output(name, argv, stdin)

    def run_function_call(self, argv: list[str], stdin: str | None, scope: Scope, where: str, cond: bool) -> str | None:
        """A call of a function this command defined, judged as run with argv[1:]
        as its positional parameters."""
        word = argv[0]
        # (a repeated call falls through to the program of that name:
        # `git() { command git "$@"; }` must still reach git)
        self.memo.add((word, tuple(argv[1:])))
        self.note(where, f"calls function {word}()")
        saved = scope.positional
        scope.positional = list(argv[1:])
        self.call_depth += 1
        try:
            return self.run(scope.funcs[word], scope, stdin, cond, f"{where} > {word}()")
        finally:
            self.call_depth -= 1
            scope.positional = saved

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

    def scan_for_command(self, args: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> None:
        """Runners whose option syntax the guard does not know: judge the command
        starting at the first word that names a program we know."""
        for i, arg in enumerate(args):
            name = program_name(arg)
            if name is None:
                continue
            name = normalize_program(name)
            if name in DATA_PROGRAMS and name not in self.models.PROGRAM_MODELS:
                self.run_argv(args[i:], env, stdin, scope, where)
                return
            if name in self.models.PROGRAM_MODELS or name.startswith(("git", "python")):
                # an image or host may share a program's name (`alpine/git`): judge
                # from here, and keep looking further on
                before = len(self.blocks)
                self.run_argv(args[i:], env, stdin, scope, where)
                if len(self.blocks) > before:
                    return


def certain_status(node: tuple, scope: Scope) -> int | str | None:
    """The exit status bash semantics make certain: 0 for `true`/`:`, 1 for
    `false`, "exit" for `exit`/`return`; None when it depends on anything
    (a function or alias of that name, redirections, arguments, `!`)."""
    if node[0] == "seq":
        return certain_status(node[1][-1], scope) if node[1] else None
    if node[0] != "cmd" or node[1] or node[3] or len(node[2]) != 1 or len(node[2][0]) != 1:
        if node[0] == "cmd" and not node[1] and node[2] and node[2][0] in ([("s", "exit", False)], [("s", "return", False)]):
            return None if node[2][0][0][1] in scope.funcs or node[2][0][0][1] in scope.aliases else "exit"
        return None
    part = node[2][0][0]
    if part[0] != "s" or part[1] in scope.funcs or part[1] in scope.aliases:
        return None
    return {"true": 0, ":": 0, "false": 1, "exit": "exit", "return": "exit"}.get(part[1])


def static_output(name: str, argv: list[str], stdin: str | None) -> str | None:
    """What a data program prints, when the guard can know it: `echo`, `cat`
    of its stdin, `which`... Its output feeds pipes and `$(..)`, so
    `$(echo git) push` is judged as `git push`. (`printf` has a model of
    its own: ralph.rules.guard.programs.shell_builtins.) Pure. Here rather
    than in a module of its own: every Bash call that reaches the guard
    imports this module, and each module imported costs a hook call about a
    tenth of a millisecond."""
    if name == "echo":
        args = argv[1:]
        newline = True
        escapes = False
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            newline = newline and "n" not in args[0]
            escapes = "e" in args[0]
            args = args[1:]
        text = " ".join(args)
        if escapes:
            text = decode_ansi_c(text)
        return text + ("\n" if newline else "")
    if name == "cat" and len(argv) == 1:
        return stdin
    if name in ("which", "type") and len(argv) == 2 and not argv[1].startswith("-"):
        return "/usr/bin/" + argv[1] + "\n"
    if name == "ls" and not any(a.startswith("-") and "d" in a for a in argv[1:]):
        # the names it lists: below each directory given (or here), only known when it runs
        directories = [a for a in argv[1:] if not a.startswith("-")] or ["."]
        return "".join(d.rstrip("/") + "/" + UNKNOWN + "\n" for d in directories)
    if name == "basename" and len(argv) == 2:
        return argv[1].rstrip("/").rsplit("/", 1)[-1] + "\n"
    if name in ("true", "false", ":", "cd", "export", "mkdir", "touch", "rm", "sleep"):
        return ""
    return None


def _in_order(words: tuple, args: list[str]) -> bool:
    i = 0
    for arg in args:
        if i < len(words) and arg.lower() == words[i].lower():
            i += 1
    return i == len(words)


def absolute_paths(paths: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(path.rstrip("/") for path in paths if path.startswith("/"))
