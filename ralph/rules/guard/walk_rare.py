"""The parts of the guard's walk typical commands never reach, loaded on
first use: compound commands (`if`, `while`/`until`, `for`, `case`), function
definitions and calls, `(( ))` and `[[ ]]`, prompt strings (PS1/PS4, `${x@P}`) and
globs in a program name.

RareWalk is mixed into guard.Analysis by guard.analysis_class() the first
time the walk calls one of its methods (guard.Analysis.__getattr__); the names
are listed in guard.RARE_WALK.
"""
from fnmatch import fnmatchcase

from ralph.rules.guard.state import MAX_ALTERNATIVES, Scope
from ralph.rules.guard.syntax.parser import Parser, ShellSyntaxError, TooDeep

# functions bash calls by itself
SHELL_CALLED_FUNCTIONS = frozenset(("command_not_found_handle", "command_not_found_handler"))
# programs a glob in a command name is checked against
GLOB_CANDIDATES = ("git", "gh", "glab", "hub", "jj", "ralph") + tuple("git-" + s for s in (
    "push", "send-pack", "http-push", "merge", "pull", "subtree", "merge-recursive", "merge-resolve", "merge-octopus",
    "merge-ours", "merge-subtree", "merge-index", "svn", "flow"))


class RareWalk:
    """Walk methods of the analysis that typical commands never call."""

    __slots__ = ()

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

    def glob_programs(self, pattern: str) -> list[str]:
        """The push/merge-capable programs a glob like `gi?` or `git-p*sh` can name."""
        return [name for name in GLOB_CANDIDATES if fnmatchcase(name, pattern.lower())]
