"""The guard: would this Bash command, when run, push or merge, or destroy
work (and can a snapshot hold what it destroys)?

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
- Forge merges and other front ends (ralph.rules.guard.programs.forges), each family
  switchable in [guard] (policy.FAMILIES): `gh pr merge`, `glab mr merge`, `hub
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

Destroying work (ralph.rules.guard.programs.destroy, git_destroy; where a
path lies: ralph.rules.guard.places): inside the project, what a snapshot can
hold is named in GuardVerdict.saves (`git reset --hard`, `git checkout --
<paths>`, `git clean -f`, `rm -r src`, a redirection over a tracked file,
`git branch -D`, `git stash drop`, ...) and the verdict allows the command
(ralph.claude.bash_guard saves first); outside it (home, system paths,
other repositories, the project's own directory or .git, disks, database
servers) the command is blocked; build artefacts, temporary directories and
what the command made are neither. Each family has a [guard] switch.

Task runners and files on disk (ralph.rules.guard.programs.runners,
makefiles, disk_scripts): make, npm/pnpm/yarn/bun scripts, pytest's tests and
conftest.py files, tox, nox, just, task, invoke, pre-commit local hooks,
cmake -P, scripts a command or git's settings run: read through the reader
in Surroundings (pure: passed in, as the local remotes are) and judged as
what they run.

Not seen (documented limits): git aliases or hooks configured before this
command, git libraries used from interpreter code, build files of other
tools (cargo's build.rs, Gradle), encoded pushes in the project's own files.
The client's own sandbox (`ralph sandbox`: Claude Code's Bash sandbox) is the second
line for those: the guard is the first, and explains its denials.

Modules (split like mvdan/sh): ralph.rules.guard.syntax parses (lexer,
parser); expand expands words; interp walks the tree and dispatches each
argv to its program's model (ralph.rules.guard.programs: git, forges,
shells and interpreters, wrappers, data-executing programs, shell builtins,
destructive programs, task runners), imported only when a command runs that
program; places says where a path lies; readers read runners' files; state holds the scope,
budget and markers; policy is the [guard] table; programs.facts is the table
of program facts (shared with ralph.rules.outcome.verdict) and
programs.fast_path the check that lets plain commands skip all of this. This
module gives the verdict, with a stable rule id.

Hot path: imports only ralph.rules.* and modules a hook call has loaded
already (os, sys, time); never re, enum or json.
"""
from ralph.rules.guard import models
from ralph.rules.guard.interp import FUNCTION, Analysis, absolute_paths
from ralph.rules.guard.policy import DEFAULT_POLICY, GuardPolicy
from ralph.rules.guard.state import Budget, Deadline, Scope, Surroundings
from ralph.rules.guard.syntax.parser import ShellSyntaxError, TooDeep, parse

ACT = (
    "Pushing and merging are left to the person or the loop that runs you: commit your work "
    "locally (`git commit`) and carry on with the task; do not try to push or merge another way."
)
# what to do instead, per family of the rules that protect work from being destroyed
DESTROY_ADVICE = {
    "destroy.device": "Formatting disks and writing to block devices is left to the person.",
    "destroy.permissions": "Change permissions only inside the project; system and home directories are left to the person.",
    "destroy.database": ("Dropping or emptying databases is left to the person; for tests use a database inside the "
                         "project (a SQLite file there is saved before it is changed)."),
    "destroy.unknown-path": ("Write the paths to delete literally (no variables set outside the command, no generated "
                             "names), e.g. `rm -r build/tmp`: ralph saves project files first and tells you how to get them back."),
    "destroy.git-dir": ("The .git directory holds the project's history and ralph's saved snapshots: leave it alone "
                        "(use git commands, e.g. `git gc`, `git branch -D`, to change it)."),
    "destroy.project-root": ("Delete what is inside the project by name instead (`rm -r src/old`): ralph saves it first "
                             "and tells you how to get it back."),
}
DESTROY_DEFAULT_ADVICE = ("Only the project's own files can be saved first: delete and overwrite inside the project "
                          "(ralph saves the work first and tells you how to get it back), or in a temporary directory "
                          "(mktemp -d); anything outside is left to the person.")
REWRITE = (
    "Rewrite it as plain simple commands with every git subcommand written out literally "
    "(no variables, eval, encoded or generated text for program names and subcommands), one per line."
)


class GuardVerdict:
    """The decision on one command. rule_id names the rule that decided it
    (stable: tests/fixtures/bash records it per case, `ralph explain` prints it):
    `git.push`, `forge.gh-pr-merge`, `fail-closed.program-name`, `allow.nothing-pushes`, ..."""

    __slots__ = ("blocked", "reason", "evidence", "trace", "rule_id", "saves")

    def __init__(self, blocked: bool, reason: str, evidence: list[str], trace: list[str], rule_id: str = "",
                 saves: tuple = ()) -> None:
        # not blocked, but work to save before it runs: (kind, target, rule id, what), see Analysis.save
        self.saves = saves
        self.blocked = blocked
        self.reason = reason
        self.evidence = evidence
        self.trace = trace
        self.rule_id = rule_id or ("fail-closed.unknown" if blocked else "allow.nothing-pushes")

    def __repr__(self) -> str:
        saves = f", saves={self.saves!r}" if self.saves else ""
        return f"GuardVerdict(blocked={self.blocked!r}, rule_id={self.rule_id!r}, reason={self.reason!r}, evidence={self.evidence!r}{saves})"


