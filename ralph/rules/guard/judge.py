"""The push/merge guard: would this Bash command, when run, push or merge?

judge_command() parses the command as bash does (ralph.rules.guard.syntax), then walks
the tree in order as a shell would run it, keeping what the command itself
defines (variables, arrays, positional parameters, functions, aliases, git
aliases, files it writes) and expanding each word: quotes, escapes, `$'..'`,
brace expansion, parameter expansion (`${x:-y}`, `${x,,}`), command
substitution (its commands are judged, and `echo`/`printf`/`which` output is
known), word splitting. Each resulting argv goes through a table of programs:
git, shells and `eval` (their script is judged recursively), wrappers
(sudo, env, timeout, xargs, find -exec, parallel, watch, ...), interpreters
(python/node/perl/... code), remote runners (ssh, docker exec) and the
builtins that change state. Every branch of if/case/loops and both sides of
`&&`/`||` count as run, except where bash semantics make the status certain
(`false && x`, `true || x`, `if false`, `while false`, code after `exit`).

Blocked, by design:
- `git push` in any form (also `send-pack`, `http-push`, `subtree push`),
  `--dry-run` included (it still contacts the remote), `--help` excepted.
- `git merge`, except `--abort` and `--quit` (nothing merges); `--continue`
  completes a merge commit, so it is blocked. `merge-base`, `merge-file`,
  `merge-tree`, `mergetool` are other commands and are allowed.
- `git pull` unless it rebases (`--rebase[=true|merges|interactive]`, `-r`,
  or `-c pull.rebase=true`): the default merges, and `--ff-only` is a
  fast-forward merge of the remote branch into yours, so it is blocked too.
  (git itself fast-forwards a `pull --rebase` through `git merge --ff-only`
  when you have no local commits; that is still rebase mode and allowed.)
- `ralph stream merge`; plus the [guard] table's extra git subcommands and
  programs.
- Forge merges and other front ends (ralph.rules.guard.forge_policy), each family
  switchable in [guard] (GUARD_KEYS): `gh pr merge`, `glab mr merge`, `hub
  merge`; `gh`/`glab`/`hub api` calls that merge or write refs or commits;
  `gh repo sync`, `hub sync`; `jj git push`, `git svn dcommit`, `git flow
  ... finish|publish`; git's merge backends run directly.
- Git running a program (`--upload-pack`, `--exec`, `ext::`, `grep -O`, config
  values such as core.sshCommand / core.editor / sequence.editor /
  core.fsmonitor, hooks under a core.hooksPath the command wrote, aliases from
  include.path or GIT_CONFIG_GLOBAL files it wrote): the program is judged.
- Writes into another repository: git run in (`-C`, `--git-dir`, GIT_DIR,
  `cd`) a bare repository or a configured local-path remote with anything but
  a read-only subcommand, or a file written into its refs (git.remote-write).
- Code that arrives as data is read as the program would: makefiles from stdin
  or `--eval`, ed/ex/vim `!cmd`, awk input lines run by system(), xargs -a
  files, interpreter argv passed to a process API, prompt strings (PS4,
  `${x@P}`), BASH_ENV/--rcfile files, mapfile -C, command_not_found_handle.
- Every verdict carries a stable rule id (GuardVerdict.rule_id).
- Arming a later push: `git config alias.x push` (or any config value that
  would run a push) is blocked when written.
- `ssh host 'git push'`: a push from another machine still escapes.
- Program and git subcommand names are compared case-insensitively, because on
  macOS (case-insensitive file systems) `GIT PUSH` does run git push.

Fail closed: when something that decides the outcome cannot be known, e.g. the
git subcommand comes from a variable set outside the command, `git $(cat f)`,
a shell fed a script from a file or pipe it cannot see, interpreter code that
can start programs, a parse error, nesting deeper than the parser allows, or
the deadline, the command is blocked if it could push: an unknown git
subcommand always; anything else only when the command text mentions
push/merge/pull or contains encodings (hex escapes, base64, rev, ...) that
could spell them. The reason asks for plain simple commands with literal words.

Not seen (documented limits): scripts written by an earlier tool call and run
now (`bash deploy.sh`), git aliases or hooks configured before this command,
a project Makefile or npm scripts, git libraries used from interpreter code.
The client's own sandbox (ralph sandbox, issue 12 section 5) is the second
line for those: the guard is the first, and explains its denials.

Modules (split like mvdan/sh): ralph.rules.guard.syntax parses; guard_state holds
the scope, budget and markers; expand expands words; programs is the table of
program facts (shared with test_outcome); program_models runs shells,
interpreters, wrappers and data-executing programs; git_policy and
forge_policy decide what pushes or merges. This module walks the tree and
gives the verdict, with a stable rule id.

Hot path: imports only ralph.rules.* and time (already loaded). What the
commands agents typically run never reach is split off into modules loaded
on first use: the layers of Analysis (COLD_LAYERS): walk_rare,
expand_rare, git_models, common_programs (cd, export, python, make, ...),
program_models and forge_policy. tests/test_guard.py (TYPICAL_COMMANDS,
COLD_MODULES) holds the line between them.
"""
from ralph.rules.guard.expand import RARE_EXPANSION, Expander
from ralph.rules.guard.git_policy import GIT_MODELS, GitPolicy
from ralph.rules.guard.state import (GLOB, MAX_ALTERNATIVES, MAX_CALL_DEPTH, lookup_file, UNKNOWN, Budget, Deadline, Scope, file_key,  # noqa: F401
                                     normalize_program, program_name, show, show_argv)
