"""Before the first iteration: what would certainly fail in every iteration
is found once and ends the run (finish `error`) with the reason, instead of
N failed iterations and a finish that does not say why.

- git can make a commit here: an author and a committer identity (without
  `user.email`, every verified story would end `commit_failed`);
- no rebase, merge, cherry-pick, revert, bisect or `git am` of the person's
  is in progress: the loop would take its state for the agent's (a merge in
  progress becomes the agent's commit, a paused rebase is rolled back and its
  state removed); the refusal names it and the commands that finish or abort it;
- each stage's agent program exists and can be run: the first word of the
  command (after `NAME=value` assignments) found on PATH or at its path, when
  the command is a plain one ralph can read without a shell (anything with
  shell syntax in that word, or a shell builtin, is left to the shell).

The sandbox is checked where its layer is built (ralph.loop.sandbox_layer:
bubblewrap must run when the sandbox is on), also before the first iteration.
"""
from __future__ import annotations

import os
import shlex
import shutil

from ralph.loop.run import Finish, Run
from ralph.run.git import run as run_git
from ralph.run.settings import Stage

ASSIGNMENT_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
NAME_CHARS = ASSIGNMENT_START | frozenset("0123456789")
SHELL_SYNTAX = frozenset("$`(){}[]*?;&|<>!\\\"'=")
# words a shell runs itself, or that run the next word: the program is not the first word
SHELL_WORDS = frozenset((
    ".", ":", "[", "alias", "bg", "builtin", "case", "cd", "command", "eval", "exec", "export", "fg", "for", "if",
    "jobs", "local", "nohup", "read", "set", "source", "test", "time", "trap", "type", "ulimit", "umask", "until",
    "while", "{", "!", "true", "false", "echo", "printf",
))


def check(run: Run) -> None:
    """Every problem found, at once, as one Finish("error")."""
    problems: list[str] = []
    operation = git_operation_problem(run.root)
    if operation:
        problems.append(operation)
    if any(stage.mode == "build" for stage in run.settings.stages):
        problem = git_identity_problem(run.root)
        if problem:
            problems.append(problem)
    seen: set[str] = set()
    for stage in run.settings.stages:
        key = repr(stage.agent_command)
        if key in seen:
            continue
        seen.add(key)
        problem = agent_problem(stage, run.root, os.environ.get("PATH", os.defpath))
        if problem:
            problems.append(problem)
    if problems:
        raise Finish("error", "; ".join(problems))


# what git leaves in its directory while an operation waits for the person:
# (path, what it is, how to finish it, how to abort it), the first found wins
GIT_OPERATIONS = (
    ("rebase-merge", "a rebase", "git rebase --continue", "git rebase --abort"),
    ("rebase-apply/applying", "a `git am`", "git am --continue", "git am --abort"),
    ("rebase-apply", "a rebase", "git rebase --continue", "git rebase --abort"),
    ("MERGE_HEAD", "a merge", "git commit", "git merge --abort"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --continue", "git cherry-pick --abort"),
    ("REVERT_HEAD", "a revert", "git revert --continue", "git revert --abort"),
    ("sequencer/todo", "a cherry-pick or revert of several commits", "git cherry-pick --continue (or git revert --continue)",
     "git cherry-pick --abort (or git revert --abort)"),
    ("BISECT_LOG", "a bisect", "git bisect good / git bisect bad until it ends", "git bisect reset"),
)


def git_operation_problem(root: str) -> str:
    """Why the loop must not start on the person's git operation in progress ("" when none is)."""
    done = run_git(root, ["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"])
    if not done.ok:
        return ""  # not a repository: head_sha() said so already
    directories = dict.fromkeys(done.out.decode("utf-8", "surrogateescape").splitlines())
    for name, what, finish, abort in GIT_OPERATIONS:
        # BISECT_LOG lives in the common directory for all worktrees (git < 2.35 too); the others per worktree
        for directory in directories if name == "BISECT_LOG" else list(directories)[:1]:
            path = os.path.join(directory, name)
            if os.path.lexists(path):
                shown = os.path.relpath(path, root) if path.startswith(os.path.join(root, "")) else path
                return (f"{what} is in progress in this repository ({shown}); ralph-loop would take its state for the "
                        f"agent's work and undo it. Finish it (`{finish}`) or abort it (`{abort}`), then start the loop "
                        "again. Nothing was touched")
    return ""


def git_identity_problem(root: str) -> str:
    """Why git cannot commit here for want of an identity ("" when it can)."""
    for variable in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
        done = run_git(root, ["var", variable])
        if not done.ok:
            lines = done.err.decode("utf-8", "replace").strip().splitlines()
            reason = next((line for line in reversed(lines) if line.startswith("fatal:")), lines[-1] if lines else f"exit {done.code}")
            return (f"git has no {'author' if 'AUTHOR' in variable else 'committer'} identity here, so no story could be committed "
                    f"({reason}); set one: git config user.name 'Your Name'; git config user.email you@example.com")
    return ""


def program_word(command: list[str] | str) -> str:
    """The program a command runs, when it can be told without a shell ("" otherwise)."""
    if isinstance(command, list):
        return command[0] if command else ""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return ""  # unbalanced quotes: the shell says what is wrong
    for word in words:
        name, equals, _ = word.partition("=")
        if equals and name and name[0] in ASSIGNMENT_START and all(c in NAME_CHARS for c in name):
            continue  # NAME=value before the program
        if word in SHELL_WORDS or any(c in SHELL_SYNTAX for c in word) or not word:
            return ""
        return word
    return ""


def agent_problem(stage: Stage, root: str, path: str) -> str:
    """Why the stage's agent program cannot start ("" when it can, or when
    that cannot be told without running a shell)."""
    word = program_word(stage.agent_command)
    if not word:
        return ""
    shown = f"the {stage.name} stage's agent command ({word!r})"
    if "/" in word:
        full = os.path.expanduser(word)
        full = full if os.path.isabs(full) else os.path.join(root, full)
        if not os.path.exists(full):
            return f"{shown} cannot start: {full} does not exist"
        if os.path.isdir(full) or not os.access(full, os.X_OK):
            return f"{shown} cannot start: {full} is not an executable file"
        return ""
    if shutil.which(word, path=path) is None:
        return f"{shown} cannot start: {word} is not found on PATH ({path})"
    return ""