def judge_command(command: str, policy: GuardPolicy | None = None, deadline: float = 0.25, cwd: str = "",
                  remotes: tuple[str, ...] | FUNCTION = (), around: Surroundings | None = None) -> GuardVerdict:
    """Would running `command` in bash push or merge, or destroy work? Never raises.
    cwd: where it runs; remotes: absolute paths of the repository's local-path
    remotes (a git write into one of them is a push), or a function that
    reads them, called only if the command touches another directory;
    around: the project, home and temporary directories and the reader of
    the project's files (default: the project is cwd, nothing is read).
    A verdict that is not blocked may name work to save first (saves)."""
    policy = policy or DEFAULT_POLICY
    try:
        return _judge(command, policy, deadline, cwd, remotes, around or Surroundings(cwd))
    except BaseException as e:  # noqa: B036 - a crash would be a bypass
        if isinstance(e, KeyboardInterrupt):
            raise
        return _unsure_verdict(command, policy, f"the guard failed on this command ({type(e).__name__})", ["internal error"], "internal-error")


def _unsure_verdict(command: str, policy: GuardPolicy, why: str, trace: list[str], rule: str) -> GuardVerdict:
    try:
        risky = policy.could_push(command) or could_destroy(command)
    except BaseException:  # noqa: B036
        risky = True
    if not risky:
        return GuardVerdict(False, "", [], trace + [f"{why}; the command does not mention push/merge/pull -> allow"], f"allow.{rule}-no-risky-text")
    reason = (
        f"ralph-hooks blocked this command: {why}, and it mentions push/merge/pull, encoded text or a command that "
        f"deletes work. Split it into plain simple commands (one per line, no deep nesting or generated code). {ACT}"
    )
    return GuardVerdict(True, reason, [why], trace + [f"{why} -> BLOCK (fail closed)"], f"fail-closed.{rule}")


# words of commands that delete or overwrite work: a command the guard cannot
# read that names one is denied, as one that names push/merge is
DESTROYING_WORDS = frozenset(("rm", "shred", "unlink", "mkfs", "dd", "wipefs", "reset", "clean", "checkout", "restore", "rmtree",
                              "rmsync", "rm_rf", "truncate", "drop", "dropdb", "delete", "chmod", "chown"))


def could_destroy(text: str) -> bool:
    """Does this text name a command that deletes or overwrites work?"""
    words = "".join(c if c.isalnum() or c == "_" else " " for c in text.lower()).split()
    return not DESTROYING_WORDS.isdisjoint(words)


def _judge(command: str, policy: GuardPolicy, deadline: float, cwd: str, remotes: tuple[str, ...] | FUNCTION,
           around: Surroundings) -> GuardVerdict:
    if policy.allow_commands and command.strip() in policy.allow_commands:
        return GuardVerdict(False, "", [], ["listed in ralph.toml [guard] allow_commands -> allow"], "allow.config-allow-commands")
    budget = Budget(deadline)
    analysis = Analysis(command, policy, budget, models)
    analysis.cwd = cwd
    analysis.around = around
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
    for name, value in around.variables.items():
        scope.vars[name] = [value]
    try:
        analysis.run(tree, scope, "", False, "")
    except (TooDeep, RecursionError):
        return _unsure_verdict(command, policy, "the command is nested too deeply to check", analysis.trace + ["too deep"], "too-deep")
    except Deadline:
        return _unsure_verdict(command, policy, "the command is too long to check in time", analysis.trace + ["deadline"], "deadline")
    trace = analysis.trace
    if analysis.blocks:
        # a push or merge is named first: pushing is what the person most needs kept from the agent
        blocks = sorted(analysis.blocks, key=lambda b: b[3].startswith("destroy."))
        what, why, where, rule = blocks[0]
        nested = f" (inside {where})" if " > " in where else ""
        act = DESTROY_ADVICE.get(rule, DESTROY_DEFAULT_ADVICE) if rule.startswith("destroy.") else ACT
        reason = f"ralph-hooks blocked this command: it would run `{what}`{nested}: {why}. {act}"
        evidence = [f"{w}: {y} [{p}]" for w, y, p, _ in blocks]
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
        if not analysis.saves:
            return GuardVerdict(False, "", [], trace, "allow.unsure-no-risky-text")
    if analysis.saves:
        saves = tuple(analysis.saves)
        reason = "; ".join(dict.fromkeys(f"`{what}` {why}" for _, _, _, what, why in saves))
        return GuardVerdict(False, reason, [f"{what}: {why}" for _, _, _, what, why in saves], trace, saves[0][2],
                            tuple((kind, target, rule, what) for kind, target, rule, what, _ in saves))
    return GuardVerdict(False, "", [], trace, analysis.allow_rule or "allow.nothing-pushes")