from ralph.rules.guard.policy import DEFAULT_POLICY, GuardPolicy
from ralph.rules.guard.programs.facts import COMMAND_ENV, INTERPRETERS, RUNNER_SUBCOMMANDS, SHELLS, WRAPPERS
from ralph.rules.guard.syntax.lexer import decode_ansi_c
from ralph.rules.guard.syntax.parser import ShellSyntaxError, TooDeep, parse

FUNCTION = type(lambda: ())  # for annotations: collections.abc.Callable would cost every hook call its import

# variables bash expands as prompt strings, and those naming a file a shell sources
PROMPT_VARS = frozenset(("PS0", "PS1", "PS2", "PS4"))
FILE_ENV = frozenset(("BASH_ENV", "ENV"))

ACT = (
    "Pushing and merging are left to the person or the loop that runs you: commit your work "
    "locally (`git commit`) and carry on with the task; do not try to push or merge another way."
)
REWRITE = (
    "Rewrite it as plain simple commands with every git subcommand written out literally "
    "(no variables, eval, encoded or generated text for program names and subcommands), one per line."
)


class GuardVerdict:
    """The decision on one command. rule_id names the rule that decided it
    (stable: tests/fixtures/bash records it per case, `ralph explain` prints it):
    `git.push`, `forge.gh-pr-merge`, `fail-closed.program-name`, `allow.nothing-pushes`, ..."""

    __slots__ = ("blocked", "reason", "evidence", "trace", "rule_id")

    def __init__(self, blocked: bool, reason: str, evidence: list[str], trace: list[str], rule_id: str = "") -> None:
        self.blocked = blocked
        self.reason = reason
        self.evidence = evidence
        self.trace = trace
        self.rule_id = rule_id or ("fail-closed.unknown" if blocked else "allow.nothing-pushes")

    def __repr__(self) -> str:
        return f"GuardVerdict(blocked={self.blocked!r}, rule_id={self.rule_id!r}, reason={self.reason!r}, evidence={self.evidence!r})"


