"""The one git runner: every git call of ralph's goes through run(), with one
hygiene: the project's own git (never one that GIT_DIR or GIT_WORK_TREE point
elsewhere), C messages, no prompt, no optional locks (no call refreshes the
person's index), stdin closed unless given, a timeout, and the output kept
up to a cap. run() never raises: a git that cannot start or does not finish
in time is a result with its own exit code (127, 124) and a message."""
from __future__ import annotations

import os
import subprocess

# variables that would point git somewhere other than the project we were given
ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_NAMESPACE", "GIT_COMMON_DIR")
TIMEOUT_SECONDS = 120.0
NOT_STARTED = 127
TIMED_OUT = 124


class GitResult:
    """What one git call did: its exit code and its output, stdout and stderr apart."""

    __slots__ = ("code", "out", "err")

    def __init__(self, code: int, out: bytes, err: bytes) -> None:
        self.code = code
        self.out = out
        self.err = err

    @property
    def ok(self) -> bool:
        return self.code == 0

    def text(self) -> str:
        """stdout, decoded and stripped."""
        return self.out.decode("utf-8", "replace").strip()

    def message(self) -> str:
        """stderr then stdout, decoded and stripped: what a person is shown, and
        (git warns before it answers) what a caller reading the last line parses."""
        return (self.err + self.out).decode("utf-8", "replace").strip()


def git_env(base: dict[str, str] | os._Environ[str] | None = None) -> dict[str, str]:
    """`base` (the process environment when None) with the runner's hygiene applied."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in ENV_DROP}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C", LANG="C")
    return env


def run(root: str, args: list[str], *, input: bytes | None = None, env: dict[str, str] | None = None,
        timeout: float | None = TIMEOUT_SECONDS, cap: int | None = None) -> GitResult:
    """`git ARGS` in `root`. env: the whole environment, git_env()'s with what
    the call adds (a temporary index: GIT_INDEX_FILE); git_env() when None; timeout: None for
    work that takes as long as the repository needs (a rollback); cap: the
    most bytes of stdout and of stderr kept."""
    try:
        done = subprocess.run(["git", *args], cwd=root, env=git_env() if env is None else env, input=input,
                              stdin=None if input is not None else subprocess.DEVNULL,
                              capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return GitResult(TIMED_OUT, b"", f"git {' '.join(args[:2])} did not finish in {timeout:g}s".encode())
    except OSError as e:
        return GitResult(NOT_STARTED, b"", f"git could not start: {e}".encode())
    out, err = done.stdout, done.stderr
    if cap is not None:
        out, err = out[:cap], err[:cap]
    return GitResult(done.returncode, out, err)
