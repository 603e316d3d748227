"""The forge models: merges and remote writes made through a forge's CLI or
API, and the other front ends that push or merge.

Blocked by default, each family switchable in [guard] (ralph.config.tables.guard.GUARD_KEYS):
- forge_merges: `gh pr merge`, `glab mr merge` (`accept`), `hub merge`;
  help forms (`--help`, `-h`) excepted.
- forge_api_writes: `gh api` / `glab api` / `hub api` calls that merge
  (`pulls/N/merge`, `merges`, `merge-upstream`, `update-branch`,
  `merge_requests/N/merge`), write refs (`git/refs`, `branches`), create
  commits (`contents/`, `repository/commits`, `repository/files`), or
  GraphQL mutations that do the same; with the method gh would use (-X, or POST
  when fields are given). An endpoint only known when the command runs, with
  a write method, fails closed.
- forge_sync: `gh repo sync`, `hub sync`.
- git_frontends: `jj git push` (here), `git svn dcommit`/`set-tree`, `git flow
  <kind> finish|publish` (ralph.rules.guard.programs.git).
- merge_backends: git's merge programs run directly (`git merge-recursive`,
  `merge-resolve`, `merge-octopus`, `merge-ours`, `merge-subtree`,
  `merge-index`: ralph.rules.guard.programs.git).
Read-only calls (`gh pr view`, `gh api repos/o/r/pulls`) are allowed. Also
`ralph stream merge`, which merges a stream into the main branch; hub runs
git for what is not its own.
"""
from ralph.rules.guard.interp import Analysis
from ralph.rules.guard.programs.git import run_git
from ralph.rules.guard.state import UNKNOWN, Scope, show

GH_OPTS_WITH_ARG = frozenset(("-R", "--repo", "--hostname"))
GH_API_OPTS_WITH_ARG = frozenset(("-X", "--method", "-f", "--raw-field", "-F", "--field", "-H", "--header", "--input",
                                  "-q", "--jq", "-t", "--template", "--cache", "--hostname", "-p", "--preview"))
GH_API_FIELD_OPTS = frozenset(("-f", "--raw-field", "-F", "--field", "--input"))
JJ_OPTS_WITH_ARG = frozenset(("-R", "--repository", "--at-operation", "--at-op", "--config", "--config-toml",
                              "--config-file", "--color"))
# REST endpoints that merge, write refs or make commits: path segments, and
# runs of segments
API_WRITE_SEGMENTS = frozenset(("merge", "merges", "merge-upstream", "update-branch", "contents", "rebase"))
API_WRITE_PATHS = ("/git/refs", "/git/commits", "/git/trees", "/repository/commits", "/repository/files",
                   "/repository/branches", "/repository/merge")
# GraphQL mutations that merge or write refs or commits
API_WRITE_MUTATIONS = ("mergepullrequest", "mergebranch", "createcommitonbranch", "updateref", "createref",
                       "enablepullrequestautomerge", "updatepullrequestbranch", "accept_merge_request",
                       "mergerequestaccept", "mergerequestsetautomerge")
HELP = ("--help", "-h", "help")
FORGE_ADVICE = ("Write the forge command with literal words (e.g. `gh pr view 12`); merges on the forge, "
                "and API calls that write refs or commits, are left to the person.")


def _words(argv: list[str], opts_with_arg: frozenset) -> list[str]:
    """The non-option words of a CLI call (options and their values taken off)."""
    words = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in opts_with_arg:
            i += 2
            continue
        if not arg.startswith("-") or arg == "-":
            words.append(arg)
        i += 1
    return words


