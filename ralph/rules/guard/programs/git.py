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

Models git, yadm and `git-<sub>` (ralph.rules.guard.models.PROGRAM_MODELS);
hub runs git through run_git (ralph.rules.guard.programs.forges). This module
holds what every git call needs: the global options, the subcommand, the
repository it works on. What only some calls need is loaded by name
(Analysis.model) when one does: config entries, aliases and the files git
reads config from (ralph.rules.guard.programs.git_config, which the walk also
asks about a hook or config file a command writes), the subcommands judged
on their own (ralph.rules.guard.programs.git_subcommands), and those that
can throw work away (ralph.rules.guard.programs.git_destroy).
"""
from ralph.rules.guard.interp import Analysis
from ralph.rules.guard.state import GLOB, UNKNOWN, Scope, normalize_program, program_name, show

GIT_BLOCKED = {
    "push": "pushes commits to a remote",
    "send-pack": "pushes objects to a remote (push plumbing)",
    "http-push": "pushes objects to a remote over HTTP",
}
# git's merge backends, run directly (blocked unless [guard] merge_backends = false)
MERGE_BACKENDS = frozenset(("merge-recursive", "merge-recursive-ours", "merge-recursive-theirs", "merge-resolve",
                            "merge-octopus", "merge-ours", "merge-subtree", "merge-ort", "merge-index", "merge-one-file"))
# subcommands git_subcommands.judge_git_frontend decides
GIT_FRONTENDS = frozenset(("svn", "flow")) | MERGE_BACKENDS
# git options taking the next word as their value
GIT_OPTS_WITH_ARG = frozenset(("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                               "--super-prefix", "--attr-source", "--list-cmds"))
GIT_OPTS_THAT_EXIT = frozenset(("--version", "-v", "--help", "-h", "--html-path", "--man-path",
                                "--info-path", "--exec-path", "--list-cmds"))
# options with which git runs a program, besides --upload-pack, --receive-pack and --exec
PROGRAM_OPTIONS = {"clone": ("-u",), "ls-remote": ("-u",), "grep": ("-O", "--open-files-in-pager")}
# subcommands git_subcommands.judge_modelled_subcommand decides: pull, subtree, config, and
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
        configs.extend(analysis.model("git_config").env_git_configs(analysis, merged_env, scope, where))
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
                configs.append(split_config(value))
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
            configs.append(split_config(arg[2:]))
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
    aliases = analysis.model("git_config").read_git_configs(analysis, configs, scope, where) if configs else scope.git_aliases
    remote = next((p for p in places if analysis.in_remote(p, scope, p is scope.cwd)), None)
    if remote is not None and not reads_only(sub.lower(), args):
        analysis.block(argv, f"git {sub.lower()} writes into `{show(remote)}`, another repository (a remote): that is a push", where,
                       "git.remote-write")
        return None
    if alias_value(aliases, sub) is not None:
        resolved = analysis.model("git_config").resolve_git_alias(analysis, sub, args, aliases, scope, where)
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
        analysis.model("git_destroy").judge(analysis, low, args, argv, scope, where, [p for p in places or [] if p is not scope.cwd])
    helping = bool(args) and args[0] in ("--help", "-h")
    if low in GIT_BLOCKED or low in analysis.policy.block_git_subcommands:
        if helping:
            analysis.note(where, f"git {low} {args[0]} only prints help")
            return
        why = GIT_BLOCKED.get(low) or "is blocked by ralph.toml [guard] block_git_subcommands"
        analysis.block(argv, f"git {low} {why}", where, "config.block-git-subcommands" if low in analysis.policy.block_git_subcommands and low not in GIT_BLOCKED else f"git.{low}")
        return
    if low in GIT_FRONTENDS and analysis.model("git_subcommands").judge_git_frontend(analysis, low, args, argv, where):
        return
    names = ("--upload-pack", "--receive-pack", "--exec") + PROGRAM_OPTIONS.get(low, ())
    if any(arg.startswith(names) or arg.lower().startswith("ext::") for arg in args):
        analysis.model("git_subcommands").judge_program_options(analysis, low, names, args, scope, where)
    if low == "merge":
        if helping or (not any(UNKNOWN in a for a in args) and ("--abort" in args or "--quit" in args)):
            analysis.note(where, "git merge --abort/--quit/--help merges nothing")
            return
        analysis.block(argv, "git merge joins another branch into yours", where, "git.merge")
        return
    if low in MODELLED_SUBCOMMANDS:
        analysis.model("git_subcommands").judge_modelled_subcommand(analysis, low, args, configs, argv, scope, where)
        return
    # git runs `git-<sub>` found on PATH for a subcommand it lacks: one this command wrote counts
    if scope.files and any(path.rsplit("/", 1)[-1].lower() == "git-" + low for path in scope.files) \
            and analysis.model("git_subcommands").run_written_git_command(analysis, low, args, scope, where):
        return
    analysis.note(where, f"git {low}: allowed")


def config_env(value: str, env: dict[str, str]) -> tuple[str, str]:
    key, _, var = value.partition("=")
    return key, env.get(var, UNKNOWN)


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


def split_config(value: str) -> tuple[str, str]:
    key, eq, rest = value.partition("=")
    return key, rest if eq else "true"


