"""The push/merge guard: would this Bash command, when run, push or merge?

judge_command() parses the command as bash does (ralph.rules.shell), then walks
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
`&&`/`||` count as run: the guard does not evaluate conditions.

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
Makefile/npm scripts. Those need the person's review, as before.

Hot path: imports only ralph.rules.shell and time (already loaded).
"""
from __future__ import annotations

import time

from ralph.rules.shell import ShellSyntaxError, TooDeep, decode_ansi_c, parse

UNKNOWN = "\x00"  # stands for text the guard cannot know
GLOB = "\x01"  # marks an unquoted glob character in an expanded word
MAX_ALTERNATIVES = 16
MAX_VALUE = 100_000
MAX_CALL_DEPTH = 8
MAX_STEPS = 200_000

ACT = (
    "Pushing and merging are left to the person or the loop that runs you: commit your work "
    "locally (`git commit`) and carry on with the task; do not try to push or merge another way."
)
REWRITE = (
    "Rewrite it as plain simple commands with every git subcommand written out literally "
    "(no variables, eval, encoded or generated text for program names and subcommands), one per line."
)

# words whose presence lets an unknown part of a command be a push or merge
RISKY_WORDS = ("push", "merge", "pull", "send-pack", "subtree")
# ways to spell a word without writing it
ENCODINGS = ("\\x", "\\u", "\\0", "\\1", "\\2", "\\3", "\\4", "\\5", "\\6", "\\7", "$'", "base64", "b64",
             "xxd", "rev", "tr ", "sed", "awk", "chr(", "fromcharcode", "fromhex", "[::-1]", "bytes([",
             "reverse", "rot13", "codecs", "unhexlify", "pack(", "%c", "'+'", '"+"', "' + '", '" + "',
             "'.'", '"."', "frombase", "atob", "uudecode", "openssl")
# interpreter code that can start a program
EXEC_APIS = ("system", "exec", "spawn", "popen", "subprocess", "child_process", "shell", "passthru",
             "proc_open", "`", "qx", "%x", "open3", "pty", "__import__", "os.", "check_output", "eval",
             "deno.command", "bun.spawn", "$(", "getattr", "globals(", "builtins", "import(")

