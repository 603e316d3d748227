"""The git policy: which git invocations push or merge, read as git reads them.

Global options (`-C`, `-c`, `--config-env`, GIT_CONFIG_* from the
environment), aliases (from `-c alias.x=…`, `git config alias.x …` earlier in
the command), and per subcommand: push/send-pack/http-push, merge (not
--abort/--quit), pull (unless it rebases), subtree, and the subcommands that
run a command of their own (rebase --exec, submodule foreach, bisect run,
filter-branch, difftool --extcmd). Also git hooks and config files the
command writes, which arm a later push.

Split by use: this module holds what typical git commands (status, diff,
log, add, commit, checkout, ...) run through, and asks for the rest only
when a command has it: config entries and aliases, writes into another
repository, the modelled subcommands, program options and written hooks or
config files live in ralph.rules.guard.git_models (GIT_MODELS), loaded on first use.
"""
import os
from ralph.rules.guard.state import GLOB, UNKNOWN, Scope, bare_repository, show

GIT_BLOCKED = {
    "push": "pushes commits to a remote",
    "send-pack": "pushes objects to a remote (push plumbing)",
    "http-push": "pushes objects to a remote over HTTP",
}
# git's merge backends, run directly (forge_policy blocks them)
MERGE_BACKENDS = frozenset(("merge-recursive", "merge-recursive-ours", "merge-recursive-theirs", "merge-resolve",
                            "merge-octopus", "merge-ours", "merge-subtree", "merge-ort", "merge-index", "merge-one-file"))
# subcommands ForgePolicy.judge_git_frontend decides; asking only for these
# keeps the program models unloaded for every other git command
GIT_FRONTENDS = frozenset(("svn", "flow")) | MERGE_BACKENDS
# git options taking the next word as their value
GIT_OPTS_WITH_ARG = frozenset(("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                               "--super-prefix", "--attr-source", "--list-cmds"))
GIT_OPTS_THAT_EXIT = frozenset(("--version", "-v", "--help", "-h", "--html-path", "--man-path",
                                "--info-path", "--exec-path", "--list-cmds"))
# options with which git runs a program, besides --upload-pack, --receive-pack and --exec
PROGRAM_OPTIONS = {"clone": ("-u",), "ls-remote": ("-u",), "grep": ("-O", "--open-files-in-pager")}
# subcommands modelled in ralph.rules.guard.git_models: pull, subtree, config, and
# those that run a command of their own
MODELLED_SUBCOMMANDS = frozenset(("pull", "subtree", "config", "rebase", "submodule", "bisect", "filter-branch", "difftool"))
# the methods of ralph.rules.guard.git_models.GitModels: guard.Analysis loads that
# module when the walk first calls one of them
GIT_MODELS = frozenset(("env_git_configs", "config_env", "read_git_configs", "resolve_git_alias", "reads_only", "config_file",
                        "judge_hooks_dir", "judge_program_options", "judge_modelled_subcommand", "run_written_git_command",
                        "judge_pull", "judge_git_config", "judge_written_git_file", "probe", "run_git_value"))


class GitPolicy:
    """Git methods of the analysis (mixed into guard.Analysis)."""

    __slots__ = ()

    def run_git(self, argv: list[str], env: dict[str, str], scope: Scope, where: str, dashed: bool = False) -> str | None:
        configs: list[tuple[str, str]] = list(scope.git_configs)
        merged_env = dict(scope.exported)
        merged_env.update(env)
        if any(name.startswith("GIT_CONFIG") for name in merged_env):
            configs.extend(self.env_git_configs(merged_env, scope, where))
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
        # config entries (aliases, core.hooksPath, values git runs) and alias
        # resolution are in ralph.rules.guard.git_models, loaded when a command has some
        aliases = self.read_git_configs(configs, scope, where) if configs else scope.git_aliases
        remote = next((p for p in places if self.in_remote(p, scope, p is scope.cwd)), None)
        if remote is not None and not self.reads_only(sub.lower(), args):
            self.block(argv, f"git {sub.lower()} writes into `{show(remote)}`, another repository (a remote): that is a push", where,
                       "git.remote-write")
            return None
        if sub.lower() in aliases:
            resolved = self.resolve_git_alias(sub, args, aliases, scope, where)
            if resolved is None:
                return None
            sub, args = resolved
        self.judge_git_subcommand(sub, args, configs, argv, scope, where)
        return None

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

    def judge_git_subcommand(self, sub: str, args: list[str], configs: list, argv: list[str], scope: Scope, where: str) -> None:
        low = sub.lower()
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
        names = ("--upload-pack", "--receive-pack", "--exec") + PROGRAM_OPTIONS.get(low, ())
        if any(arg.startswith(names) or arg.lower().startswith("ext::") for arg in args):
            self.judge_program_options(low, names, args, scope, where)
        if low == "merge":
            if helping or (not any(UNKNOWN in a for a in args) and ("--abort" in args or "--quit" in args)):
                self.note(where, "git merge --abort/--quit/--help merges nothing")
                return
            self.block(argv, "git merge joins another branch into yours", where, "git.merge")
            return
        if low in MODELLED_SUBCOMMANDS:
            self.judge_modelled_subcommand(low, args, configs, argv, scope, where)
            return
        # git runs `git-<sub>` found on PATH for a subcommand it lacks: one this command wrote counts
        if scope.files and any(path.rsplit("/", 1)[-1].lower() == "git-" + low for path in scope.files) \
                and self.run_written_git_command(low, args, scope, where):
            return
        self.note(where, f"git {low}: allowed")

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
        self.judge_written_git_file(path, content, is_hook, where)


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


