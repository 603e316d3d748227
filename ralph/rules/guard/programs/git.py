"""The git model: which git invocations push or merge, read as git reads them.

Global options (`-C`, `-c`, `--config-env`, GIT_CONFIG_* from the
environment), config entries (from `-c`, the environment, config files the
command wrote and include.path): aliases, core.hooksPath, values git runs as
commands; then per subcommand: push/send-pack/http-push, merge (not
--abort/--quit), pull (unless it rebases), subtree, the front ends (svn,
flow) and merge backends, `--upload-pack`/`ext::` style program options, and
the subcommands that run a command of their own (rebase --exec, submodule
foreach, bisect run, filter-branch, difftool --extcmd). Also git run in
another repository (a bare one, or a local-path remote: a push), `git-<sub>`
scripts, and git hooks and config files the command writes, which arm a
later push.

Models git, yadm and `git-<sub>` (ralph.rules.guard.interp.PROGRAM_MODELS);
the walk also asks judge_written_git_file about a hook or config file a
command writes. hub runs git through run_git (ralph.rules.guard.programs.forges).
"""
from ralph.rules.guard.expand import split_words
from ralph.rules.guard.interp import GIT_DESTROY, Analysis, load_model
from ralph.rules.guard.state import GLOB, UNKNOWN, Scope, file_key, lookup_file, normalize_program, option_values, program_name, shell_quote, show
from ralph.rules.guard.syntax.lexer import ShellSyntaxError

GIT_BLOCKED = {
    "push": "pushes commits to a remote",
    "send-pack": "pushes objects to a remote (push plumbing)",
    "http-push": "pushes objects to a remote over HTTP",
}
# git's merge backends, run directly (blocked unless [guard] merge_backends = false)
MERGE_BACKENDS = frozenset(("merge-recursive", "merge-recursive-ours", "merge-recursive-theirs", "merge-resolve",
                            "merge-octopus", "merge-ours", "merge-subtree", "merge-ort", "merge-index", "merge-one-file"))
