"""The guard's fast path: commands too plain to push or merge.

The guard proper (ralph.rules.guard.judge) parses bash and costs about a
millisecond just to import, on every Bash call. Most commands an agent runs
are plain words: `ls -la src`, `npm test`, `pytest -q tests/unit`. A command
made only of PLAIN_CHARS has no quoting, escaping, expansion, substitution,
redirection, glob, comment or control operator, so bash runs it as a single
simple command with exactly those literal words. If no word contains a
RISKY_FRAGMENT either (case-insensitively: `GIT PUSH` runs git on macOS), it
cannot name git, a git helper, a forge CLI, `ralph stream merge` or a
push/merge/pull/sync:
such a command is allowed without loading the guard. Anything else, and any
project with a ralph.toml (whose [guard] table may block other programs),
goes through the full guard. tests/test_guard_fast_path.py checks that this
never allows what the guard would block. Pure.
"""
PLAIN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _./=:,+@%-")
# git, push/merge words, and the forge CLIs and git front ends whose merges
# and pushes are spelled without them (`gh repo sync`, `gh api ... contents`,
# `git svn dcommit` has git, `jj`)
RISKY_FRAGMENTS = ("git", "push", "merge", "pull", "send-pack", "subtree", "ralph", "gh", "glab", "hub", "sync", "jj",
                   "dcommit")
MAX_PLAIN_LENGTH = 4096


def obviously_harmless(command: str) -> bool:
    """True only for a single literal simple command that cannot push or merge."""
    if len(command) > MAX_PLAIN_LENGTH or not command.strip():
        return False
    if not PLAIN_CHARS.issuperset(command):
        return False
    lowered = command.lower()
    return not any(fragment in lowered for fragment in RISKY_FRAGMENTS)
