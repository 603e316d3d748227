"""The os and os.path calls of the hook path, on the built-in posix module.

`import os` costs about a tenth of a Python start (os.environ needs
_collections_abc, which builds two dozen abstract classes), and a hook runs on
every tool call: scripts/bench.py holds a PreToolUse call to no more than a
bare `python -I -c pass`. So the modules a Bash PreToolUse call loads
(ralph.hook, protocol, project, the handler, the guard) use these, and the
rest of ralph uses os. Each function here behaves as its os / os.path
namesake does for str paths on POSIX; tests/test_fastos.py holds them to it.
"""
import posix
import sys

# used as they are (note: `open` here is os.open, not the built-in)
from posix import (O_APPEND, O_CREAT, O_RDONLY, O_TRUNC, O_WRONLY, W_OK, X_OK, _exit, access, close, fstat, fsync,  # noqa: F401
                   getcwd, getpid, kill, killpg, link, lstat, mkdir, open, read, replace, stat, unlink, write)

_decoded_environ: list[dict[str, str]] = []
# file types in st_mode, as the stat module has them (importing its C part,
# _stat, costs a hook call more than these two tests)
S_IFMT, S_IFDIR, S_IFREG = 0o170000, 0o040000, 0o100000


def environ() -> dict[str, str]:
    """The process environment as str -> str: os.environ itself once os is
    loaded (the loop, the tests: it is live and may change), else the same
    strings decoded once from posix.environ, as os would."""
    os = sys.modules.get("os")
    if os is not None:
        return os.environ  # type: ignore[return-value]
    if not _decoded_environ:
        encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
        _decoded_environ.append({key.decode(encoding, errors): value.decode(encoding, errors)
                                 for key, value in posix.environ.items()})
    return _decoded_environ[0]


# ---- os.path, for str paths ----


def join(path: str, *parts: str) -> str:
    for part in parts:
        if part.startswith("/"):
            path = part
        elif not path or path.endswith("/"):
            path += part
        else:
            path += "/" + part
    return path


def dirname(path: str) -> str:
    head = path[:path.rfind("/") + 1]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head


def basename(path: str) -> str:
    return path[path.rfind("/") + 1:]


def isabs(path: str) -> bool:
    return path.startswith("/")


def normpath(path: str) -> str:
    if not path:
        return "."
    # POSIX keeps exactly two leading slashes; three or more mean one
    initial = 2 if path.startswith("//") and not path.startswith("///") else 1 if path.startswith("/") else 0
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part != ".." or (not initial and not parts) or (parts and parts[-1] == ".."):
            parts.append(part)
        elif parts:
            parts.pop()
    return "/" * initial + "/".join(parts) or "."


def abspath(path: str) -> str:
    return normpath(path if isabs(path) else join(getcwd(), path))


def exists(path: str) -> bool:
    try:
        stat(path)
    except (OSError, ValueError):
        return False
    return True


def lexists(path: str) -> bool:
    try:
        lstat(path)
    except (OSError, ValueError):
        return False
    return True


def isdir(path: str) -> bool:
    try:
        return stat(path).st_mode & S_IFMT == S_IFDIR
    except (OSError, ValueError):
        return False


def isfile(path: str) -> bool:
    try:
        return stat(path).st_mode & S_IFMT == S_IFREG
    except (OSError, ValueError):
        return False


def makedirs(path: str, mode: int = 0o777, exist_ok: bool = False) -> None:
    """os.makedirs: the missing parents first, then `path`."""
    head, tail = dirname(path), basename(path)
    if not tail:
        head, tail = dirname(head), basename(head)
    if head and tail and not exists(head):
        try:
            makedirs(head, exist_ok=exist_ok)
        except FileExistsError:
            pass  # made meanwhile by another process
        if tail == ".":
            return
    try:
        mkdir(path, mode)
    except OSError:
        if not exist_ok or not isdir(path):
            raise