class Analysis(Expander, GitPolicy):
    """One walk over a command: what it would run, what it blocks, what it cannot know.

    The code typical commands never reach lives in cold layers, each loaded
    when the walk first calls one of its methods (see __getattr__ and
    COLD_LAYERS): the models of the programs agents run most
    (ralph.rules.guard.programs.common: cd, export, cp, python, make, ...), the
    other program models (ralph.rules.guard.programs.models and forge_policy:
    shells, code strings, wrappers, forge CLIs), the git models
    (ralph.rules.guard.git_models: config entries, aliases, hooks, ...), the rare
    expansions (ralph.rules.guard.expand_rare: brace expansion, `${x op y}`) and the
    rare parts of the walk (ralph.rules.guard.walk_rare: compound commands,
    functions, prompt strings). Each hook call would otherwise pay for
    importing all of it."""

    __slots__ = ("policy", "budget", "text", "blocks", "unsure", "trace", "memo", "nesting", "call_depth", "cwd", "remotes",
                 "allow_rule")
    layers: frozenset = frozenset()  # the cold layers this class has mixed in (a class attribute)

    def __init__(self, text: str, policy: GuardPolicy, budget: Budget) -> None:
        self.cwd = ""
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

    def __getattr__(self, name: str) -> object:
        # Only reached for a name this class lacks: a method of a cold layer
        # (COLD_LAYERS; any other name is a program model). The analysis
        # becomes an instance of the class with that layer mixed in (same
        # slots), so the walk goes on with the same state.
        layer = COLD_LAYERS.get(name, "programs")
        if layer in self.layers:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self.__class__ = analysis_class(self.layers | {layer})
        return getattr(self, name)

    def run_git_program(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        """git, and yadm (git with another work tree)."""
        return self.run_git(argv, env, scope, where)

    def run_multicall(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
        """busybox/toybox: argv[1] is the program."""
        return self.run_argv(argv[1:], env, stdin, scope, where)

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
        return (stdin if redirected else "\x02"), written

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
            if name in COMMAND_ENV and self.policy.could_push(value):
                self.run_script(value, scope.fork(), "", f"{where} > ${name}")

    def run_argv(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str, cond: bool = False) -> str | None:
        """Judge one expanded command; returns its output when known."""
        self.budget.check()
        if not argv:
            return ""
        word = argv[0]
        # aliases and functions this command defined (their models load with the definition)
        if word in scope.aliases and self.call_depth < MAX_CALL_DEPTH:
            return self.run_alias_call(argv, stdin, scope, where)
        if word in scope.funcs and (word, tuple(argv[1:])) not in self.memo and self.call_depth < MAX_CALL_DEPTH:
            return self.run_function_call(argv, stdin, scope, where, cond)
        if "/" in word and file_key(word) in scope.files:
            # ./script.sh written earlier in this command
            inner = scope.fork()
            inner.positional = list(argv[1:])
            return self.run_file(word, inner, stdin, f"{where} > {show(word)}")
        name = program_name(word)
        if name is None and GLOB in word.rsplit("/", 1)[-1] and UNKNOWN not in word:
            # a glob for the program: judge every program it could name that pushes or merges
            matches = self.glob_programs(word.rsplit("/", 1)[-1].replace(GLOB, ""))
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
        handler = PROGRAM_HANDLERS.get(name)
        if handler is not None:
            return getattr(self, handler)(argv, env, stdin, scope, where)
        if name.startswith("git-") and len(name) > 4:
            return self.run_git(["git", name[4:]] + argv[1:], env, scope, where, dashed=True)
        if name in SHELLS:
            return self.run_shell(argv, env, stdin, scope, where)
        if name in INTERPRETERS or name.startswith("python") or name.startswith("pypy"):
            return self.run_interpreter(name, argv, stdin, scope, where)
        if name in WRAPPERS:
            return self.run_wrapper(name, argv, env, stdin, scope, where)
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
    `$(echo git) push` is judged as `git push`. (`printf` has a model of its
    own: ralph.rules.guard.programs.common.) Pure. Here rather than in a module of
    its own: every Bash call that reaches the guard imports this module, and
    each module imported costs a hook call about a tenth of a millisecond."""
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



# program -> the Analysis method that models it (by name: most live in the
# program models, loaded on first use)
PROGRAM_HANDLERS = {
    "git": "run_git_program",
    "ralph": "run_ralph",
    "ssh": "run_ssh",
    "xargs": "run_xargs",
    "find": "run_find",
    "parallel": "run_parallel",
    "eval": "run_eval",
    "source": "run_source",
    ".": "run_source",
    "trap": "run_trap",
    "alias": "run_alias",
    "unalias": "run_unalias",
    "export": "run_declare",
    "declare": "run_declare",
    "typeset": "run_declare",
    "local": "run_declare",
    "readonly": "run_declare",
    "unset": "run_unset",
    "read": "run_read",
    "mapfile": "run_mapfile",
    "readarray": "run_mapfile",
    "set": "run_set",
    "shift": "run_shift",
    "printf": "run_printf",
    "tee": "run_tee",
    "cp": "run_copy",
    "ln": "run_copy",
    "install": "run_copy",
    "hash": "run_hash",
    "cd": "run_cd",
    "make": "run_make",
    "gmake": "run_make",
    "ed": "run_editor",
    "red": "run_editor",
    "ex": "run_editor",
    "vi": "run_editor",
    "vim": "run_editor",
    "nvim": "run_editor",
    "view": "run_editor",
    "vim.basic": "run_editor",
    "vim.tiny": "run_editor",
    "pushd": "run_cd",
    "awk": "run_awk",
    "gawk": "run_awk",
    "mawk": "run_awk",
    "nawk": "run_awk",
    "sed": "run_sed",
    "gsed": "run_sed",
    "hub": "run_hub",
    "gh": "run_gh",
    "glab": "run_glab",
    "jj": "run_jj",
    "yadm": "run_git_program",
    "tmux": "run_multiplexer",
    "screen": "run_multiplexer",
    "at": "run_multiplexer",
    "batch": "run_multiplexer",
    "busybox": "run_multicall",
    "toybox": "run_multicall",
}
Analysis.HANDLERS = PROGRAM_HANDLERS

# the methods of ralph.rules.guard.walk_rare.RareWalk
RARE_WALK = frozenset(("run_compound", "run_function_call", "prompt_expand", "glob_programs"))
# the methods of ralph.rules.guard.programs.common.CommonPrograms
COMMON_PROGRAMS = frozenset(("run_cd", "run_declare", "run_set", "run_copy", "run_tee", "run_printf", "run_find",
                             "run_interpreter", "run_make", "read_written", "run_sed"))
# cold method -> the layer that holds it; a name not listed is a program model
COLD_LAYERS = {**dict.fromkeys(GIT_MODELS, "git"), **dict.fromkeys(RARE_EXPANSION, "expansion"),
               **dict.fromkeys(RARE_WALK, "walk"), **dict.fromkeys(COMMON_PROGRAMS, "common")}
LAYER_ORDER = ("walk", "expansion", "git", "common", "programs")


def load_layer(layer: str) -> tuple[type, ...]:
    """The mixin classes of one cold layer, imported now."""
    if layer == "walk":
        from ralph.rules.guard.walk_rare import RareWalk

        return (RareWalk,)
    if layer == "expansion":
        from ralph.rules.guard.expand_rare import RareExpansion

        return (RareExpansion,)
    if layer == "git":
        from ralph.rules.guard.git_models import GitModels

        return (GitModels,)
    if layer == "common":
        from ralph.rules.guard.programs.common import CommonPrograms

        return (CommonPrograms,)
    from ralph.rules.guard.forge_policy import ForgePolicy
    from ralph.rules.guard.programs.models import ProgramModels

    return (ForgePolicy, ProgramModels)


_LAYERED: dict[frozenset, type] = {}


def analysis_class(layers: frozenset) -> type:
    """Analysis with these cold layers mixed in, built once per set of layers."""
    if layers not in _LAYERED:
        mixins = tuple(mixin for layer in LAYER_ORDER if layer in layers for mixin in load_layer(layer))

        class LayeredAnalysis(Analysis, *mixins):
            __slots__ = ()

        LayeredAnalysis.layers = layers
        _LAYERED[layers] = LayeredAnalysis
    return _LAYERED[layers]


def modelled_analysis() -> type:
    """Analysis with every cold layer mixed in."""
    return analysis_class(frozenset(LAYER_ORDER))


def absolute_paths(paths: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(path.rstrip("/") for path in paths if path.startswith("/"))


def judge_command(command: str, policy: GuardPolicy | None = None, deadline: float = 0.25, cwd: str = "",
                  remotes: tuple[str, ...] | FUNCTION = ()) -> GuardVerdict:
    """Would running `command` in bash push or merge? Never raises.
    cwd: where it runs; remotes: absolute paths of the repository's local-path
    remotes (a git write into one of them is a push), or a function that
    reads them, called only if the command touches another directory."""
    policy = policy or DEFAULT_POLICY
    try:
        return _judge(command, policy, deadline, cwd, remotes)
    except BaseException as e:  # noqa: B036 - a crash would be a bypass
        if isinstance(e, KeyboardInterrupt):
            raise
        return _unsure_verdict(command, policy, f"the guard failed on this command ({type(e).__name__})", ["internal error"], "internal-error")


def _unsure_verdict(command: str, policy: GuardPolicy, why: str, trace: list[str], rule: str) -> GuardVerdict:
    try:
        risky = policy.could_push(command)
    except BaseException:  # noqa: B036
        risky = True
    if not risky:
        return GuardVerdict(False, "", [], trace + [f"{why}; the command does not mention push/merge/pull -> allow"], f"allow.{rule}-no-risky-text")
    reason = (
        f"ralph-hooks blocked this command: {why}, and it mentions push/merge/pull or encoded text. "
        f"Split it into plain simple commands (one per line, no deep nesting or generated code). {ACT}"
    )
    return GuardVerdict(True, reason, [why], trace + [f"{why} -> BLOCK (fail closed)"], f"fail-closed.{rule}")


def _judge(command: str, policy: GuardPolicy, deadline: float, cwd: str = "",
           remotes: tuple[str, ...] | FUNCTION = ()) -> GuardVerdict:
    if policy.allow_commands and command.strip() in policy.allow_commands:
        return GuardVerdict(False, "", [], ["listed in ralph.toml [guard] allow_commands -> allow"], "allow.config-allow-commands")
    budget = Budget(deadline)
    analysis = Analysis(command, policy, budget)
    analysis.cwd = cwd
    analysis.remotes = remotes if isinstance(remotes, FUNCTION) else absolute_paths(remotes)
    try:
        tree = parse(command, 0, budget)
    except ShellSyntaxError as e:
        return _unsure_verdict(command, policy, f"bash would reject this command ({e})", [f"parse error: {e}"], "parse-error")
    except (TooDeep, RecursionError):
        return _unsure_verdict(command, policy, "the command is nested too deeply to check", ["too deep"], "too-deep")
    except Deadline:
        return _unsure_verdict(command, policy, "the command is too long to check in time", ["deadline"], "deadline")
    scope = Scope()
    try:
        analysis.run(tree, scope, "", False, "")
    except (TooDeep, RecursionError):
        return _unsure_verdict(command, policy, "the command is nested too deeply to check", analysis.trace + ["too deep"], "too-deep")
    except Deadline:
        return _unsure_verdict(command, policy, "the command is too long to check in time", analysis.trace + ["deadline"], "deadline")
    trace = analysis.trace
    if analysis.blocks:
        what, why, where, rule = analysis.blocks[0]
        nested = f" (inside {where})" if " > " in where else ""
        reason = f"ralph-hooks blocked this command: it would run `{what}`{nested}: {why}. {ACT}"
        evidence = [f"{w}: {y} [{p}]" for w, y, p, _ in analysis.blocks]
        return GuardVerdict(True, reason, evidence, trace, rule)
    strict = [u for u in analysis.unsure if u[0]]
    if strict:
        _, why, where, rule, advice = strict[0]
        reason = f"ralph-hooks blocked this command: it cannot tell whether it pushes or merges, because {why} (in {where}). {advice or REWRITE} {ACT}"
        return GuardVerdict(True, reason, [f"{u[1]} [{u[2]}]" for u in strict], trace + ["unknown git subcommand -> BLOCK (fail closed)"], rule)
    if analysis.unsure:
        if policy.could_push(command):
            _, why, where, rule, advice = analysis.unsure[0]
            reason = (f"ralph-hooks blocked this command: it cannot tell whether it pushes or merges, because {why} "
                      f"(in {where}), and the command mentions push/merge/pull or encoded text. {advice or REWRITE} {ACT}")
            return GuardVerdict(True, reason, [f"{u[1]} [{u[2]}]" for u in analysis.unsure],
                                trace + ["unsure and the text could push -> BLOCK (fail closed)"], rule)
        trace = trace + ["unsure parts, but nothing in the command mentions push/merge/pull -> allow"]
        return GuardVerdict(False, "", [], trace, "allow.unsure-no-risky-text")
    return GuardVerdict(False, "", [], trace, analysis.allow_rule or "allow.nothing-pushes")

