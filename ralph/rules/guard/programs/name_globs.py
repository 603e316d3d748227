"""The programs a glob for a program name can stand for (`gi? push`,
`/usr/bin/git-p*sh`): those that push or merge, matched as fnmatch does.
Apart from the walk because fnmatch imports re, which a hook call that
meets no such glob should not pay for.
"""
from fnmatch import fnmatchcase

# programs a glob in a command name is checked against
GLOB_CANDIDATES = ("git", "gh", "glab", "hub", "jj", "ralph") + tuple("git-" + s for s in (
    "push", "send-pack", "http-push", "merge", "pull", "subtree", "merge-recursive", "merge-resolve", "merge-octopus",
    "merge-ours", "merge-subtree", "merge-index", "svn", "flow"))


def glob_programs(pattern: str) -> list[str]:
    """The push/merge-capable programs a glob like `gi?` or `git-p*sh` can name."""
    return [name for name in GLOB_CANDIDATES if fnmatchcase(name, pattern.lower())]