def run_gh(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    args = argv[1:]
    words = _words(args, GH_OPTS_WITH_ARG | GH_API_OPTS_WITH_ARG)
    if any(a in HELP for a in args) or not words:
        return None
    group, verb = words[0].lower(), (words[1].lower() if len(words) > 1 else "")
    if UNKNOWN in group or (group in ("pr", "repo") and UNKNOWN in verb):
        analysis.not_sure(False, f"the gh command `{show(' '.join(words[:2]))}` is only known when the command runs", where,
                          "fail-closed.forge-command", FORGE_ADVICE)
        return None
    if group == "pr" and verb == "merge":
        analysis.forge_block("forge_merges", argv, "gh pr merge merges a pull request on the forge", where, "forge.gh-pr-merge")
    elif group == "repo" and verb == "sync":
        analysis.forge_block("forge_sync", argv, "gh repo sync updates a branch from another repository (a merge)", where, "forge.gh-repo-sync")
    elif group == "api":
        judge_api(analysis, "gh", args[args.index(words[0]) + 1:], stdin, where)
    return None


def run_glab(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    args = argv[1:]
    words = _words(args, GH_OPTS_WITH_ARG | GH_API_OPTS_WITH_ARG)
    if any(a in HELP for a in args) or not words:
        return None
    group, verb = words[0].lower(), (words[1].lower() if len(words) > 1 else "")
    if UNKNOWN in group or (group == "mr" and UNKNOWN in verb):
        analysis.not_sure(False, f"the glab command `{show(' '.join(words[:2]))}` is only known when the command runs", where,
                          "fail-closed.forge-command", FORGE_ADVICE)
        return None
    if group == "mr" and verb in ("merge", "accept"):
        analysis.forge_block("forge_merges", argv, "glab mr merge merges a merge request on the forge", where, "forge.glab-mr-merge")
    elif group == "api":
        judge_api(analysis, "glab", args[args.index(words[0]) + 1:], stdin, where)
    return None


def run_hub(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """hub wraps git: its own merge/sync/api, then git for the rest."""
    words = [a for a in argv[1:] if not a.startswith("-")]
    verb = words[0].lower() if words else ""
    if not any(a in HELP for a in argv[1:]):
        if verb == "merge":
            analysis.forge_block("forge_merges", argv, "hub merge merges a pull request", where, "forge.hub-merge")
            return None
        if verb == "sync":
            analysis.forge_block("forge_sync", argv, "hub sync fast-forwards local branches to their upstream (a merge)", where, "forge.hub-sync")
            return None
        if verb == "api":
            judge_api(analysis, "hub", argv[argv.index(words[0]) + 1:], stdin, where)
            return None
    return run_git(analysis, argv, env, scope, where)


def run_jj(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    words = _words(argv[1:], JJ_OPTS_WITH_ARG)
    if any(a in HELP for a in argv[1:]):
        return None
    if len(words) >= 2 and words[0].lower() == "git" and (words[1].lower() == "push" or UNKNOWN in words[1]):
        analysis.forge_block("git_frontends", argv, "jj git push pushes commits to a remote", where, "frontend.jj-git-push")
    elif words and UNKNOWN in words[0]:
        analysis.not_sure(False, "the jj subcommand is only known when the command runs", where, "fail-closed.forge-command")
    return None


def judge_api(analysis: Analysis, cli: str, args: list[str], stdin: str | None, where: str) -> None:
    """`gh api` (and glab/hub api): merges and ref or commit writes."""
    method = None
    fields = False
    endpoint = None
    body = []
    i = 0
    while i < len(args):
        arg = args[i]
        value = args[i + 1] if i + 1 < len(args) else ""
        if arg in ("-X", "--method"):
            method = value.upper()
        elif arg.startswith("--method="):
            method = arg.split("=", 1)[1].upper()
        elif arg.startswith("-X") and len(arg) > 2:
            method = arg[2:].upper()
        elif arg in GH_API_FIELD_OPTS:
            fields = True
            if arg == "--input":
                value = (stdin if stdin is not None else UNKNOWN) if value == "-" else UNKNOWN
            body.append(value)
        elif arg.startswith(("--field=", "--raw-field=")):
            fields = True
            body.append(arg.split("=", 1)[1])
        if arg in GH_API_OPTS_WITH_ARG:
            i += 2
            continue
        if not arg.startswith("-") and endpoint is None:
            endpoint = arg
        i += 1
    if endpoint is None:
        return
    method = method or ("POST" if fields else "GET")
    low = endpoint.lower()
    text = " ".join(body).lower()
    if low.strip("/") == "graphql":
        if any(m in text.replace(" ", "") for m in API_WRITE_MUTATIONS) or (UNKNOWN in text and "mutation" in text):
            analysis.forge_block("forge_api_writes", [cli, "api", endpoint], f"{cli} api graphql runs a mutation that merges or writes refs",
                                 where, "forge.api-write")
        elif UNKNOWN in text:
            analysis.not_sure(False, f"the {cli} api graphql query is only known when the command runs", where,
                              "fail-closed.forge-api", FORGE_ADVICE)
        return
    if method in ("GET", "HEAD"):
        return
    if UNKNOWN in low or UNKNOWN in method:
        analysis.not_sure(True, f"{cli} api writes to an endpoint `{show(endpoint)}` only known when the command runs", where,
                          "fail-closed.forge-api", FORGE_ADVICE)
        return
    path = "/" + low.split("?", 1)[0].strip("/")
    if API_WRITE_SEGMENTS.intersection(path.split("/")) or any(p in path for p in API_WRITE_PATHS):
        analysis.forge_block("forge_api_writes", [cli, "api", "-X", method, endpoint],
                             f"{cli} api {method} {show(endpoint)} merges or writes the remote's refs or commits", where, "forge.api-write")


def run_ralph(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    words = [a for a in argv[1:] if not a.startswith("-")]
    if len(words) >= 2 and words[0].lower() == "stream" and words[1].lower() == "merge":
        analysis.block(argv, "ralph stream merge merges a stream into the main branch", where, "ralph.stream-merge")
    elif words and UNKNOWN in words[0]:
        analysis.not_sure(False, "the ralph subcommand is only known when the command runs", where, "fail-closed.ralph-subcommand")
    return None