GIT_BLOCKED = {
    "push": "pushes commits to a remote",
    "send-pack": "pushes objects to a remote (push plumbing)",
    "http-push": "pushes objects to a remote over HTTP",
}
# git options taking the next word as their value
GIT_OPTS_WITH_ARG = frozenset(("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                               "--super-prefix", "--attr-source", "--list-cmds"))
GIT_OPTS_THAT_EXIT = frozenset(("--version", "-v", "--help", "-h", "--html-path", "--man-path",
                                "--info-path", "--exec-path", "--list-cmds"))
# git's own commands: an alias never shadows them
GIT_BUILTINS = frozenset("""add am annotate apply archive bisect blame branch bugreport bundle cat-file
check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick
citool clean clone column commit commit-graph commit-tree config count-objects credential
credential-cache credential-store describe diagnose diff diff-files diff-index diff-tree difftool
fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo
format-patch fsck gc get-tar-commit-id gitk grep gui hash-object help hook http-fetch http-push
index-pack init instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit
maintenance merge merge-base merge-file merge-index merge-one-file merge-tree mergetool mktag mktree
multi-pack-index mv name-rev notes p4 pack-objects pack-redundant pack-refs patch-id prune
prune-packed pull push quiltimport range-diff read-tree rebase receive-pack reflog remote repack
replace request-pull rerere reset restore rev-list rev-parse revert rm scalar send-email send-pack
shortlog show show-branch show-index show-ref sparse-checkout stage stash status stripspace
submodule subtree svn switch symbolic-ref tag unpack-file unpack-objects update-index update-ref
update-server-info upload-archive upload-pack var verify-commit verify-pack verify-tag version
whatchanged worktree write-tree""".split())
FILTER_BRANCH_OPTS = frozenset(("--env-filter", "--tree-filter", "--index-filter", "--parent-filter",
                                "--msg-filter", "--commit-filter", "--tag-name-filter"))
# environment variables whose value git (or a pager) runs as a shell command
COMMAND_ENV = frozenset(("GIT_SSH_COMMAND", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_EXTERNAL_DIFF",
                         "GIT_ASKPASS", "EDITOR", "VISUAL", "PAGER", "GIT_SSH", "SSH_ASKPASS", "PROMPT_COMMAND",
                         "BASH_ENV", "ENV"))

SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "yash", "posh", "rbash", "tcsh", "csh"))
# interpreter -> options whose value is code
INTERPRETERS = {
    "python": ("-c",), "pypy": ("-c",), "node": ("-e", "--eval", "-p", "--print"), "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval", "-p", "--print"), "deno": ("eval",), "perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",),
    "lua": ("-e",), "luajit": ("-e",), "rscript": ("-e",), "tclsh": (), "osascript": ("-e",), "pwsh": ("-c", "-command"),
    "powershell": ("-c", "-command"), "expect": ("-c",), "julia": ("-e", "--eval"), "groovy": ("-e",), "jshell": (), "irb": (),
}
# program -> (short options taking a value, long options taking a value, positionals before the command)
WRAPPERS = {
    "sudo": ("ugpChDrtTUR", ("--user", "--group", "--prompt", "--close-from", "--chdir", "--host", "--role", "--type",
                             "--command-timeout", "--other-user", "--chroot"), 0),
    "doas": ("uC", (), 0),
    "nohup": ("", (), 0), "setsid": ("", (), 0), "chronic": ("", (), 0), "unbuffer": ("", (), 0),
    "eatmydata": ("", (), 0), "nocache": ("", (), 0), "torsocks": ("", (), 0), "catchsegv": ("", (), 0),
    "builtin": ("", (), 0), "coproc": ("", (), 0), "then": ("", (), 0), "do": ("", (), 0), "else": ("", (), 0),
    "exec": ("a", (), 0), "time": ("fo", ("--format", "--output"), 0), "caffeinate": ("wt", (), 0),
    "nice": ("n", ("--adjustment",), 0), "ionice": ("cnp", ("--class", "--classdata", "--pid"), 0),
    "chrt": ("", (), 1), "taskset": ("", (), 1), "timeout": ("sk", ("--signal", "--kill-after"), 1),
    "stdbuf": ("ioe", ("--input", "--output", "--error"), 0), "chroot": ("", ("--userspec", "--groups"), 1),
    "strace": ("oeEpPsSuXbIa", ("--output",), 0), "ltrace": ("oeEpPsSuXbIan", (), 0), "fakeroot": ("ls", (), 0),
    "proxychains": ("f", (), 0), "proxychains4": ("f", (), 0), "firejail": ("", (), 0), "unshare": ("", (), 0),
    "nsenter": ("tSG", ("--target",), 0), "xvfb-run": ("snefwpl", (), 0), "dbus-launch": ("", (), 0),
    "valgrind": ("", (), 0), "env": ("uCS", ("--unset", "--chdir", "--split-string"), 0),
    "command": ("", (), 0), "flock": ("wEoc", ("--timeout", "--conflict-exit-code", "--command"), 1),
    "su": ("cgGsw", ("--command", "--group", "--supp-group", "--shell", "--whitelist-environment"), 0),
    "runuser": ("cgGsuw", ("--command", "--group", "--supp-group", "--shell", "--user"), 0),
    "script": ("cEIOT", ("--command", "--echo", "--log-in", "--log-out", "--log-timing"), 0),
    "systemd-run": ("upEM", ("--unit", "--property", "--setenv", "--machine", "--description", "--slice",
                             "--working-directory", "--uid", "--gid"), 0),
    "gdb": ("", (), 0), "perf": ("", (), 0), "sg": ("", (), 1), "watch": ("ndg", ("--interval", "--differences"), 0),
    "nix-shell": ("pIE", ("--run", "--command", "--packages", "--expr"), 0),
}
# programs that take a command string after -c / --command (value is a script)
WRAPPER_SCRIPT_OPTS = {
    "flock": ("-c", "--command"), "su": ("-c", "--command", "--session-command"), "runuser": ("-c", "--command"),
    "script": ("-c", "--command"), "nix-shell": ("--run", "--command"),
}
# two-word runners: (program, subcommand) -> the rest is a command, options unknown (scanned)
RUNNER_SUBCOMMANDS = frozenset((("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("bundle", "exec"),
                                ("conda", "run"), ("mamba", "run"), ("pixi", "run"), ("mise", "exec"),
                                ("mise", "x"), ("rbenv", "exec"), ("pyenv", "exec"), ("direnv", "exec"),
                                ("nix", "develop"), ("nix", "run"), ("asdf", "exec"), ("hatch", "run"),
                                ("pdm", "run"), ("rye", "run"), ("devbox", "run"), ("docker", "exec"),
                                ("docker", "run"), ("podman", "exec"), ("podman", "run"), ("kubectl", "exec"),
                                ("nerdctl", "exec"), ("nerdctl", "run"), ("lxc", "exec"), ("vagrant", "ssh"),
                                ("toolbox", "run"), ("distrobox", "enter"), ("flatpak", "run"), ("snap", "run"),
                                ("opam", "exec"), ("stack", "exec"), ("cargo", "run"), ("dotnet", "exec"),
                                ("xcrun", ""), ("doppler", "run"), ("op", "run"), ("aws-vault", "exec")))
SSH_OPTS_WITH_ARG = "BbcDEeFIiJLlmOoPpQRSWw"
XARGS_SHORT_WITH_ARG = "adEeIiLlnPs"
XARGS_LONG_WITH_ARG = ("--arg-file", "--delimiter", "--eof", "--replace", "--max-lines", "--max-args",
                       "--max-procs", "--max-chars", "--process-slot-var")
PARALLEL_OPTS_WITH_ARG = frozenset(("-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "-d", "--delimiter",
                                    "-E", "-I", "-n", "--max-args", "-N", "-P", "--delay", "--timeout",
                                    "--joblog", "--results", "--tmpdir", "--workdir", "--wd", "-L",
                                    "--max-lines", "--colsep", "-C", "--tag-string", "--retries"))
# builtins / tools that only print or test: their arguments are data
DATA_PROGRAMS = frozenset("""echo printf cat grep egrep fgrep rg ag ack ls head tail wc sort uniq cut tr less more
jq yq sed awk gawk mawk nawk diff cmp test [ true false pwd cd pushd popd dirs mkdir rmdir rm cp mv ln touch
chmod chown stat file basename dirname realpath readlink date sleep which whereis type hash help man tee
find xxd od hexdump base64 rev tac nl fold fmt column paste join comm expand unexpand split csplit md5sum
sha1sum sha256sum git-lfs gh hub curl wget tar zip unzip gzip gunzip make npm yarn pnpm pip pip3 cargo go
rustc gcc cc clang javac java mvn gradle pytest tox ruff black mypy eslint prettier tsc vi vim nano code""".split())


class GuardVerdict:
    __slots__ = ("blocked", "reason", "evidence", "trace")

    def __init__(self, blocked: bool, reason: str, evidence: list[str], trace: list[str]) -> None:
        self.blocked = blocked
        self.reason = reason
        self.evidence = evidence
        self.trace = trace

    def __repr__(self) -> str:
        return f"GuardVerdict(blocked={self.blocked!r}, reason={self.reason!r}, evidence={self.evidence!r})"


class GuardPolicy:
    """The [guard] table of ralph.toml."""

    __slots__ = ("block_git_subcommands", "block_programs", "allow_commands")

    def __init__(self, block_git_subcommands: tuple = (), block_programs: tuple = (), allow_commands: tuple = ()) -> None:
        self.block_git_subcommands = frozenset(s.lower() for s in block_git_subcommands)
        # each rule: (program, words that must follow in order)
        self.block_programs = tuple((rule.split()[0].lower(), tuple(rule.split()[1:])) for rule in block_programs if rule.split())
        self.allow_commands = frozenset(block.strip() for block in allow_commands)

    @classmethod
    def from_config(cls, section: dict, path: str = "ralph.toml") -> GuardPolicy:
        from ralph.config import ConfigError

        known = ("block_git_subcommands", "block_programs", "allow_commands")
        for key in section:
            if key not in known:
                raise ConfigError(f"{path}: [guard] has unknown key {key!r}; known keys: {', '.join(known)}")
        values = []
        for key in known:
            value = section.get(key, [])
            if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
                raise ConfigError(f"{path}: [guard] {key} must be a list of non-empty strings, e.g. {key} = [\"...\"]")
            values.append(tuple(value))
        for item in values[0]:
            if len(item.split()) != 1:
                raise ConfigError(f"{path}: [guard] block_git_subcommands takes single words like \"lfs\", not {item!r}")
        return cls(*values)

    def risky_words(self) -> tuple:
        return RISKY_WORDS + tuple(self.block_git_subcommands) + tuple(w for prog, words in self.block_programs for w in (prog,) + words)


DEFAULT_POLICY = GuardPolicy()


class _Deadline(Exception):
    pass


class _Budget:
    __slots__ = ("deadline", "steps")

    def __init__(self, seconds: float) -> None:
        self.deadline = time.perf_counter() + seconds
        self.steps = 0

    def check(self) -> None:
        self.steps += 1
        if self.steps & 63 == 0 and time.perf_counter() > self.deadline:
            raise _Deadline()
        if self.steps > MAX_STEPS:
            raise _Deadline()


class _Scope:
    """What the command itself defined so far."""

    __slots__ = ("vars", "arrays", "funcs", "aliases", "git_aliases", "exported", "positional", "files")

    def __init__(self) -> None:
        self.vars: dict[str, list[str] | None] = {}  # name -> possible values, None = unknown
        self.arrays: dict[str, list[str]] = {}
        self.funcs: dict[str, tuple] = {}
        self.aliases: dict[str, str] = {}
        self.git_aliases: dict[str, str] = {}
        self.exported: dict[str, str] = {}
        self.positional: list[str] | None = None  # None = unknown ($1.. from outside)
        self.files: dict[str, str | None] = {}

    def fork(self) -> _Scope:
        new = _Scope.__new__(_Scope)
        new.vars = dict(self.vars)
        new.arrays = dict(self.arrays)
        new.funcs = dict(self.funcs)
        new.aliases = dict(self.aliases)
        new.git_aliases = dict(self.git_aliases)
        new.exported = dict(self.exported)
        new.positional = self.positional
        new.files = dict(self.files)
        return new


def could_push(text: str, policy: GuardPolicy = DEFAULT_POLICY) -> bool:
    """Could this text, once decoded or expanded, spell a push or merge?"""
    low = text.lower()
    return any(w in low for w in policy.risky_words()) or any(e in low for e in ENCODINGS)


def file_key(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def shell_quote(word: str) -> str:
    if word and all(c.isalnum() or c in "-_./=:,+@%" for c in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def show(word: str) -> str:
    """A word as a person would write it (unknown parts as `…`)."""
    return word.replace(UNKNOWN, "…").replace(GLOB, "")


def show_argv(argv: list[str], limit: int = 160) -> str:
    text = " ".join(shell_quote(show(a)) if a else "''" for a in argv)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def program_name(word: str) -> str | None:
    """The program a command word runs (basename, lower case), None when unknown."""
    base = word.rsplit("/", 1)[-1]
    if not base or UNKNOWN in base or GLOB in base:
        return None
    return base.lower()


def normalize_program(name: str) -> str:
    """python3.12 -> python, perl5.36 -> perl, pip3 stays for DATA_PROGRAMS."""
    stripped = name.rstrip("0123456789.")
    if stripped != name and stripped in INTERPRETERS:
        return stripped
    if name.endswith(".exe"):
        return normalize_program(name[:-4])
    return name


class _Analysis:
    __slots__ = ("policy", "budget", "text", "blocks", "unsure", "trace", "memo", "nesting", "call_depth")

    def __init__(self, text: str, policy: GuardPolicy, budget: _Budget) -> None:
        self.policy = policy
        self.budget = budget
        self.text = text
        self.blocks: list[tuple[str, str, str]] = []  # (what, why, where)
        self.unsure: list[tuple[bool, str, str]] = []  # (strict, why, where)
        self.trace: list[str] = []
        self.memo: set = set()
        self.nesting = 0
        self.call_depth = 0

    # ---- findings ----

    def note(self, where: str, text: str) -> None:
        if len(self.trace) < 400:
            self.trace.append(f"{where}: {text}" if where else text)

    def block(self, argv: list[str], why: str, where: str) -> None:
        what = show_argv(argv)
        self.blocks.append((what, why, where))
        self.note(where, f"`{what}` -> BLOCK ({why})")

    def not_sure(self, strict: bool, why: str, where: str) -> None:
        self.unsure.append((strict, why, where))
        self.note(where, f"UNSURE: {why}")

    # ---- scripts ----

    def run_script(self, text: str, scope: _Scope, stdin: str | None, where: str) -> str | None:
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
                self.not_sure(False, f"bash cannot parse `{show(text)[:80]}` ({e})", where)
                return None
            return self.run(tree, scope, stdin, False, where)
        finally:
            self.nesting -= 1

    def run(self, node: tuple, scope: _Scope, stdin: str | None, cond: bool, where: str) -> str | None:
        """Judge one tree node; returns its output when known (for pipes and `$(..)`)."""
        self.budget.check()
        kind = node[0]
        if kind == "cmd":
            return self.run_simple(node, scope, stdin, cond, where)
        if kind == "seq":
            outputs = [self.run(child, scope, stdin, cond, where) for child in node[1]]
            return None if None in outputs else "".join(outputs)
        if kind == "and":
            outputs = [self.run(child, scope, stdin, cond or i > 0, where) for i, child in enumerate(node[1])]
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
        if kind == "if":
            for i, part in enumerate(node[1]):
                self.run(part, scope, stdin, cond or i > 0, where)
            return None
        if kind == "while":
            self.run(node[1], scope, stdin, True, where)
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
            return ""
        if kind == "arith":
            self.expand_parts(node[1], scope, where, in_quotes=True)
            return ""
        if kind == "test":
            for word in node[1]:
                self.expand(word, scope, where)
            return ""
        return None

    def run_redirects(self, redirs: list, scope: _Scope, where: str) -> tuple[str | None, list[tuple[str, bool]]]:
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

    # ---- simple commands ----

    def run_simple(self, node: tuple, scope: _Scope, stdin: str | None, cond: bool, where: str) -> str | None:
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
                    self.assign(scope, name, alternatives, cond)
                if name in COMMAND_ENV or name.startswith("GIT_CONFIG"):
                    self.note(here, f"sets {name}")
            for path, append in written:
                if not append or path not in scope.files:
                    scope.files[path] = ""
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
            self.check_written(path, scope.files[path], here)
        return "" if written else output

    def check_written(self, path: str, content: str | None, where: str) -> None:
        """A git hook or git config file written with a push in it arms a later push."""
        low = path.lower()
        is_hook = "hooks/" in low
        is_config = low.endswith(("gitconfig", ".git/config", "git/config", ".gitmodules"))
        if not (is_hook or is_config):
            return
        if content is None:
            self.not_sure(False, f"writes `{show(path)}` (git {'hook' if is_hook else 'config'}) with content that cannot be seen", where)
            return
        if not could_push(content, self.policy):
            return
        probe = self.probe()
        if is_hook:
            probe.run_script(content, _Scope(), "", where)
        else:
            for line in content.splitlines():
                key, eq, value = line.partition("=")
                if eq:
                    value = value.strip().strip('"')
                    if probe.run_git_value(value, _Scope(), where):
                        # a config value may also be a command some other key runs
                        probe.run_script(value, _Scope(), "", where)
        if probe.blocks or any(strict for strict, _, _ in probe.unsure):
            self.block(["write", path], f"writes a git {'hook' if is_hook else 'config'} that would push or merge later", where)

    def probe(self) -> _Analysis:
        """A separate analysis of text this command stores for later (a hook,
        an alias, a config value), sharing this one's budget and nesting."""
        probe = _Analysis(self.text, self.policy, self.budget)
        probe.nesting = self.nesting
        return probe

    def run_git_value(self, value: str, scope: _Scope, where: str) -> bool:
        """Judge a git alias or config value as git runs it: `!cmd` in a
        shell, anything else as git arguments. True when it ran as arguments."""
        if value.startswith("!"):
            self.run_script(value[1:], scope, "", where)
            return False
        try:
            words = _split_words(value)
        except ShellSyntaxError:
            words = [UNKNOWN]
        if words:
            self.run_git(["git"] + words, {}, scope, where)
        return bool(words)

    def assign(self, scope: _Scope, name: str, alternatives: list[str] | None, cond: bool) -> None:
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

    def check_env(self, env: dict[str, str], scope: _Scope, where: str) -> None:
        """Variables whose value git or the shell runs as a command."""
        for name, value in env.items():
            if name in COMMAND_ENV and could_push(value, self.policy):
                self.run_script(value, scope.fork(), "", f"{where} > ${name}")

    def run_argv(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str, cond: bool = False) -> str | None:
        """Judge one expanded command; returns its output when known."""
        self.budget.check()
        if not argv:
            return ""
        word = argv[0]
        if word in scope.aliases and self.call_depth < MAX_CALL_DEPTH:
            self.note(where, f"alias {word} -> {scope.aliases[word]}")
            text = scope.aliases[word] + " " + " ".join(shell_quote(a) for a in argv[1:])
            self.call_depth += 1
            try:
                return self.run_script(text, scope, stdin, f"{where} > alias {word}")
            finally:
                self.call_depth -= 1
        key = (word, tuple(argv[1:]))
        if word in scope.funcs and key not in self.memo and self.call_depth < MAX_CALL_DEPTH:
            # (a repeated call falls through to the program of that name:
            # `git() { command git "$@"; }` must still reach git)
            self.memo.add(key)
            self.note(where, f"calls function {word}()")
            saved = scope.positional
            scope.positional = list(argv[1:])
            self.call_depth += 1
            try:
                return self.run(scope.funcs[word], scope, stdin, cond, f"{where} > {word}()")
            finally:
                self.call_depth -= 1
                scope.positional = saved
        if "/" in word and file_key(word) in scope.files:
            # ./script.sh written earlier in this command
            inner = scope.fork()
            inner.positional = list(argv[1:])
            return self.run_file(word, inner, stdin, f"{where} > {show(word)}")
        name = program_name(word)
        if name is None:
            self.not_sure(False, f"the program name `{show(word)}` is only known when the command runs", where)
            self.scan_for_command(argv[1:], env, stdin, scope, where)
            return None
        name = normalize_program(name)
        for program, words in self.policy.block_programs:
            if name == program and _in_order(words, argv[1:]):
                self.block(argv, f"`{' '.join((program,) + words)}` is blocked by ralph.toml [guard] block_programs", where)
                return None
        handler = PROGRAM_HANDLERS.get(name)
        if handler is not None:
            return handler(self, argv, env, stdin, scope, where)
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
        return static_output(name, argv, stdin)

    # ---- git ----

    def run_git(self, argv: list[str], env: dict[str, str], scope: _Scope, where: str, dashed: bool = False) -> str | None:
        configs: list[tuple[str, str]] = []
        merged_env = dict(scope.exported)
        merged_env.update(env)
        configs.extend(_env_git_config(merged_env))
        i = 1
        while i < len(argv) and not dashed:
            arg = argv[i]
            if UNKNOWN in arg or GLOB in arg:
                self.not_sure(True, f"the git option or subcommand `{show(arg)}` is only known when the command runs", where)
                return None
            if arg in GIT_OPTS_WITH_ARG:
                value = argv[i + 1] if i + 1 < len(argv) else ""
                if arg == "-c":
                    configs.append(_split_config(value))
                elif arg == "--config-env":
                    configs.append(self.config_env(value, merged_env))
                elif arg == "--list-cmds":
                    return None
                i += 2
                continue
            if arg.startswith("--") and "=" in arg:
                option, value = arg.split("=", 1)
                if option == "--config-env":
                    configs.append(self.config_env(value, merged_env))
                i += 1
                continue
            if arg in GIT_OPTS_THAT_EXIT:
                self.note(where, f"git {arg} prints and exits")
                return None
            if arg.startswith("-"):
                i += 1
                continue
            break
        if i >= len(argv):
            return None
        sub = argv[i]
        args = argv[i + 1:]
        aliases = dict(scope.git_aliases)
        for key, value in configs:
            low = key.lower()
            if low.startswith("alias."):
                aliases[key[6:].lower()] = value
            elif could_push(value, self.policy):
                self.run_script(value, scope.fork(), "", f"{where} > git config {key}")
        for _ in range(10):
            if sub.lower() in GIT_BUILTINS or sub.lower() not in aliases:
                break
            value = aliases[sub.lower()]
            self.note(where, f"git alias {sub} = {show(value)}")
            if UNKNOWN in value:
                self.not_sure(True, f"git alias `{sub}` has a value only known when the command runs", where)
                return None
            if value.startswith("!"):
                script = value[1:] + " " + " ".join(shell_quote(a) for a in args)
                self.run_script(script, scope.fork(), "", f"{where} > git alias {sub}")
                return None
            try:
                words = _split_words(value)
            except ShellSyntaxError:
                self.not_sure(True, f"git alias `{sub}` cannot be read", where)
                return None
            if not words:
                return None
            sub, args = words[0], words[1:] + args
        self.judge_git_subcommand(sub, args, configs, argv, scope, where)
        return None

    def config_env(self, value: str, env: dict[str, str]) -> tuple[str, str]:
        key, _, var = value.partition("=")
        return key, env.get(var, UNKNOWN)

    def judge_git_subcommand(self, sub: str, args: list[str], configs: list, argv: list[str], scope: _Scope, where: str) -> None:
        low = sub.lower()
        unknown_args = any(UNKNOWN in a for a in args)
        helping = bool(args) and args[0] in ("--help", "-h")
        if low in GIT_BLOCKED or low in self.policy.block_git_subcommands:
            if helping:
                self.note(where, f"git {low} {args[0]} only prints help")
                return
            why = GIT_BLOCKED.get(low) or "is blocked by ralph.toml [guard] block_git_subcommands"
            self.block(argv, f"git {low} {why}", where)
            return
        if low == "merge":
            if helping or (not unknown_args and ("--abort" in args or "--quit" in args)):
                self.note(where, "git merge --abort/--quit/--help merges nothing")
                return
            self.block(argv, "git merge joins another branch into yours", where)
            return
        if low == "pull":
            self.judge_pull(args, configs, argv, where)
            return
        if low == "subtree":
            verb = next((a for a in args if not a.startswith("-")), "")
            if verb in ("push", "merge", "pull") or UNKNOWN in verb:
                self.block(argv, f"git subtree {show(verb)} pushes or merges", where)
            return
        if low == "rebase":
            for value in _option_values(args, ("--exec", "-x")):
                self.run_script(value, scope.fork(), "", f"{where} > git rebase --exec")
            return
        if low == "submodule":
            if "foreach" in args:
                rest = args[args.index("foreach") + 1:]
                while rest and rest[0] in ("--recursive", "-q", "--quiet"):
                    rest = rest[1:]
                self.run_script(" ".join(rest), scope.fork(), "", f"{where} > git submodule foreach")
            return
        if low == "bisect":
            if args and args[0] == "run":
                self.run_script(" ".join(shell_quote(a) for a in args[1:]), scope.fork(), "", f"{where} > git bisect run")
            return
        if low == "filter-branch":
            for value in _option_values(args, tuple(FILTER_BRANCH_OPTS)):
                self.run_script(value, scope.fork(), "", f"{where} > git filter-branch")
            return
        if low == "difftool":
            for value in _option_values(args, ("-x", "--extcmd")):
                self.run_script(value, scope.fork(), "", f"{where} > git difftool --extcmd")
            return
        if low == "config":
            self.judge_git_config(args, argv, scope, where)
            return
        self.note(where, f"git {low}: allowed")

    def judge_pull(self, args: list[str], configs: list, argv: list[str], where: str) -> None:
        rebase = None
        for key, value in configs:
            if key.lower() == "pull.rebase":
                rebase = value.lower() not in ("false", "no", "off", "0", "")
        for arg in args:
            if UNKNOWN in arg:
                self.not_sure(True, f"git pull has an option `{show(arg)}` only known when the command runs", where)
                return
            if arg in ("--rebase", "-r") or (arg.startswith("--rebase=") and arg[9:].lower() not in ("false", "no", "off", "0")):
                rebase = True
            elif arg == "--no-rebase" or arg.startswith("--rebase="):
                rebase = False
            elif arg.startswith("-") and not arg.startswith("--"):
                for ch in arg[1:]:
                    if ch == "r":
                        rebase = True
                    if ch in "sXj":  # options whose value follows
                        break
            elif arg in ("--help",) or arg == "-h":
                self.note(where, "git pull --help only prints help")
                return
        if rebase:
            self.note(where, "git pull --rebase: rebases, merges nothing")
            return
        self.block(argv, "git pull merges the remote branch into yours (use `git fetch` to look at remote work)", where)

    def judge_git_config(self, args: list[str], argv: list[str], scope: _Scope, where: str) -> None:
        positional = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-f", "--file", "--blob", "--type", "--default", "--comment", "--value"):
                i += 2
                continue
            if arg.startswith("-"):
                if arg in ("--get", "--get-all", "--get-regexp", "--list", "-l", "--unset", "--unset-all",
                           "--remove-section", "--rename-section", "--get-urlmatch", "-e", "--edit"):
                    return
                i += 1
                continue
            positional.append(arg)
            i += 1
        if positional and positional[0] in ("set",):
            positional = positional[1:]
        elif positional and positional[0] in ("get", "list", "unset", "edit", "rename-section", "remove-section"):
            return
        if len(positional) < 2:
            return
        key, value = positional[0], positional[1]
        if key.lower().startswith("alias."):
            name = key[6:].lower()
            scope.git_aliases[name] = value
            if UNKNOWN in value:
                self.not_sure(True, f"git alias `{name}` is given a value only known when the command runs", where)
                return
            probe = self.probe()
            probe.run_git_value(value, scope.fork(), where)
            if probe.blocks or any(strict for strict, _, _ in probe.unsure):
                self.block(argv, f"defines git alias `{name}` that would push or merge when used", where)
            return
        if could_push(value, self.policy):
            probe = self.probe()
            probe.run_script(value, scope.fork(), "", where)
            if probe.blocks:
                self.block(argv, f"sets git config {key} to a command that would push or merge", where)

    # ---- shells and interpreters ----

    def run_shell(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        i = 1
        command_mode = False
        read_stdin = False
        while i < len(argv):
            arg = argv[i]
            if arg == "--" or arg == "-":
                i += 1
                break
            if arg.startswith("--"):
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

    def run_file(self, path: str, scope: _Scope, stdin: str | None, where: str) -> str | None:
        if path in ("/dev/stdin", "-", "/proc/self/fd/0", "/dev/fd/0"):
            return self.run_stdin_script(stdin, scope, where)
        if path.startswith("\x03"):  # process substitution output
            return self.run_stdin_script(scope.files.get(path), scope, where)
        path = file_key(path)
        if path in scope.files:
            content = scope.files[path]
            if content is None:
                self.not_sure(False, f"runs `{show(path)}`, written earlier in this command with content that cannot be seen", where)
                return None
            self.note(where, f"runs {show(path)}, written earlier in this command")
            return self.run_script(content, scope, stdin, where)
        if UNKNOWN in path:
            self.not_sure(False, f"runs a script whose path `{show(path)}` is only known when the command runs", where)
        else:
            self.note(where, f"runs script file {path} (not visible to the guard)")
        return None

    def run_stdin_script(self, stdin: str | None, scope: _Scope, where: str) -> str | None:
        if stdin is None:
            self.not_sure(False, "a shell reads its script from input the guard cannot see", where)
            return None
        return self.run_script(stdin, scope, "", where)

    def run_interpreter(self, name: str, argv: list[str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        flags = INTERPRETERS.get(name, ("-c",))
        code = None
        found_flag = False
        i = 1
        while i < len(argv):
            arg = argv[i]
            low = arg.lower()
            if low in flags:
                found_flag = True
                code = argv[i + 1] if i + 1 < len(argv) else ""
                break
            attached = next((f for f in flags if f.startswith("-") and len(f) == 2 and arg.startswith(f) and len(arg) > 2), None)
            if attached:
                found_flag = True
                code = arg[2:]
                break
            if arg in ("-m",) and name.startswith("py"):
                return None
            if not arg.startswith("-") or arg == "-":
                break
            i += 1
        if not found_flag:
            rest = argv[i:]
            if rest and rest[0] != "-":
                path = rest[0]
                if path in scope.files:
                    code = scope.files[path]
                    if code is None:
                        self.not_sure(False, f"{name} runs `{show(path)}`, written in this command with content that cannot be seen", where)
                        return None
                else:
                    self.note(where, f"{name} runs file {show(path)} (not visible to the guard)")
                    return None
            else:
                code = stdin
                if code is None:
                    self.not_sure(False, f"{name} reads its program from input the guard cannot see", where)
                    return None
        self.judge_code(name, code or "", scope, where)
        return None

    def judge_code(self, name: str, code: str, scope: _Scope, where: str, starts_programs: bool = False) -> None:
        low = code.lower()
        starts_programs = starts_programs or any(api in low for api in EXEC_APIS)
        if not starts_programs:
            self.note(where, f"{name} code starts no programs")
            return
        before = len(self.blocks)
        for literal in _string_literals(code):
            if could_push(literal, self.policy) or "git" in literal.lower():
                self.run_script(literal, scope.fork(), "", f"{where} > {name} string")
        if len(self.blocks) > before:
            return
        if could_push(code, self.policy):
            self.blocks.append((f"{name} code", f"{name} code that starts programs mentions push/merge/pull or encodes text", where))
            self.note(where, f"{name} code can start programs and could push or merge -> BLOCK")
        else:
            self.note(where, f"{name} code starts programs but none that push or merge")

    # ---- wrappers ----

    def run_wrapper(self, name: str, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
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
            if name in ("env", "sudo", "doas") and "=" in arg and arg[0] not in "=/":
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
                self.not_sure(False, "env -S string cannot be read", where)
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

    def scan_for_command(self, args: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> None:
        """Runners whose option syntax the guard does not know: judge the command
        starting at the first word that names a program we know."""
        for i, arg in enumerate(args):
            name = program_name(arg)
            if name is None:
                continue
            name = normalize_program(name)
            if name in DATA_PROGRAMS and name not in PROGRAM_HANDLERS:
                self.run_argv(args[i:], env, stdin, scope, where)
                return
            if (name in PROGRAM_HANDLERS or name.startswith("git") or name in SHELLS or name in INTERPRETERS
                    or name in WRAPPERS or name.startswith("python")):
                # an image or host may share a program's name (`alpine/git`): judge
                # from here, and keep looking further on
                before = len(self.blocks)
                self.run_argv(args[i:], env, stdin, scope, where)
                if len(self.blocks) > before:
                    return

    def run_ssh(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
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
            self.not_sure(False, "ssh runs a remote script read from input the guard cannot see", where)
        return None

    def run_xargs(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
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

    def run_find(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
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

    def run_parallel(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
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

    def run_awk(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
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
                    self.not_sure(False, f"awk runs `{show(path)}`, written in this command with content that cannot be seen", where)
                i += 2
                continue
            if arg in ("-F", "-v", "--assign", "--field-separator"):
                i += 2
                continue
            if arg.startswith("-") and len(arg) > 1:
                i += 1
                continue
            break
        if program is None:
            program = argv[i] if i < len(argv) else ""
        if "system" in program or "|" in program:
            self.judge_code(argv[0].rsplit("/", 1)[-1], program, scope, where, starts_programs=True)
        return None

    def run_sed(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        scripts = _option_values(argv[1:], ("-e", "--expression"))
        if not scripts:
            rest = [a for a in argv[1:] if not a.startswith("-")]
            scripts = rest[:1]
        for script in scripts:
            if _sed_executes(script):
                self.judge_code("sed", script, scope, where, starts_programs=True)
        return None

    def run_eval(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        return self.run_script(" ".join(argv[1:]), scope, stdin, f"{where} > eval")

    def run_source(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        if len(argv) < 2:
            return None
        saved = scope.positional
        if len(argv) > 2:
            scope.positional = list(argv[2:])
        try:
            return self.run_file(argv[1], scope, stdin, f"{where} > source {show(argv[1])}")
        finally:
            scope.positional = saved

    def run_trap(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        args = [a for a in argv[1:] if a not in ("-p", "-l", "--")]
        if len(args) >= 2 and args[0] != "-":
            self.run_script(args[0], scope, "", f"{where} > trap action")
        return None

    def run_ralph(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        words = [a for a in argv[1:] if not a.startswith("-")]
        if len(words) >= 2 and words[0].lower() == "stream" and words[1].lower() == "merge":
            self.block(argv, "ralph stream merge merges a stream into the main branch", where)
        elif words and UNKNOWN in words[0]:
            self.not_sure(False, "the ralph subcommand is only known when the command runs", where)
        return None

    # ---- state-changing builtins ----

    def run_alias(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        for arg in argv[1:]:
            if "=" in arg and not arg.startswith("-"):
                name, _, value = arg.partition("=")
                scope.aliases[name] = value
                self.note(where, f"defines alias {name}")
        return None

    def run_unalias(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        for arg in argv[1:]:
            if arg == "-a":
                scope.aliases.clear()
            scope.aliases.pop(arg, None)
        return None

    def run_declare(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        exporting = argv[0] == "export" or any(a.startswith("-") and "x" in a for a in argv[1:])
        for arg in argv[1:]:
            if arg.startswith("-") or arg.startswith("+"):
                continue
            name, eq, value = arg.partition("=")
            if not eq:
                continue
            if name.endswith("+"):
                name = name[:-1]
            self.assign(scope, name, [value], False)
            if exporting:
                scope.exported[name] = value
            if name in COMMAND_ENV and could_push(value, self.policy):
                self.check_env({name: value}, scope, where)
        return None

    def run_unset(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
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

    def run_read(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
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

    def run_mapfile(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        names = [a for a in argv[1:] if not a.startswith("-")]
        name = names[-1] if names else "MAPFILE"
        scope.arrays[name] = [UNKNOWN] if stdin is None else stdin.splitlines()
        scope.vars[name] = None if stdin is None else [scope.arrays[name][0] if scope.arrays[name] else ""]
        return None

    def run_set(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        if "--" in argv:
            scope.positional = list(argv[argv.index("--") + 1:])
        elif len(argv) > 1 and not argv[1].startswith(("-", "+")):
            scope.positional = list(argv[1:])
        return None

    def run_shift(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        count = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
        if scope.positional is not None:
            scope.positional = scope.positional[count:]
        return None

    def run_printf(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        if len(argv) > 2 and argv[1] == "-v":
            value = _printf(argv[3:]) if len(argv) > 3 else ""
            self.assign(scope, argv[2], [value if value is not None else UNKNOWN], False)
            return ""
        return _printf(argv[1:])

    def run_tee(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        for arg in argv[1:]:
            if not arg.startswith("-"):
                scope.files[file_key(arg)] = stdin
                self.check_written(arg, stdin, where)
        return stdin

    def run_multiplexer(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        """tmux/screen/at: a command string or typed keys run later in a shell."""
        name = program_name(argv[0]) or ""
        if name in ("at", "batch"):
            if "-f" in argv:
                return self.run_file(argv[argv.index("-f") + 1] if argv.index("-f") + 1 < len(argv) else "", scope.fork(), None, f"{where} > {name}")
            return self.run_stdin_script(stdin, scope.fork(), f"{where} > {name} (script on stdin)")
        if name == "screen":
            self.scan_for_command(argv[1:], env, stdin, scope, where)
        for arg in argv[1:]:
            if not arg.startswith("-") and (could_push(arg, self.policy) or UNKNOWN in arg):
                self.run_script(arg, scope.fork(), "", f"{where} > {name} (command string)")
        return None

    def run_copy(self, argv: list[str], env: dict[str, str], stdin: str | None, scope: _Scope, where: str) -> str | None:
        paths = [a for a in argv[1:] if not a.startswith("-")]
        if len(paths) == 2:
            source = file_key(paths[0])
            if source in ("/dev/stdin", "-"):
                content = stdin
            else:
                content = scope.files.get(source)
            scope.files[file_key(paths[1])] = content
            self.check_written(paths[1], content, where)
        return ""

    # ---- expansion ----

    def expand_words(self, words: list, scope: _Scope, where: str) -> list[list[str]]:
        """All argv alternatives of a command's words (at most MAX_ALTERNATIVES)."""
        argvs: list[list[str]] = [[]]
        for word in words:
            alternatives = self.expand(word, scope, where)
            if len(argvs) * len(alternatives) > MAX_ALTERNATIVES:
                alternatives = [[UNKNOWN]]
            argvs = [argv + fields for argv in argvs for fields in alternatives]
        return argvs

    def expand(self, word: list, scope: _Scope, where: str) -> list[list[str]]:
        """A word's alternatives, each a list of fields after splitting and brace expansion."""
        if len(word) == 1 and word[0][0] == "s":
            kind, text, quoted = word[0]
            if quoted:
                return [[text]]
            if "{" not in text and "~" not in text[:1] and not _has_glob(text):
                return [[text]]
        # brace expansion makes more words; each word may have alternatives
        results: list[list[str]] = [[]]
        for variant in _brace_expand(word):
            alternatives = self.expand_parts(variant, scope, where, in_quotes=False)
            if len(results) * len(alternatives) > MAX_ALTERNATIVES:
                return [[UNKNOWN]]
            results = [done + fields for done in results for fields in alternatives]
        return results

    def expand_joined(self, parts: list, scope: _Scope, where: str) -> str | None:
        """A quoted context's single string (heredoc body, here-string), None when unknown."""
        alternatives = self.expand_parts(parts, scope, where, in_quotes=True)
        if len(alternatives) != 1:
            return None
        value = " ".join(alternatives[0])
        return None if UNKNOWN in value else value

    def expand_value(self, parts: list, scope: _Scope, where: str) -> list[str] | None:
        """An assignment's possible values (no splitting, no globbing)."""
        alternatives = self.expand_parts(parts, scope, where, in_quotes=True)
        values = [" ".join(fields) for fields in alternatives]
        return values[:MAX_ALTERNATIVES] if values else [""]

    def expand_parts(self, parts: list, scope: _Scope, where: str, in_quotes: bool) -> list[list[str]]:
        # Each alternative is (fields, current, current_started).
        alternatives: list[tuple[list[str], str, bool]] = [([], "", False)]
        ifs = scope.vars.get("IFS")
        separators = " \t\n" if not ifs or ifs[0] is None else ifs[0]
        for part in parts:
            self.budget.check()
            kind = part[0]
            pieces: list[tuple[list[str] | str, bool]]  # (value or list of fields, quoted)
            if kind == "s":
                text = part[1]
                if not part[2] and not in_quotes:
                    text = _mark_globs(text)
                pieces = [(text, True)]
            elif kind == "v":
                pieces = [(v, part[2] or in_quotes) for v in self.param_values(part, scope, where)]
            elif kind == "c":
                output = self.run(part[1], scope.fork(), "", False, f"{where} > $(…)")
                value = UNKNOWN if output is None else output.rstrip("\n")
                if len(value) > MAX_VALUE:
                    value = UNKNOWN
                pieces = [(value, part[2] or in_quotes)]
            elif kind == "p":
                key = "\x03" + str(id(part))
                scope.files[key] = self.run(part[1], scope.fork(), None, False, f"{where} > <(…)")
                pieces = [(key, True)]
            elif kind == "a":
                self.expand_parts(part[1], scope, where, in_quotes=True)
                pieces = [(UNKNOWN, True)]
            else:  # pragma: no cover
                pieces = [(UNKNOWN, True)]
            new: list[tuple[list[str], str, bool]] = []
            for fields, current, started in alternatives:
                for value, quoted in pieces:
                    if isinstance(value, list):
                        # "$@": each element its own field
                        if not value:
                            new.append((fields, current, started))
                            continue
                        if quoted:
                            first = current + value[0]
                            middle = value[1:-1]
                            if len(value) == 1:
                                new.append((fields, first, True))
                            else:
                                new.append((fields + [first] + middle, value[-1], True))
                        else:
                            split = [w for v in value for w in _split_fields(v, separators)]
                            if not split:
                                new.append((fields, current, started))
                            elif len(split) == 1:
                                new.append((fields, current + split[0], True))
                            else:
                                new.append((fields + [current + split[0]] + split[1:-1], split[-1], True))
                        continue
                    if quoted or in_quotes:
                        new.append((fields, current + value, True))
                        continue
                    # unquoted expansion: split on IFS
                    if not value:
                        new.append((fields, current, started))
                        continue
                    split = _split_fields(value, separators)
                    lead = value[0] in separators
                    trail = value[-1] in separators
                    if not split:
                        new.append((fields + ([current] if started else []), "", False))
                        continue
                    out_fields = list(fields)
                    cur = current
                    if lead and started:
                        out_fields.append(cur)
                        cur = ""
                    cur += split[0]
                    for w in split[1:]:
                        out_fields.append(cur)
                        cur = w
                    if trail:
                        out_fields.append(cur)
                        new.append((out_fields, "", False))
                    else:
                        new.append((out_fields, cur, True))
            alternatives = new[:MAX_ALTERNATIVES] if len(new) <= MAX_ALTERNATIVES else [([UNKNOWN], "", False)]
            if any(len(current) > MAX_VALUE or len(fields) > 4096 for fields, current, _ in alternatives):
                # `x=$x$x` repeated: stop growing, the value is unknown
                alternatives = [(fields[:4096], UNKNOWN if len(current) > MAX_VALUE else current, True)
                                for fields, current, _ in alternatives]
        results = []
        for fields, current, started in alternatives:
            if started or (in_quotes and not fields):
                fields = fields + [current]
            results.append(fields)
        if in_quotes:
            return results
        return results

    def param_values(self, part: tuple, scope: _Scope, where: str) -> list:
        """Possible values of a parameter expansion: strings, or lists of fields for "$@"."""
        _, name, quoted, op, arg = part
        base = name.split("[", 1)[0]
        subscript = name[len(base) + 1:-1] if "[" in name else None
        if op == "!names":
            return [UNKNOWN]
        values: list | None
        if base in ("@", "*") or (subscript in ("@", "*") and base in scope.arrays):
            items = scope.positional if base in ("@", "*") else scope.arrays.get(base)
            if items is None:
                values = [[UNKNOWN]]
            elif (base == "*" or subscript == "*") and quoted:
                values = [" ".join(items)]
            else:
                values = [list(items)]
        elif base.isdigit():
            index = int(base)
            if index == 0:
                values = scope.vars.get("0", ["bash"])
            elif scope.positional is None:
                values = None
            else:
                values = [scope.positional[index - 1] if index - 1 < len(scope.positional) else ""]
        elif base == "#":
            values = [str(len(scope.positional))] if scope.positional is not None else None
        elif base in ("?", "$", "!", "-"):
            values = ["0"]
        elif subscript is not None and base in scope.arrays:
            items = scope.arrays[base]
            values = [items[int(subscript)]] if subscript.isdigit() and int(subscript) < len(items) else None
        elif base in scope.vars:
            values = scope.vars[base]
        else:
            values = None  # set outside this command
        if op == "!":
            if values is None or len(values) != 1 or not isinstance(values[0], str):
                return [UNKNOWN]
            return self.param_values(("v", values[0], quoted, "", None), scope, where)
        if op == "#":
            return [UNKNOWN] if values is None else [str(len(v)) if isinstance(v, str) else str(len(v)) for v in values]
        if not op:
            return [UNKNOWN] if values is None else values
        flat: list[str] | None = None if values is None else [v if isinstance(v, str) else " ".join(v) for v in values]
        if op in (":-", "-", ":=", "="):
            defaults = self.expand_value(arg or [], scope, where) or [""]
            if op in (":=", "=") and base.isidentifier():
                if flat is None:
                    scope.vars[base] = None
                elif not any(flat) and op == ":=":
                    scope.vars[base] = defaults
            if flat is None:
                return [UNKNOWN] + defaults
            if op.startswith(":"):
                return [v for v in flat if v] + (defaults if any(not v for v in flat) else [])
            return flat
        if op in (":+", "+"):
            alternates = self.expand_value(arg or [], scope, where) or [""]
            if flat is None:
                return [""] + alternates
            return (alternates if any(flat) else []) + ([""] if not all(flat) else [])
        if op in (":?", "?"):
            self.expand_value(arg or [], scope, where)
            return [UNKNOWN] if flat is None else flat
        if op in ("^^", ",,", "^", ","):
            if arg:
                return [UNKNOWN]
            if flat is None:
                return [UNKNOWN]
            if op == "^^":
                return [v.upper() for v in flat]
            if op == ",,":
                return [v.lower() for v in flat]
            if op == "^":
                return [v[:1].upper() + v[1:] for v in flat]
            return [v[:1].lower() + v[1:] for v in flat]
        # pattern removal, substitution, substrings, transforms: run the nested
        # expansions (they may hold commands) but treat the result as unknown
        if arg:
            self.expand_value(arg, scope, where)
        if flat is not None and arg is not None and op in ("#", "##", "%", "%%", "/", "//", "/#", "/%"):
            return [_pattern_op(v, op, arg) for v in flat]
        return [UNKNOWN]


def _pattern_op(value: str, op: str, arg: list) -> str:
    """${x#lit}, ${x/lit/rep} with literal patterns; anything else is unknown."""
    if any(p[0] != "s" for p in arg):
        return UNKNOWN
    text = "".join(p[1] for p in arg)
    if op.startswith("/"):
        pattern, _, replacement = text.partition("/")
        if any(c in pattern for c in "*?[") or not pattern:
            return UNKNOWN
        if op == "//":
            return value.replace(pattern, replacement)
        if op == "/#":
            return replacement + value[len(pattern):] if value.startswith(pattern) else value
        if op == "/%":
            return value[: -len(pattern)] + replacement if value.endswith(pattern) else value
        return value.replace(pattern, replacement, 1)
    if any(c in text for c in "*?["):
        return UNKNOWN
    if op.startswith("#"):
        return value[len(text):] if value.startswith(text) else value
    return value[: -len(text)] if text and value.endswith(text) else value


def _split_fields(value: str, separators: str) -> list[str]:
    if separators == " \t\n":
        return value.split()
    out = []
    current = []
    for ch in value:
        if ch in separators:
            if current:
                out.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        out.append("".join(current))
    return out


def _has_glob(text: str) -> bool:
    if "*" in text or "?" in text:
        return True
    bracket = text.find("[")
    return bracket >= 0 and "]" in text[bracket + 1:]


def _mark_globs(text: str) -> str:
    if not _has_glob(text):
        return text
    return "".join(GLOB + c if c in "*?[" else c for c in text)


AWK = frozenset(("awk", "gawk", "mawk", "nawk", "busybox-awk"))


def _brace_expand(word: list) -> list[list]:
    """Brace expansion over a word's unquoted literal text (bash does it first)."""
    if not any(p[0] == "s" and not p[2] and "{" in p[1] and ("," in p[1] or ".." in p[1]) for p in word):
        return [word]
    if sum(p[1].count("{") for p in word if p[0] == "s" and not p[2]) > 32:
        return [[("s", UNKNOWN, True)]]  # too many braces to expand cheaply
    # flatten to atoms: (char, special) for unquoted literal chars, (part, False) otherwise
    atoms: list[tuple] = []
    for p in word:
        if p[0] == "s" and not p[2]:
            atoms.extend((c, True) for c in p[1])
        else:
            atoms.append((p, False))
    results: list[list[tuple]] = []
    _brace_atoms(atoms, results)
    words = []
    for seq in results[:MAX_ALTERNATIVES * 4]:
        parts: list = []
        buf: list[str] = []
        for item, special in seq:
            if special:
                buf.append(item)
            else:
                if buf:
                    parts.append(("s", "".join(buf), False))
                    buf = []
                parts.append(item)
        if buf:
            parts.append(("s", "".join(buf), False))
        if parts:
            words.append(parts)
    return words or [[("s", "", True)]]


def _brace_atoms(atoms: list[tuple], out: list) -> None:
    if len(out) > MAX_ALTERNATIVES * 4:
        return
    n = len(atoms)
    for start in range(n):
        if atoms[start] != ("{", True):
            continue
        depth = 0
        commas = []
        end = -1
        for j in range(start, n):
            a = atoms[j]
            if a == ("{", True):
                depth += 1
            elif a == ("}", True):
                depth -= 1
                if depth == 0:
                    end = j
                    break
            elif a == (",", True) and depth == 1:
                commas.append(j)
        if end < 0:
            break
        prefix, suffix = atoms[:start], atoms[end + 1:]
        if commas:
            bounds = [start] + commas + [end]
            for k in range(len(bounds) - 1):
                _brace_atoms(prefix + atoms[bounds[k] + 1:bounds[k + 1]] + suffix, out)
            return
        inner = "".join(a[0] for a in atoms[start + 1:end] if a[1])
        if len(inner) == end - start - 1 and ".." in inner:
            seq = _brace_sequence(inner)
            if seq is not None:
                for item in seq:
                    _brace_atoms(prefix + [(c, True) for c in item] + suffix, out)
                return
    out.append(atoms)


def _brace_sequence(inner: str) -> list[str] | None:
    pieces = inner.split("..")
    if len(pieces) not in (2, 3):
        return None
    a, b = pieces[0], pieces[1]
    try:
        if len(a) == 1 and len(b) == 1 and a.isalpha() and b.isalpha():
            lo, hi = ord(a), ord(b)
            step = 1 if lo <= hi else -1
            items = [chr(c) for c in range(lo, hi + step, step)]
        else:
            lo, hi = int(a), int(b)
            step = 1 if lo <= hi else -1
            if abs(hi - lo) > 64:
                return None
            items = [str(c) for c in range(lo, hi + step, step)]
    except ValueError:
        return None
    return items


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


def _in_order(words: tuple, args: list[str]) -> bool:
    i = 0
    for arg in args:
        if i < len(words) and arg.lower() == words[i].lower():
            i += 1
    return i == len(words)


def _option_values(args: list[str], options: tuple) -> list[str]:
    values = []
    for i, arg in enumerate(args):
        for option in options:
            if arg == option and i + 1 < len(args):
                values.append(args[i + 1])
            elif option.startswith("--") and arg.startswith(option + "="):
                values.append(arg[len(option) + 1:])
            elif not option.startswith("--") and arg.startswith(option) and len(arg) > len(option):
                values.append(arg[len(option):])
    return values


def _split_config(value: str) -> tuple[str, str]:
    key, eq, rest = value.partition("=")
    return key, rest if eq else "true"


def _env_git_config(env: dict[str, str]) -> list[tuple[str, str]]:
    """-c pairs passed through GIT_CONFIG_COUNT/KEY_n/VALUE_n and GIT_CONFIG_PARAMETERS."""
    pairs = []
    count = env.get("GIT_CONFIG_COUNT", "")
    if count.isdigit():
        for k in range(min(int(count), 64)):
            key = env.get(f"GIT_CONFIG_KEY_{k}")
            if key is not None:
                pairs.append((key, env.get(f"GIT_CONFIG_VALUE_{k}", "")))
    elif UNKNOWN in count:
        pairs.append(("alias.", UNKNOWN))
    parameters = env.get("GIT_CONFIG_PARAMETERS")
    if parameters:
        try:
            words = _split_words(parameters)
        except ShellSyntaxError:
            words = []
        for word in words:
            pairs.append(_split_config(word))
    return pairs


def _split_words(text: str) -> list[str]:
    """Shell-like word splitting of a static string (quotes, backslashes)."""
    tree = parse(text, 1)
    words: list[str] = []
    for node in tree[1]:
        if node[0] != "cmd":
            raise ShellSyntaxError("not a simple word list")
        for assign in node[1]:
            words.append(assign[1] + "=" + "".join(p[1] if p[0] == "s" else UNKNOWN for p in assign[2]) if assign[0] == "=" else UNKNOWN)
        for word in node[2]:
            words.append("".join(p[1] if p[0] == "s" else UNKNOWN for p in word))
    return words


def _string_literals(code: str) -> list[str]:
    """Quoted strings in interpreter code (', ", `), escapes decoded C-style."""
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
            out.append(decode_ansi_c(body) if "\\" in body else body)
            i = j + 1
        else:
            i += 1
    return out


def _printf(args: list[str]) -> str | None:
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


def static_output(name: str, argv: list[str], stdin: str | None) -> str | None:
    """What a data program prints, when the guard can know it."""
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
    if name == "printf":
        return _printf(argv[1:])
    if name == "cat" and len(argv) == 1:
        return stdin
    if name in ("which", "type") and len(argv) == 2 and not argv[1].startswith("-"):
        return "/usr/bin/" + argv[1] + "\n"
    if name == "basename" and len(argv) == 2:
        return argv[1].rstrip("/").rsplit("/", 1)[-1] + "\n"
    if name in ("true", "false", ":", "cd", "export", "mkdir", "touch", "rm", "sleep"):
        return ""
    return None


PROGRAM_HANDLERS = {
    "git": lambda self, argv, env, stdin, scope, where: self.run_git(argv, env, scope, where),
    "ralph": _Analysis.run_ralph,
    "ssh": _Analysis.run_ssh,
    "xargs": _Analysis.run_xargs,
    "find": _Analysis.run_find,
    "parallel": _Analysis.run_parallel,
    "eval": _Analysis.run_eval,
    "source": _Analysis.run_source,
    ".": _Analysis.run_source,
    "trap": _Analysis.run_trap,
    "alias": _Analysis.run_alias,
    "unalias": _Analysis.run_unalias,
    "export": _Analysis.run_declare,
    "declare": _Analysis.run_declare,
    "typeset": _Analysis.run_declare,
    "local": _Analysis.run_declare,
    "readonly": _Analysis.run_declare,
    "unset": _Analysis.run_unset,
    "read": _Analysis.run_read,
    "mapfile": _Analysis.run_mapfile,
    "readarray": _Analysis.run_mapfile,
    "set": _Analysis.run_set,
    "shift": _Analysis.run_shift,
    "printf": _Analysis.run_printf,
    "tee": _Analysis.run_tee,
    "cp": _Analysis.run_copy,
    "awk": _Analysis.run_awk,
    "gawk": _Analysis.run_awk,
    "mawk": _Analysis.run_awk,
    "nawk": _Analysis.run_awk,
    "sed": _Analysis.run_sed,
    "gsed": _Analysis.run_sed,
    "hub": lambda self, argv, env, stdin, scope, where: self.run_git(argv, env, scope, where),
    "yadm": lambda self, argv, env, stdin, scope, where: self.run_git(argv, env, scope, where),
    "tmux": _Analysis.run_multiplexer,
    "screen": _Analysis.run_multiplexer,
    "at": _Analysis.run_multiplexer,
    "batch": _Analysis.run_multiplexer,
    "busybox": lambda self, argv, env, stdin, scope, where: self.run_argv(argv[1:], env, stdin, scope, where),
    "toybox": lambda self, argv, env, stdin, scope, where: self.run_argv(argv[1:], env, stdin, scope, where),
}


def judge_command(command: str, policy: GuardPolicy | None = None, deadline: float = 0.25) -> GuardVerdict:
    """Would running `command` in bash push or merge? Never raises."""
    policy = policy or DEFAULT_POLICY
    try:
        return _judge(command, policy, deadline)
    except BaseException as e:  # noqa: B036 - a crash would be a bypass
        if isinstance(e, KeyboardInterrupt):
            raise
        return _unsure_verdict(command, policy, f"the guard failed on this command ({type(e).__name__})", ["internal error"])


def _unsure_verdict(command: str, policy: GuardPolicy, why: str, trace: list[str]) -> GuardVerdict:
    try:
        risky = could_push(command, policy)
    except BaseException:  # noqa: B036
        risky = True
    if not risky:
        return GuardVerdict(False, "", [], trace + [f"{why}; the command does not mention push/merge/pull -> allow"])
    reason = (
        f"ralph-hooks blocked this command: {why}, and it mentions push/merge/pull or encoded text. "
        f"Split it into plain simple commands (one per line, no deep nesting or generated code). {ACT}"
    )
    return GuardVerdict(True, reason, [why], trace + [f"{why} -> BLOCK (fail closed)"])


def _judge(command: str, policy: GuardPolicy, deadline: float) -> GuardVerdict:
    if policy.allow_commands and command.strip() in policy.allow_commands:
        return GuardVerdict(False, "", [], ["listed in ralph.toml [guard] allow_commands -> allow"])
    budget = _Budget(deadline)
    analysis = _Analysis(command, policy, budget)
    try:
        tree = parse(command, 0, budget)
    except ShellSyntaxError as e:
        return _unsure_verdict(command, policy, f"bash would reject this command ({e})", [f"parse error: {e}"])
    except (TooDeep, RecursionError):
        return _unsure_verdict(command, policy, "the command is nested too deeply to check", ["too deep"])
    except _Deadline:
        return _unsure_verdict(command, policy, "the command is too long to check in time", ["deadline"])
    scope = _Scope()
    try:
        analysis.run(tree, scope, "", False, "")
    except (TooDeep, RecursionError):
        return _unsure_verdict(command, policy, "the command is nested too deeply to check", analysis.trace + ["too deep"])
    except _Deadline:
        return _unsure_verdict(command, policy, "the command is too long to check in time", analysis.trace + ["deadline"])
    trace = analysis.trace
    if analysis.blocks:
        what, why, where = analysis.blocks[0]
        nested = f" (inside {where})" if " > " in where else ""
        reason = f"ralph-hooks blocked this command: it would run `{what}`{nested}: {why}. {ACT}"
        evidence = [f"{w}: {y} [{p}]" for w, y, p in analysis.blocks]
        return GuardVerdict(True, reason, evidence, trace)
    strict = [u for u in analysis.unsure if u[0]]
    if strict:
        _, why, where = strict[0]
        reason = f"ralph-hooks blocked this command: it cannot tell whether it pushes or merges, because {why} (in {where}). {REWRITE} {ACT}"
        return GuardVerdict(True, reason, [f"{why} [{where}]" for _, why, where in strict], trace + ["unknown git subcommand -> BLOCK (fail closed)"])
    if analysis.unsure:
        if could_push(command, policy):
            _, why, where = analysis.unsure[0]
            reason = (f"ralph-hooks blocked this command: it cannot tell whether it pushes or merges, because {why} "
                      f"(in {where}), and the command mentions push/merge/pull or encoded text. {REWRITE} {ACT}")
            return GuardVerdict(True, reason, [f"{why} [{where}]" for _, why, where in analysis.unsure],
                                trace + ["unsure and the text could push -> BLOCK (fail closed)"])
        trace = trace + ["unsure parts, but nothing in the command mentions push/merge/pull -> allow"]
    return GuardVerdict(False, "", [], trace)
