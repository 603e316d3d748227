"""The test-run check's fast path: commands too plain to run tests.

PostToolUse on Bash asks of every command whether it ran tests, and the full
answer (ralph.rules.outcome.command_shape) parses bash and loads `re`: a few
milliseconds on every Bash call. Most commands an agent runs are plain words
of a handful of programs: `ls -la src`, `cat README.md`, `git status`. A
command made only of the guard's PLAIN_CHARS is one simple command of literal
words (ralph.rules.guard.programs.fast_path); if its program is one of
NOT_RUNNERS and no word says test, spec or check, it runs no tests, and its
output is not read. Anything else, and any project with a ralph.toml (whose
[tests] table may declare any command a test run), takes the full answer.
tests/test_outcome_fast_path.py holds this to command_shape on every command
of the corpora. Pure.
"""
from ralph.rules.guard.programs.fast_path import is_plain

# programs that run no test suite, whatever their arguments, when nothing in
# those says test, spec or check (`git bisect run pytest` says it)
NOT_RUNNERS = frozenset((
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "pwd", "echo", "printf", "mkdir", "rmdir",
    "touch", "cp", "mv", "rm", "ln", "diff", "cmp", "sort", "uniq", "cut", "tr", "which", "type", "date", "stat", "file",
    "du", "df", "tree", "git", "cd", "sed", "awk", "find", "fd", "chmod", "ps", "sleep", "true", "false", "basename",
    "dirname", "realpath", "readlink", "whoami", "uname", "id", "less", "more", "nl", "od", "xxd", "hexdump", "sha256sum",
    "md5sum", "tar", "unzip", "zip", "gzip", "gunzip", "jq", "yq", "column", "comm", "join", "paste", "tac", "rev",
))
TEST_WORDS = ("test", "spec", "check")


def runs_no_tests(command: str) -> bool:
    """True only for a single literal simple command of a program in
    NOT_RUNNERS in which no word says test, spec or check."""
    if not is_plain(command):
        return False
    lowered = command.lower()
    if any(word in lowered for word in TEST_WORDS):
        return False
    return lowered.split()[0] in NOT_RUNNERS
