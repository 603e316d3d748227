"""The git policy: which git invocations push or merge, read as git reads them.

Global options (`-C`, `-c`, `--config-env`, GIT_CONFIG_* from the
environment), aliases (from `-c alias.x=…`, `git config alias.x …` earlier in
the command), and per subcommand: push/send-pack/http-push, merge (not
--abort/--quit), pull (unless it rebases), subtree, and the subcommands that
run a command of their own (rebase --exec, submodule foreach, bisect run,
filter-branch, difftool --extcmd). Also git hooks and config files the
command writes, which arm a later push.
"""
from ralph import fastos
from ralph.rules.expand import _split_words
from ralph.rules.guard_state import GLOB, UNKNOWN, Scope, bare_repository, file_key, lookup_file, shell_quote, show
from ralph.rules.shell import ShellSyntaxError

GIT_BLOCKED = {
    "push": "pushes commits to a remote",
    "send-pack": "pushes objects to a remote (push plumbing)",
    "http-push": "pushes objects to a remote over HTTP",
}
# git options taking the next word as their value
# git's merge backends, run directly (forge_policy blocks them)
MERGE_BACKENDS = frozenset(("merge-recursive", "merge-recursive-ours", "merge-recursive-theirs", "merge-resolve",
                            "merge-octopus", "merge-ours", "merge-subtree", "merge-ort", "merge-index", "merge-one-file"))
# subcommands ForgePolicy.judge_git_frontend decides; asking only for these
# keeps the program models unloaded for every other git command
GIT_FRONTENDS = frozenset(("svn", "flow")) | MERGE_BACKENDS
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


