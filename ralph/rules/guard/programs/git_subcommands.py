"""The git subcommands the git model judges on their own: the front ends
(svn, flow) and merge backends, options and `ext::` URLs with which git runs
a program, pull (unless it rebases), subtree, config, the subcommands that
run a command of their own (rebase --exec, submodule foreach, bisect run,
filter-branch, difftool --extcmd) and `git-<sub>` scripts the command wrote.
Loaded by name from ralph.rules.guard.programs.git when a call needs it.
"""
from ralph.rules.guard.interp import Analysis
from ralph.rules.guard.programs.git import GIT_BUILTINS, MERGE_BACKENDS
from ralph.rules.guard.programs.git_config import judge_git_config
from ralph.rules.guard.state import UNKNOWN, Scope, option_values, shell_quote, show

FILTER_BRANCH_OPTS = frozenset(("--env-filter", "--tree-filter", "--index-filter", "--parent-filter",
                                "--msg-filter", "--commit-filter", "--tag-name-filter"))
# subcommand -> (options whose value is a shell script git runs, how the trace names it)
SCRIPT_OPTIONS = {
    "rebase": (("--exec", "-x"), "git rebase --exec"),
    "filter-branch": (tuple(FILTER_BRANCH_OPTS), "git filter-branch"),
    "difftool": (("-x", "--extcmd"), "git difftool --extcmd"),
}


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
