"""The guard's fast path: commands too plain to push, merge or destroy work.

The guard proper (ralph.rules.guard.judge) parses bash and costs about a
millisecond just to import, on every Bash call. Most commands an agent runs
are plain words: `ls -la src`, `cat README.md`, `cargo build`. A command
made only of PLAIN_CHARS has no quoting, escaping, expansion, substitution,
redirection, glob, comment or control operator, so bash runs it as a single
simple command with exactly those literal words. If no word contains a
RISKY_FRAGMENT either (case-insensitively: `GIT PUSH` runs git on macOS), it
cannot name git, a git helper, a forge CLI, `ralph stream merge` or a
push/merge/pull/sync; and if no word names a program the guard models
(GUARDED_PROGRAMS: task runners, shells and interpreters, wrappers, what
deletes and overwrites: `npm`, `tcsh`, `sudo`, `rm`, `cryptsetup`, ...) nor
is the program a path (`./deploy.sh`), such a command is allowed without
loading the guard. Anything else, and any project with a ralph.toml (whose
[guard] table may block other programs), goes through the full guard.
tests/test_guard_fast_path.py checks that this never allows what the guard
would block, with scripts on disk too. Pure.
"""
PLAIN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _./=:,+@%-")
# git, push/merge words, and the forge CLIs and git front ends whose merges
# and pushes are spelled without them (`gh repo sync`, `gh api ... contents`,
# `git svn dcommit` has git, `jj`)
RISKY_FRAGMENTS = ("git", "push", "merge", "pull", "send-pack", "subtree", "ralph", "gh", "glab", "hub", "sync", "jj",
                   "dcommit")
# Programs the guard models (ralph.rules.guard.models.PROGRAM_MODELS, and
# the shells, interpreters and wrappers of ralph.rules.guard.programs.facts):
# a command naming one, anywhere in its words, never takes the fast path, for
# the guard reads the files they run and judges what they delete. Spelled out
# here so the fast path loads no table; tests/test_guard_fast_path.py holds
# it to those tables. Left out: the shell builtins the guard models only to
# follow a compound command's state (`cd`, `export`, `mkdir`: a lone literal
# one changes nothing that pushes), and the reserved words do/then/else.
GUARDED_PROGRAMS = frozenset((
    # task runners, and runners of the tests they are given
    "make", "gmake", "npm", "pnpm", "yarn", "bun", "npx", "pnpx", "bunx", "pytest", "py.test", "tox", "nox", "just", "task",
    "go-task", "invoke", "inv", "pre-commit", "cmake",
    # shells and interpreters: they run a script file
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "yash", "posh", "rbash", "tcsh", "csh", "source", ".", "eval", "trap",
    "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "perl", "ruby", "php", "lua", "luajit", "rscript",
    "tclsh", "expect", "osascript", "pwsh", "powershell", "julia", "groovy", "jshell", "irb",
    # programs that run a program of their own (awk -f, sed -f, an editor's -S script)
    "awk", "gawk", "mawk", "nawk", "sed", "gsed", "ed", "red", "ex", "vi", "vim", "nvim", "view", "vim.basic", "vim.tiny",
    # wrappers: they run a command from their words, a file or stdin
    "sudo", "doas", "env", "exec", "command", "builtin", "time", "timeout", "nice", "ionice", "nohup", "setsid", "chrt",
    "taskset", "stdbuf", "chroot", "unshare", "nsenter", "firejail", "fakeroot", "flock", "su", "runuser", "sg", "script",
    "systemd-run", "strace", "ltrace", "valgrind", "gdb", "perf", "catchsegv", "chronic", "unbuffer", "eatmydata", "nocache",
    "torsocks", "proxychains", "proxychains4", "caffeinate", "coproc", "watch", "xvfb-run", "dbus-launch", "nix-shell",
    "cross-env", "cross-env-shell", "dotenv", "xargs", "find", "parallel", "ssh", "tmux", "screen", "at", "batch", "busybox",
    "toybox",
    # they delete and overwrite: files, disks, permissions, databases
    "rm", "unlink", "shred", "truncate", "mktemp", "mv", "cp", "ln", "install", "tee", "dd", "wipefs", "blkdiscard", "fdisk",
    "sfdisk", "sgdisk", "cfdisk", "parted", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "cryptsetup", "badblocks", "zpool",
    "pvcreate", "vgremove", "lvremove", "chmod", "chown", "chgrp", "psql", "mysql", "mariadb", "sqlite3", "mongosh", "mongo",
    "dropdb", "mysqladmin", "redis-cli", "clickhouse-client", "cockroach",
    # git under another name
    "yadm",
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


# Programs that only read: none writes a file from its words (which is why
# sort -o, uniq IN OUT, tree -o, xxd IN OUT, tee, touch and mkdir are not here,
# nor rg --pre and file -C, nor git: even `git status` writes the index and may
# take its lock). With obviously_harmless's plain words (no redirection, no
# substitution, one command) such a command changes nothing in the project.
READ_ONLY_PROGRAMS = frozenset((
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo", "printf", "stat", "du", "df", "date",
    "sleep", "true", "false", "diff", "cmp", "which", "whoami", "id", "uname", "nproc", "ps", "free", "uptime", "printenv",
    "basename", "dirname", "realpath", "readlink", "test", "nl", "od", "strings", "tac", "rev", "cut", "md5sum",
    "sha1sum", "sha256sum", "sha512sum", "cksum", "jq", "cd", "type",
))


def plainly_read_only(command: str) -> bool:
    """True only for a plain command (obviously_harmless) of a program that
    reads and never writes: what may run while a rollback resets the tree
    (ralph.state.rollback_lock)."""
    return obviously_harmless(command) and command.split()[0] in READ_ONLY_PROGRAMS
