"""The guard's fast path: commands too plain to push, merge or destroy work.

The guard proper (ralph.rules.guard.judge) parses bash and costs about a
millisecond just to import, on every Bash call. Most commands an agent runs
are plain words: `ls -la src`, `cat README.md`, `cargo build`. A command
made only of PLAIN_CHARS has no quoting, escaping, expansion, substitution,
redirection, glob, comment or control operator, so bash runs it as a single
simple command with exactly those literal words. If no word contains a
RISKY_FRAGMENT either (case-insensitively: `GIT PUSH` runs git on macOS), it
cannot name git, a git helper, a forge CLI, `ralph stream merge` or a
push/merge/pull/sync; and if no word names a program that runs a project file or deletes and
overwrites (GUARDED_PROGRAMS: `npm`, `make`, `pytest`, `rm`, `python`, ...;
nor is the program a path, `./deploy.sh`), such a command is allowed without
loading the guard. Anything else, and any
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
# programs that run what a project file says (task runners, interpreters and
# shells given a file) or that delete and overwrite: the guard reads those files
# and judges what is lost, so such a command never takes the fast path
GUARDED_PROGRAMS = frozenset((
    "make", "gmake", "npm", "pnpm", "yarn", "bun", "npx", "pnpx", "bunx", "pytest", "py.test", "tox", "nox", "just", "task",
    "go-task", "invoke", "inv", "pre-commit", "cmake", "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno",
    "perl", "ruby", "php", "lua", "rscript", "bash", "sh", "zsh", "dash", "ksh", "fish", "source", ".", "rm", "unlink", "shred",
    "find", "dd", "wipefs", "blkdiscard", "fdisk", "sfdisk", "sgdisk", "parted", "mke2fs", "mkswap", "chmod", "chown", "chgrp",
    "truncate", "psql", "mysql", "mariadb", "sqlite3", "mongosh", "mongo", "dropdb", "mysqladmin", "redis-cli", "mv", "cp", "ln",
    "install", "tee", "sed", "mktemp", "xargs", "env", "sudo", "doas", "timeout", "nice", "nohup", "exec", "command", "time",
))
MAX_PLAIN_LENGTH = 4096


def is_plain(command: str) -> bool:
    """One simple command of literal words: only PLAIN_CHARS, not empty, not too long."""
    return len(command) <= MAX_PLAIN_LENGTH and bool(command.strip()) and PLAIN_CHARS.issuperset(command)


def obviously_harmless(command: str) -> bool:
    """True only for a single literal simple command that cannot push, merge
    or destroy work, and runs no project file."""
    if not is_plain(command):
        return False
    lowered = command.lower()
    if any(fragment in lowered for fragment in RISKY_FRAGMENTS):
        return False
    words = lowered.split()
    if "/" in words[0]:
        return False  # ./deploy.sh: a script on disk
    for word in words:
        name = word.rsplit("/", 1)[-1]
        if name in GUARDED_PROGRAMS or name.startswith(("mkfs", "python", "pypy")) or name.rstrip("0123456789.") in GUARDED_PROGRAMS:
            return False
    return True
