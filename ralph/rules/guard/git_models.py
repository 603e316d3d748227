"""Git models loaded on first use: the parts of the git policy typical git
commands never reach (ralph.rules.guard.git_policy decides when one is needed).

Config entries from `-c`, `--config-env`, GIT_CONFIG_* in the environment and
config files the command wrote (include.path, GIT_CONFIG_GLOBAL): aliases,
core.hooksPath, values git runs as commands; alias resolution; writes into
another repository; the subcommands that run a command of their own (rebase
--exec, submodule foreach, bisect run, filter-branch, difftool --extcmd),
pull, subtree and config; `--upload-pack`/`ext::` style program options;
`git-<sub>` scripts and git hooks or config files the command wrote.

GitModels is mixed into guard.Analysis by guard.analysis_class() the first
time the walk calls one of its methods (guard.Analysis.__getattr__); the names
are listed in git_policy.GIT_MODELS.
"""
from ralph.rules.guard.expand import _split_words
from ralph.rules.guard.git_policy import _option_values, _split_config
from ralph.rules.guard.state import UNKNOWN, Scope, file_key, lookup_file, shell_quote, show
from ralph.rules.guard.syntax.lexer import ShellSyntaxError

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
# subcommand -> (options whose value is a shell script git runs, how the trace names it)
SCRIPT_OPTIONS = {
    "rebase": (("--exec", "-x"), "git rebase --exec"),
    "filter-branch": (tuple(FILTER_BRANCH_OPTS), "git filter-branch"),
    "difftool": (("-x", "--extcmd"), "git difftool --extcmd"),
}
# what git may do in another repository (a local-path remote) without writing to it
REMOTE_READ_ONLY = frozenset("""log show status for-each-ref rev-parse ls-tree cat-file ls-remote diff describe rev-list
show-ref count-objects fsck grep shortlog blame reflog cherry name-rev verify-pack help version commit-tree
hash-object archive bundle""".split())