class GitPolicy:
    """Git methods of the analysis (mixed into guard.Analysis)."""

    __slots__ = ()

    def run_git(self, argv: list[str], env: dict[str, str], scope: Scope, where: str, dashed: bool = False) -> str | None:
        configs: list[tuple[str, str]] = list(scope.git_configs)
        merged_env = dict(scope.exported)
        merged_env.update(env)
        configs.extend(_env_git_config(merged_env))
        for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"):
            if name in merged_env:
                configs.extend(self.config_file(merged_env[name], scope, where))
        places = [scope.cwd] if scope.cwd else []  # where git runs, and which repository it works on
        if merged_env.get("GIT_DIR"):
            places.append(merged_env["GIT_DIR"])
        i = 1
        while i < len(argv) and not dashed:
            arg = argv[i]
            if UNKNOWN in arg or GLOB in arg:
                self.not_sure(True, f"the git option or subcommand `{show(arg)}` is only known when the command runs", where, "fail-closed.git-subcommand")
                return None
            if arg in GIT_OPTS_WITH_ARG:
                value = argv[i + 1] if i + 1 < len(argv) else ""
                if arg == "-c":
                    configs.append(_split_config(value))
                elif arg == "--config-env":
                    configs.append(self.config_env(value, merged_env))
                elif arg == "--list-cmds":
                    return None
                elif arg in ("-C", "--git-dir"):
                    places.append(value)
                i += 2
                continue
            if arg.startswith("--") and "=" in arg:
                option, value = arg.split("=", 1)
                if option == "--config-env":
                    configs.append(self.config_env(value, merged_env))
                elif option == "--git-dir":
                    places.append(value)
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
        remote = next((p for p in places if self.in_remote(p, scope, p is scope.cwd)), None)
        if remote is not None and not _reads_only(sub.lower(), args):
            self.block(argv, f"git {sub.lower()} writes into `{show(remote)}`, another repository (a remote): that is a push", where,
                       "git.remote-write")
            return None
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
        self.judge_git_subcommand(sub, args, configs, argv, scope, where)
        return None

    def in_remote(self, path: str, scope: Scope, is_cwd: bool = False) -> bool:
        """Is this path (a -C/--git-dir/GIT_DIR/cd target, a file written) inside
        another repository: a bare one, or one of the configured local-path remotes?"""
        if any(bare_repository(part) for part in path.split("/")):
            return True
        if not self.remotes or not self.cwd or UNKNOWN in path:
            return False
        here = self.cwd if is_cwd else fastos.join(self.cwd, scope.cwd) if scope.cwd else self.cwd
        full = fastos.normpath(fastos.join(here, path))
        return any(full == remote or full.startswith(remote + "/") for remote in self.remotes)

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

    def config_env(self, value: str, env: dict[str, str]) -> tuple[str, str]:
        key, _, var = value.partition("=")
        return key, env.get(var, UNKNOWN)

    def judge_git_subcommand(self, sub: str, args: list[str], configs: list, argv: list[str], scope: Scope, where: str) -> None:
        low = sub.lower()
        unknown_args = any(UNKNOWN in a for a in args)
        helping = bool(args) and args[0] in ("--help", "-h")
        if low in GIT_BLOCKED or low in self.policy.block_git_subcommands:
            if helping:
                self.note(where, f"git {low} {args[0]} only prints help")
                return
            why = GIT_BLOCKED.get(low) or "is blocked by ralph.toml [guard] block_git_subcommands"
            self.block(argv, f"git {low} {why}", where, "config.block-git-subcommands" if low in self.policy.block_git_subcommands and low not in GIT_BLOCKED else f"git.{low}")
            return
        if low in GIT_FRONTENDS and self.judge_git_frontend(low, args, argv, where):
            return
        self.judge_program_options(low, args, scope, where)
        if low == "merge":
            if helping or (not unknown_args and ("--abort" in args or "--quit" in args)):
                self.note(where, "git merge --abort/--quit/--help merges nothing")
                return
            self.block(argv, "git merge joins another branch into yours", where, "git.merge")
            return
        if low == "pull":
            self.judge_pull(args, configs, argv, where)
            return
        if low == "subtree":
            verb = next((a for a in args if not a.startswith("-")), "")
            if verb in ("push", "merge", "pull") or UNKNOWN in verb:
                self.block(argv, f"git subtree {show(verb)} pushes or merges", where, "git.subtree")
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
        if low not in GIT_BUILTINS:
            # git runs `git-<sub>` found on PATH: one this command wrote counts
            for path, content in list(scope.files.items()):
                if path.rsplit("/", 1)[-1].lower() == "git-" + low:
                    if content is None:
                        self.not_sure(False, f"git {low} runs `{show(path)}`, written with content that cannot be seen", where, "fail-closed.script-content")
                    else:
                        inner = scope.fork()
                        inner.positional = list(args)
                        self.run_script(content, inner, "", f"{where} > {show(path)}")
                    return
        self.note(where, f"git {low}: allowed")

    def judge_program_options(self, low: str, args: list[str], scope: Scope, where: str) -> None:
        """Options and URLs with which git runs a program: --upload-pack,
        --receive-pack, --exec, `ext::` transports, grep --open-files-in-pager."""
        names = ["--upload-pack", "--receive-pack", "--exec"]
        if low in ("clone", "ls-remote"):
            names.append("-u")
        if low == "grep":
            names += ["-O", "--open-files-in-pager"]
        for value in _option_values(args, tuple(names)):
            self.run_script(value, scope.fork(), "", f"{where} > git {low} (program option)")
        for arg in args:
            if arg.lower().startswith("ext::"):
                self.run_argv(_ext_argv(arg[5:]), {}, None, scope.fork(), f"{where} > git {low} ext:: transport")

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


# what git may do in another repository (a local-path remote) without writing to it
REMOTE_READ_ONLY = frozenset("""log show status for-each-ref rev-parse ls-tree cat-file ls-remote diff describe rev-list
show-ref count-objects fsck grep shortlog blame reflog cherry name-rev verify-pack help version commit-tree
hash-object archive bundle""".split())


def _reads_only(sub: str, args: list[str]) -> bool:
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