# subcommands judge_git_frontend decides
GIT_FRONTENDS = frozenset(("svn", "flow")) | MERGE_BACKENDS
# git options taking the next word as their value
GIT_OPTS_WITH_ARG = frozenset(("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                               "--super-prefix", "--attr-source", "--list-cmds"))
GIT_OPTS_THAT_EXIT = frozenset(("--version", "-v", "--help", "-h", "--html-path", "--man-path",
                                "--info-path", "--exec-path", "--list-cmds"))
# options with which git runs a program, besides --upload-pack, --receive-pack and --exec
PROGRAM_OPTIONS = {"clone": ("-u",), "ls-remote": ("-u",), "grep": ("-O", "--open-files-in-pager")}
# subcommands judge_modelled_subcommand decides: pull, subtree, config, and
# those that run a command of their own
MODELLED_SUBCOMMANDS = frozenset(("pull", "subtree", "config", "rebase", "submodule", "bisect", "filter-branch", "difftool"))
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
# subcommands that can throw away work (ralph.rules.guard.programs.git_destroy)
DESTROYING_SUBCOMMANDS = frozenset(("reset", "checkout", "switch", "restore", "clean", "stash", "branch", "rm", "tag",
                                    "update-ref", "worktree"))
# config keys whose value git runs as a program (a key with a name in the middle: section.*.name)
PROGRAM_CONFIG_KEYS = frozenset(("core.sshcommand", "core.editor", "sequence.editor", "core.pager", "core.fsmonitor",
                                 "core.askpass", "core.gitproxy", "uploadpack.packobjectshook", "diff.external",
                                 "gpg.program", "gpg.ssh.program", "gpg.x509.program", "credential.helper", "web.browser",
                                 "sendemail.smtpserver", "merge.tool", "diff.tool", "ssh.variant", "core.hookspath"))
PROGRAM_CONFIG_NAMES = frozenset(("uploadpack", "receivepack", "command", "textconv", "driver", "clean", "smudge", "process",
                                  "cmd", "helper", "proxy", "program", "sshcommand"))


def may_destroy(sub: str, args: list[str]) -> bool:
    """A quick look: could this call throw work away? (`git checkout -b x`,
    `git stash pop`, `git restore --staged f`, `git branch -a` cannot, and
    load no more models.)"""
    shorts = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    longs = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    if sub == "reset":
        return "--hard" in longs or any(UNKNOWN in a for a in args)
    if sub == "checkout":
        return bool(set(shorts) & set("fp") or longs & {"--force", "--patch", "--pathspec-from-file", "--ours", "--theirs"}
                    or "--" in args or not set(shorts) & set("bB") and "--orphan" not in longs)
    if sub == "switch":
        return "f" in shorts or bool(longs & {"--force", "--discard-changes"})
    if sub == "restore":
        return "W" in shorts or "--worktree" in longs or not ("S" in shorts or "--staged" in longs)
    if sub == "clean":
        return "n" not in shorts and "--dry-run" not in longs
    if sub == "stash":
        return bool(args) and args[0] in ("drop", "clear")
    if sub == "branch":
        return bool(set(shorts) & set("dDfMCmc") or longs & {"--delete", "--force", "--move", "--copy"})
    if sub in ("rm", "worktree"):
        return "f" in shorts or "--force" in longs
    return "d" in shorts or "--delete" in longs  # tag -d, update-ref -d


def runs_program(key: str) -> bool:
    """Does git run this config key's value as a program (core.sshCommand,
    uploadpack.packObjectsHook, filter.<x>.smudge, remote.<x>.uploadpack, ...)?"""
    return key in PROGRAM_CONFIG_KEYS or key.rsplit(".", 1)[-1] in PROGRAM_CONFIG_NAMES or key.startswith(("pager.", "alias."))


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


def run_git_program(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """git, and yadm (git with another work tree)."""
    return run_git(analysis, argv, env, scope, where)


def run_dashed_git(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """`git-<sub>`: git's subcommand run as a program of its own."""
    name = normalize_program(program_name(argv[0]) or "")
    return run_git(analysis, ["git", name[4:]] + argv[1:], env, scope, where, dashed=True)


def run_git(analysis: Analysis, argv: list[str], env: dict[str, str], scope: Scope, where: str, dashed: bool = False) -> str | None:
    configs: list[tuple[str, str]] = list(scope.git_configs)
    merged_env = dict(scope.exported)
    merged_env.update(env)
    if any(name.startswith("GIT_CONFIG") for name in merged_env):
        configs.extend(env_git_configs(analysis, merged_env, scope, where))
    places = [scope.cwd] if scope.cwd else []  # where git runs, and which repository it works on
    for name in ("GIT_DIR", "GIT_WORK_TREE"):
        if merged_env.get(name):
            places.append(merged_env[name])
    i = 1
    while i < len(argv) and not dashed:
        arg = argv[i]
        if UNKNOWN in arg or GLOB in arg:
            analysis.not_sure(True, f"the git option or subcommand `{show(arg)}` is only known when the command runs", where, "fail-closed.git-subcommand")
            return None
        if arg in GIT_OPTS_WITH_ARG:
            value = argv[i + 1] if i + 1 < len(argv) else ""
            if arg == "-c":
                configs.append(_split_config(value))
            elif arg == "--config-env":
                configs.append(config_env(value, merged_env))
            elif arg == "--list-cmds":
                return None
            elif arg in ("-C", "--git-dir", "--work-tree"):
                places.append(value)
            i += 2
            continue
        if arg.startswith("--") and "=" in arg:
            option, value = arg.split("=", 1)
            if option == "--config-env":
                configs.append(config_env(value, merged_env))
            elif option in ("--git-dir", "--work-tree"):
                places.append(value)
            i += 1
            continue
        if arg.startswith("-C") and len(arg) > 2:
            places.append(arg[2:])
        elif arg.startswith("-c") and len(arg) > 2:
            configs.append(_split_config(arg[2:]))
        if arg in GIT_OPTS_THAT_EXIT:
            analysis.note(where, f"git {arg} prints and exits")
            return None
        if arg.startswith("-"):
            i += 1
            continue
        break
    if i >= len(argv):
        return None
    sub = argv[i]
    args = argv[i + 1:]
    aliases = read_git_configs(analysis, configs, scope, where) if configs else scope.git_aliases
    remote = next((p for p in places if analysis.in_remote(p, scope, p is scope.cwd)), None)
    if remote is not None and not reads_only(sub.lower(), args):
        analysis.block(argv, f"git {sub.lower()} writes into `{show(remote)}`, another repository (a remote): that is a push", where,
                       "git.remote-write")
        return None
    if alias_value(aliases, sub) is not None:
        resolved = resolve_git_alias(analysis, sub, args, aliases, scope, where)
        if resolved is None:
            return None
        sub, args = resolved
    judge_git_subcommand(analysis, sub, args, configs, argv, scope, where, places)
    return None


def judge_git_subcommand(analysis: Analysis, sub: str, args: list[str], configs: list, argv: list[str], scope: Scope, where: str,
                         places: list[str] | None = None) -> None:
    low = sub.lower()
    if low in DESTROYING_SUBCOMMANDS and may_destroy(low, args):
        # git subcommands that can throw work away (reset --hard, clean -f, ...): judged, saved or denied there
        load_model(GIT_DESTROY).judge(analysis, low, args, argv, scope, where, [p for p in places or [] if p is not scope.cwd])
    helping = bool(args) and args[0] in ("--help", "-h")
    if low in GIT_BLOCKED or low in analysis.policy.block_git_subcommands:
        if helping:
            analysis.note(where, f"git {low} {args[0]} only prints help")
            return
        why = GIT_BLOCKED.get(low) or "is blocked by ralph.toml [guard] block_git_subcommands"
        analysis.block(argv, f"git {low} {why}", where, "config.block-git-subcommands" if low in analysis.policy.block_git_subcommands and low not in GIT_BLOCKED else f"git.{low}")
        return
    if low in GIT_FRONTENDS and judge_git_frontend(analysis, low, args, argv, where):
        return
    names = ("--upload-pack", "--receive-pack", "--exec") + PROGRAM_OPTIONS.get(low, ())
    if any(arg.startswith(names) or arg.lower().startswith("ext::") for arg in args):
        judge_program_options(analysis, low, names, args, scope, where)
    if low == "merge":
        if helping or (not any(UNKNOWN in a for a in args) and ("--abort" in args or "--quit" in args)):
            analysis.note(where, "git merge --abort/--quit/--help merges nothing")
            return
        analysis.block(argv, "git merge joins another branch into yours", where, "git.merge")
        return
    if low in MODELLED_SUBCOMMANDS:
        judge_modelled_subcommand(analysis, low, args, configs, argv, scope, where)
        return
    # git runs `git-<sub>` found on PATH for a subcommand it lacks: one this command wrote counts
    if scope.files and any(path.rsplit("/", 1)[-1].lower() == "git-" + low for path in scope.files) \
            and run_written_git_command(analysis, low, args, scope, where):
        return
    analysis.note(where, f"git {low}: allowed")


def judge_git_frontend(analysis: Analysis, low: str, args: list[str], argv: list[str], where: str) -> bool:
    """git svn / git flow / merge backends; True when it decided."""
    if any(a in ("--help", "-h") for a in args):
        return low in ("svn", "flow") or low in MERGE_BACKENDS
    verbs = [a.lower() for a in args if not a.startswith("-")]
    if low == "svn":
        if verbs and (verbs[0] in ("dcommit", "set-tree") or UNKNOWN in verbs[0]):
            analysis.forge_block("git_frontends", argv, f"git svn {show(verbs[0])} commits to the Subversion remote", where,
                                 "frontend.git-svn-dcommit")
        return True
    if low == "flow":
        if any(v in ("finish", "publish") or UNKNOWN in v for v in verbs[1:3]):
            analysis.forge_block("git_frontends", argv, "git flow finish merges the branch (publish pushes it)", where,
                                 "frontend.git-flow-finish")
        return True
    if low in MERGE_BACKENDS:
        analysis.forge_block("merge_backends", argv, f"git {low} is a merge backend: it merges trees into yours", where,
                             "git.merge-backend")
        return True
    return False


def env_git_configs(analysis: Analysis, env: dict[str, str], scope: Scope, where: str) -> list[tuple[str, str]]:
    """Config entries from GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS
    and the files GIT_CONFIG_GLOBAL/SYSTEM/GIT_CONFIG name."""
    configs = _env_git_config(env)
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"):
        if name in env:
            configs.extend(config_file(analysis, env[name], scope, where))
    return configs


def config_env(value: str, env: dict[str, str]) -> tuple[str, str]:
    key, _, var = value.partition("=")
    return key, env.get(var, UNKNOWN)


def read_git_configs(analysis: Analysis, configs: list[tuple[str, str]], scope: Scope, where: str) -> dict[str, str]:
    """Read the config entries git runs with (extended in place by the
    files include.path names); returns the aliases they define."""
    aliases = dict(scope.git_aliases)
    for key, value in list(configs):
        low = key.lower()
        if low == "include.path" or low.startswith("includeif."):
            configs.extend(config_file(analysis, value, scope, where))
    for key, value in configs:
        low = key.lower()
        if low.startswith("alias."):
            aliases[key[6:].lower()] = value
        elif low == "core.hookspath":
            judge_hooks_dir(analysis, value, scope, where)
        elif analysis.policy.could_push(value) or (runs_program(low) and analysis.runs_something(value, scope)):
            analysis.run_script(value, without_config(scope, key, value), "", f"{where} > git config {key}")
    return aliases


def without_config(scope: Scope, key: str, value: str) -> Scope:
    """A fork of the scope without one config entry: the command a value
    stands for is judged once, not again by every git call inside it."""
    inner = scope.fork()
    inner.git_configs = [entry for entry in inner.git_configs if entry != (key, value)]
    return inner


def resolve_git_alias(analysis: Analysis, sub: str, args: list[str], aliases: dict[str, str], scope: Scope, where: str) -> tuple[str, list[str]] | None:
    """The subcommand and arguments a git alias stands for; None when the
    alias was judged here (a `!` shell alias) or cannot be known."""
    for _ in range(10):
        value = alias_value(aliases, sub)
        if value is None:
            break
        analysis.note(where, f"git alias {sub} = {show(value)}")
        if UNKNOWN in value:
            analysis.not_sure(True, f"git alias `{sub}` has a value only known when the command runs", where, "fail-closed.git-alias")
            return None
        if value.startswith("!"):
            script = value[1:] + " " + " ".join(shell_quote(a) for a in args)
            analysis.run_script(script, scope.fork(), "", f"{where} > git alias {sub}")
            return None
        try:
            words = split_words(value)
        except ShellSyntaxError:
            analysis.not_sure(True, f"git alias `{sub}` cannot be read", where, "fail-closed.git-alias")
            return None
        if not words:
            return None
        sub, args = words[0], words[1:] + args
    return sub, args


def alias_value(aliases: dict[str, str], sub: str) -> str | None:
    """What git alias `sub` stands for; None when it is not one (git's own
    commands are never aliases). Config that could not be read defines
    aliases of unknown names (the entry `alias.` = UNKNOWN): any other
    subcommand may be one of them."""
    low = sub.lower()
    if low in GIT_BUILTINS:
        return None
    if low in aliases:
        return aliases[low]
    unknown = aliases.get("")
    return unknown if unknown is not None and UNKNOWN in unknown else None


def reads_only(sub: str, args: list[str]) -> bool:
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


def config_file(analysis: Analysis, path: str, scope: Scope, where: str) -> list[tuple[str, str]]:
    """The entries of a git config file this command wrote (include.path,
    GIT_CONFIG_GLOBAL); a file written with content the guard cannot see
    counts as an unknown alias."""
    found, content = lookup_file(scope.files, path)
    if not found:
        return []
    if content is None:
        analysis.not_sure(False, f"git reads config `{show(path)}`, written with content that cannot be seen", where, "fail-closed.written-git-file")
        return [("alias.", UNKNOWN)]
    analysis.note(where, f"git reads config {show(path)}, written earlier in this command")
    return _config_entries(content)


def judge_hooks_dir(analysis: Analysis, directory: str, scope: Scope, where: str) -> None:
    """core.hooksPath at a directory: the hooks written there run on commit, merge, ..."""
    prefix = file_key(directory).rstrip("/") + "/"
    for path, content in list(scope.files.items()):
        if path.startswith(prefix) or (UNKNOWN in prefix and "/" + path.rsplit("/", 1)[-1] in path):
            if content is None:
                analysis.not_sure(False, f"hook `{show(path)}` has content that cannot be seen", where, "fail-closed.written-git-file")
            else:
                inner = scope.fork()  # the hook's own git calls do not re-run the hooks
                inner.git_configs = [c for c in inner.git_configs if c[0].lower() != "core.hookspath"]
                analysis.run_script(content, inner, "", f"{where} > hook {show(path)}")


def judge_program_options(analysis: Analysis, low: str, names: tuple, args: list[str], scope: Scope, where: str) -> None:
    """Options and URLs with which git runs a program: --upload-pack,
    --receive-pack, --exec, `ext::` transports, grep --open-files-in-pager."""
    for value in option_values(args, names):
        analysis.run_script(value, scope.fork(), "", f"{where} > git {low} (program option)")
    for arg in args:
        if arg.lower().startswith("ext::"):
            analysis.run_argv(_ext_argv(arg[5:]), {}, None, scope.fork(), f"{where} > git {low} ext:: transport")


def judge_modelled_subcommand(analysis: Analysis, low: str, args: list[str], configs: list, argv: list[str], scope: Scope, where: str) -> None:
    """The subcommands in MODELLED_SUBCOMMANDS: pull, subtree,
    config, and those that run a command of their own."""
    if low == "pull":
        judge_pull(analysis, args, configs, argv, where)
        return
    if low == "subtree":
        # the command may follow options and their values (`-P dir merge`): any such word counts
        verb = next((a for a in args if not a.startswith("-") and (a in ("push", "merge", "pull") or UNKNOWN in a)), "")
        if verb:
            analysis.block(argv, f"git subtree {show(verb)} pushes or merges", where, "git.subtree")
        return
    if low == "submodule":
        if "foreach" in args:
            rest = args[args.index("foreach") + 1:]
            while rest and rest[0] in ("--recursive", "-q", "--quiet"):
                rest = rest[1:]
            analysis.run_script(" ".join(rest), scope.fork(), "", f"{where} > git submodule foreach")
        return
    if low == "bisect":
        if args and args[0] == "run":
            analysis.run_script(" ".join(shell_quote(a) for a in args[1:]), scope.fork(), "", f"{where} > git bisect run")
        return
    if low in SCRIPT_OPTIONS:
        names, label = SCRIPT_OPTIONS[low]
        for value in option_values(args, names):
            analysis.run_script(value, scope.fork(), "", f"{where} > {label}")
        return
    if low == "config":
        judge_git_config(analysis, args, argv, scope, where)


def run_written_git_command(analysis: Analysis, low: str, args: list[str], scope: Scope, where: str) -> bool:
    """git runs `git-<low>` from PATH for a subcommand it lacks: judge one
    this command wrote. True when there was one."""
    if low in GIT_BUILTINS:
        return False
    for path, content in list(scope.files.items()):
        if path.rsplit("/", 1)[-1].lower() == "git-" + low:
            if content is None:
                analysis.not_sure(False, f"git {low} runs `{show(path)}`, written with content that cannot be seen", where, "fail-closed.script-content")
            else:
                inner = scope.fork()
                inner.positional = list(args)
                analysis.run_script(content, inner, "", f"{where} > {show(path)}")
            return True
    return False


def judge_pull(analysis: Analysis, args: list[str], configs: list, argv: list[str], where: str) -> None:
    rebase = None
    for key, value in configs:
        if key.lower() == "pull.rebase":
            rebase = value.lower() not in ("false", "no", "off", "0", "")
    if any(arg in ("--help", "-h") for arg in args):
        analysis.note(where, "git pull --help only prints help")
        return
    for arg in args:
        if UNKNOWN in arg:
            analysis.not_sure(True, f"git pull has an option `{show(arg)}` only known when the command runs", where, "fail-closed.git-pull-option")
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
            analysis.note(where, "git pull --help only prints help")
            return
    if rebase:
        analysis.note(where, "git pull --rebase: rebases, merges nothing")
        return
    analysis.block(argv, "git pull merges the remote branch into yours (use `git fetch` to look at remote work)", where, "git.pull")


def judge_git_config(analysis: Analysis, args: list[str], argv: list[str], scope: Scope, where: str) -> None:
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
            analysis.not_sure(True, f"git alias `{name}` is given a value only known when the command runs", where, "fail-closed.git-alias")
            return
        probe = analysis.probe()
        run_git_value(probe, value, scope.fork(), where)
        if probe.pushes():
            analysis.block(argv, f"defines git alias `{name}` that would push or merge when used", where, "git.alias-arms-push")
        return
    scope.git_configs.append((key, value))
    if key.lower() == "core.hookspath":
        judge_hooks_dir(analysis, value, scope, where)
    if key.lower() == "include.path" or key.lower().startswith("includeif."):
        for inner_key, inner_value in config_file(analysis, value, scope, where):
            if inner_key.lower().startswith("alias."):
                scope.git_aliases[inner_key[6:].lower()] = inner_value
    if analysis.policy.could_push(value):
        probe = analysis.probe()
        probe.run_script(value, without_config(scope, key, value), "", where)
        if probe.pushes():
            analysis.block(argv, f"sets git config {key} to a command that would push or merge", where, "git.config-command")


def judge_written_git_file(analysis: Analysis, path: str, content: str | None, is_hook: bool, where: str) -> None:
    """A git hook or config file written with a push in it arms a later push."""
    if content is None:
        analysis.not_sure(False, f"writes `{show(path)}` (git {'hook' if is_hook else 'config'}) with content that cannot be seen", where, "fail-closed.written-git-file")
        return
    if not analysis.policy.could_push(content):
        return
    probe = analysis.probe()
    if is_hook:
        probe.run_script(content, Scope(), "", where)
    else:
        for line in content.splitlines():
            key, eq, value = line.partition("=")
            if eq:
                value = value.strip().strip('"')
                if run_git_value(probe, value, Scope(), where):
                    # a config value may also be a command some other key runs
                    probe.run_script(value, Scope(), "", where)
    if probe.pushes():
        analysis.block(["write", path], f"writes a git {'hook' if is_hook else 'config'} that would push or merge later", where, "git.hook-or-config-write")


def run_git_value(analysis: Analysis, value: str, scope: Scope, where: str) -> bool:
    """Judge a git alias or config value as git runs it: `!cmd` in a
    shell, anything else as git arguments. True when it ran as arguments."""
    if value.startswith("!"):
        analysis.run_script(value[1:], scope, "", where)
        return False
    try:
        words = split_words(value)
    except ShellSyntaxError:
        words = [UNKNOWN]
    if words:
        run_git(analysis, ["git"] + words, {}, scope, where)
    return bool(words)


def _split_config(value: str) -> tuple[str, str]:
    key, eq, rest = value.partition("=")
    return key, rest if eq else "true"


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
            words = split_words(parameters)
        except ShellSyntaxError:
            words = []
        for word in words:
            pairs.append(_split_config(word))
    return pairs