class GitModels:
    """The git methods of the analysis that typical commands never call."""

    __slots__ = ()

    def env_git_configs(self, env: dict[str, str], scope: Scope, where: str) -> list[tuple[str, str]]:
        """Config entries from GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS
        and the files GIT_CONFIG_GLOBAL/SYSTEM/GIT_CONFIG name."""
        configs = _env_git_config(env)
        for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"):
            if name in env:
                configs.extend(self.config_file(env[name], scope, where))
        return configs

    def config_env(self, value: str, env: dict[str, str]) -> tuple[str, str]:
        key, _, var = value.partition("=")
        return key, env.get(var, UNKNOWN)

    def read_git_configs(self, configs: list[tuple[str, str]], scope: Scope, where: str) -> dict[str, str]:
        """Read the config entries git runs with (extended in place by the
        files include.path names); returns the aliases they define."""
        aliases = dict(scope.git_aliases)
        for key, value in list(configs):
            low = key.lower()
            if low == "include.path" or low.startswith("includeif."):
                configs.extend(self.config_file(value, scope, where))
        for key, value in configs:
            low = key.lower()
            if low.startswith("alias."):
                aliases[key[6:].lower()] = value
            elif low == "core.hookspath":
                self.judge_hooks_dir(value, scope, where)
            elif self.policy.could_push(value):
                self.run_script(value, scope.fork(), "", f"{where} > git config {key}")
        return aliases

    def resolve_git_alias(self, sub: str, args: list[str], aliases: dict[str, str], scope: Scope, where: str) -> tuple[str, list[str]] | None:
        """The subcommand and arguments a git alias stands for; None when the
        alias was judged here (a `!` shell alias) or cannot be known."""
        for _ in range(10):
            if sub.lower() in GIT_BUILTINS or sub.lower() not in aliases:
                break
            value = aliases[sub.lower()]
            self.note(where, f"git alias {sub} = {show(value)}")
            if UNKNOWN in value:
                self.not_sure(True, f"git alias `{sub}` has a value only known when the command runs", where, "fail-closed.git-alias")
                return None
            if value.startswith("!"):
                script = value[1:] + " " + " ".join(shell_quote(a) for a in args)
                self.run_script(script, scope.fork(), "", f"{where} > git alias {sub}")
                return None
            try:
                words = _split_words(value)
            except ShellSyntaxError:
                self.not_sure(True, f"git alias `{sub}` cannot be read", where, "fail-closed.git-alias")
                return None
            if not words:
                return None
            sub, args = words[0], words[1:] + args
        return sub, args

    def reads_only(self, sub: str, args: list[str]) -> bool:
        """Does git `sub` only read the repository it works on (a remote's)?"""
        if sub in REMOTE_READ_ONLY:
            return sub != "reflog" or not args or args[0] in ("show", "exists")
        if sub in ("branch", "tag"):
            words = [a for a in args if not a.startswith("-")]
            writes = {"-d", "-D", "-m", "-M", "-c", "-C", "-f", "--force", "--delete", "--move", "--copy", "-a", "-s", "-u"}
            listing = {"-l", "--list", "-r", "-a", "--all", "-v", "-vv", "--contains", "--merged", "--no-merged", "--points-at"}
            if sub == "branch":
                writes.discard("-a")
            return not (set(args) & writes) and (not words or bool(set(args) & listing))
        if sub == "config":
            return any(a in ("--get", "--get-all", "--get-regexp", "--list", "-l") for a in args)
        return False

    def config_file(self, path: str, scope: Scope, where: str) -> list[tuple[str, str]]:
        """The entries of a git config file this command wrote (include.path,
        GIT_CONFIG_GLOBAL); a file written with content the guard cannot see
        counts as an unknown alias."""
        found, content = lookup_file(scope.files, path)
        if not found:
            return []
        if content is None:
            self.not_sure(False, f"git reads config `{show(path)}`, written with content that cannot be seen", where, "fail-closed.written-git-file")
            return [("alias.", UNKNOWN)]
        self.note(where, f"git reads config {show(path)}, written earlier in this command")
        return _config_entries(content)

    def judge_hooks_dir(self, directory: str, scope: Scope, where: str) -> None:
        """core.hooksPath at a directory: the hooks written there run on commit, merge, ..."""
        prefix = file_key(directory).rstrip("/") + "/"
        for path, content in list(scope.files.items()):
            if path.startswith(prefix) or (UNKNOWN in prefix and "/" + path.rsplit("/", 1)[-1] in path):
                if content is None:
                    self.not_sure(False, f"hook `{show(path)}` has content that cannot be seen", where, "fail-closed.written-git-file")
                else:
                    inner = scope.fork()  # the hook's own git calls do not re-run the hooks
                    inner.git_configs = [c for c in inner.git_configs if c[0].lower() != "core.hookspath"]
                    self.run_script(content, inner, "", f"{where} > hook {show(path)}")

    def judge_program_options(self, low: str, names: tuple, args: list[str], scope: Scope, where: str) -> None:
        """Options and URLs with which git runs a program: --upload-pack,
        --receive-pack, --exec, `ext::` transports, grep --open-files-in-pager."""
        for value in _option_values(args, names):
            self.run_script(value, scope.fork(), "", f"{where} > git {low} (program option)")
        for arg in args:
            if arg.lower().startswith("ext::"):
                self.run_argv(_ext_argv(arg[5:]), {}, None, scope.fork(), f"{where} > git {low} ext:: transport")

    def judge_modelled_subcommand(self, low: str, args: list[str], configs: list, argv: list[str], scope: Scope, where: str) -> None:
        """The subcommands in git_policy.MODELLED_SUBCOMMANDS: pull, subtree,
        config, and those that run a command of their own."""
        if low == "pull":
            self.judge_pull(args, configs, argv, where)
            return
        if low == "subtree":
            verb = next((a for a in args if not a.startswith("-")), "")
            if verb in ("push", "merge", "pull") or UNKNOWN in verb:
                self.block(argv, f"git subtree {show(verb)} pushes or merges", where, "git.subtree")
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
        if low in SCRIPT_OPTIONS:
            names, label = SCRIPT_OPTIONS[low]
            for value in _option_values(args, names):
                self.run_script(value, scope.fork(), "", f"{where} > {label}")
            return
        if low == "config":
            self.judge_git_config(args, argv, scope, where)

    def run_written_git_command(self, low: str, args: list[str], scope: Scope, where: str) -> bool:
        """git runs `git-<low>` from PATH for a subcommand it lacks: judge one
        this command wrote. True when there was one."""
        if low in GIT_BUILTINS:
            return False
        for path, content in list(scope.files.items()):
            if path.rsplit("/", 1)[-1].lower() == "git-" + low:
                if content is None:
                    self.not_sure(False, f"git {low} runs `{show(path)}`, written with content that cannot be seen", where, "fail-closed.script-content")
                else:
                    inner = scope.fork()
                    inner.positional = list(args)
                    self.run_script(content, inner, "", f"{where} > {show(path)}")
                return True
        return False

    def judge_pull(self, args: list[str], configs: list, argv: list[str], where: str) -> None:
        rebase = None
        for key, value in configs:
            if key.lower() == "pull.rebase":
                rebase = value.lower() not in ("false", "no", "off", "0", "")
        if any(arg in ("--help", "-h") for arg in args):
            self.note(where, "git pull --help only prints help")
            return
        for arg in args:
            if UNKNOWN in arg:
                self.not_sure(True, f"git pull has an option `{show(arg)}` only known when the command runs", where, "fail-closed.git-pull-option")
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
        self.block(argv, "git pull merges the remote branch into yours (use `git fetch` to look at remote work)", where, "git.pull")

    def judge_git_config(self, args: list[str], argv: list[str], scope: Scope, where: str) -> None:
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
                self.not_sure(True, f"git alias `{name}` is given a value only known when the command runs", where, "fail-closed.git-alias")
                return
            probe = self.probe()
            probe.run_git_value(value, scope.fork(), where)
            if probe.blocks or any(u[0] for u in probe.unsure):
                self.block(argv, f"defines git alias `{name}` that would push or merge when used", where, "git.alias-arms-push")
            return
        scope.git_configs.append((key, value))
        if key.lower() == "core.hookspath":
            self.judge_hooks_dir(value, scope, where)
        if key.lower() == "include.path" or key.lower().startswith("includeif."):
            for inner_key, inner_value in self.config_file(value, scope, where):
                if inner_key.lower().startswith("alias."):
                    scope.git_aliases[inner_key[6:].lower()] = inner_value
        if self.policy.could_push(value):
            probe = self.probe()
            probe.run_script(value, scope.fork(), "", where)
            if probe.blocks:
                self.block(argv, f"sets git config {key} to a command that would push or merge", where, "git.config-command")

    def judge_written_git_file(self, path: str, content: str | None, is_hook: bool, where: str) -> None:
        """A git hook or config file written with a push in it arms a later push."""
        if content is None:
            self.not_sure(False, f"writes `{show(path)}` (git {'hook' if is_hook else 'config'}) with content that cannot be seen", where, "fail-closed.written-git-file")
            return
        if not self.policy.could_push(content):
            return
        probe = self.probe()
        if is_hook:
            probe.run_script(content, Scope(), "", where)
        else:
            for line in content.splitlines():
                key, eq, value = line.partition("=")
                if eq:
                    value = value.strip().strip('"')
                    if probe.run_git_value(value, Scope(), where):
                        # a config value may also be a command some other key runs
                        probe.run_script(value, Scope(), "", where)
        if probe.blocks or any(u[0] for u in probe.unsure):
            self.block(["write", path], f"writes a git {'hook' if is_hook else 'config'} that would push or merge later", where, "git.hook-or-config-write")

    def probe(self) -> object:
        """A separate analysis of text this command stores for later (a hook,
        an alias, a config value), sharing this one's budget and nesting."""
        probe = type(self)(self.text, self.policy, self.budget)
        probe.nesting = self.nesting
        return probe

    def run_git_value(self, value: str, scope: Scope, where: str) -> bool:
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


def _config_entries(text: str) -> list[tuple[str, str]]:
    """key = value entries of a git config file, as section.key (subsections dropped)."""
    entries = []
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line[1:].split("]", 1)[0].split()[0].strip('"').lower() if line[1:].split("]", 1)[0].split() else ""
            continue
        key, eq, value = line.partition("=")
        value = value.strip()
        if len(value) > 1 and value[0] == value[-1] == '"':
            value = value[1:-1]
        entries.append((f"{section}.{key.strip()}" if section else key.strip(), value if eq else "true"))
    return entries


def _ext_argv(text: str) -> list[str]:
    """The argv of an `ext::` URL: words split on spaces, `% ` a space inside a word, `%%` a percent."""
    words, current, i = [], [], 0
    while i < len(text):
        c = text[i]
        if c == "%" and i + 1 < len(text) and text[i + 1] in " %":
            current.append(text[i + 1])
            i += 2
            continue
        if c == " ":
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(c)
        i += 1
    if current:
        words.append("".join(current))
    return words


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
