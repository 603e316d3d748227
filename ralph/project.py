"""Where a project's state lives, and the only two ways ralph writes files:
append one line with O_APPEND, or write a temp file and rename it over."""
import os

STATE_DIR_NAME = ".ralph"
CONFIG_FILE = "ralph.toml"


def project_root(cwd: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> str:
    """$CLAUDE_PROJECT_DIR, else the git toplevel above cwd, else cwd.

    The toplevel is found by walking up to a `.git` entry (dir, or file for
    worktrees and submodules) instead of spawning git: this runs on every call.
    """
    env_dir = environ.get("CLAUDE_PROJECT_DIR")
    if env_dir and os.path.isdir(env_dir):
        return os.path.abspath(env_dir)
    here = os.path.abspath(cwd)
    probe = here
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return here
        probe = parent


def config_path(root: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> str | None:
    """The project's config file (`ralph.toml`, or $RALPH_CONFIG), None when
    there is none. Here, not in ralph.config, so the hot path can ask without
    importing the parser."""
    explicit = environ.get("RALPH_CONFIG")
    if explicit:
        return explicit
    path = os.path.join(root, CONFIG_FILE)
    return path if os.path.isfile(path) else None


def fallback_state_dir(root: str) -> str:
    """Per-user state dir for a project whose own .ralph/ cannot be written."""
    import hashlib

    import platformdirs

    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return os.path.join(platformdirs.user_state_dir("ralph-hooks"), "projects", digest)


# .ralph/.gitignore, written by the loop and by the first state write of any
# hook, so `git add -A` never commits prompts, logs or run state.
STATE_GITIGNORE = """\
# Written by ralph-hooks: run state (run.json, events, logs, hook sessions)
# stays out of git; plans, progress notes and prompts are committed.
*
!.gitignore
!*.md
!prd.json
!PRD-*/
!hooks/
!hooks/**
!pipelines/
!pipelines/**
"""


def ensure_state_gitignore(directory: str) -> None:
    """Write `<directory>/.gitignore` atomically unless one exists: a user's
    own is never overwritten (a hard link from a finished temp file fails when
    the name is taken, so a racing writer cannot clobber it either)."""
    path = os.path.join(directory, ".gitignore")
    if os.path.lexists(path):
        return
    tmp = os.path.join(directory, f"..gitignore.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            write_all(fd, STATE_GITIGNORE.encode("utf-8"))
        finally:
            os.close(fd)
        os.link(tmp, path)
    except OSError:
        pass  # exists already (a racing hook won), or a filesystem without links: the next call retries
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def state_dir(root: str) -> str:
    """`<root>/.ralph`, created on demand (with its .gitignore); a per-user
    fallback when it cannot be. $RALPH_STATE_DIR overrides it: a spawned child
    loop (ralph.lifecycle.spawn) keeps its run state, and its agent's hooks
    theirs, in its own directory."""
    override = os.environ.get("RALPH_STATE_DIR")
    if override:
        override = override if os.path.isabs(override) else os.path.join(root, override)
        os.makedirs(override, exist_ok=True)
        return override
    primary = os.path.join(root, STATE_DIR_NAME)
    try:
        os.makedirs(primary, exist_ok=True)
        if os.access(primary, os.W_OK | os.X_OK):
            ensure_state_gitignore(primary)
            return primary
    except OSError:
        pass
    fallback = fallback_state_dir(root)
    os.makedirs(fallback, exist_ok=True)
    return fallback


def append_line(path: str, line: str) -> None:
    """Append one line in a single O_APPEND write, so parallel hook processes
    never interleave inside a record."""
    data = line.encode("utf-8", "surrogateescape")
    if not data.endswith(b"\n"):
        data += b"\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def rotate_if_larger(path: str, max_bytes: int) -> None:
    """Keep an append-only log bounded: past max_bytes it becomes `path.1`
    (replacing the previous one) and appends start a fresh file."""
    try:
        if os.stat(path).st_size > max_bytes:
            os.replace(path, path + ".1")
    except OSError:
        pass


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def replace_or_discard(tmp: str | bytes, path: str | bytes) -> None:
    """Rename a finished temp file over `path`; on failure remove the temp file."""
    try:
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write(path: str, data: bytes | str, *, fsync: bool = True) -> None:
    """Write to a temp file beside `path`, fsync it, rename it over `path`.
    Readers see the old file or the new one, never a torn one."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        write_all(fd, data)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    replace_or_discard(tmp, path)
    if fsync:
        try:
            dfd = os.open(directory, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(dfd)
        except OSError:
            pass
        finally:
            os.close(dfd)


def read_lines(path: str, max_bytes: int = 16 * 1024 * 1024) -> list[str]:
    """The complete lines of an append-only file; a torn last line (a writer
    still at work, or one that died) is dropped. Missing file: no lines."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > max_bytes:
                f.seek(size - max_bytes)
                f.readline()  # skip the partial line we landed in
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return []
    if not data:
        return []
    lines = data.split(b"\n")
    lines.pop()  # after the last newline: empty, or a torn record
    return [line.decode("utf-8", "surrogateescape") for line in lines if line]


def read_json_object(path: str) -> dict | None:
    """A state file's JSON object; None when it is missing, unreadable, torn
    or not an object (every such file is written whole by atomic_write)."""
    from ralph import fastjson

    try:
        with open(path, encoding="utf-8") as f:
            data = fastjson.loads(f.read())
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def kill_group(pgid: int, sig: int) -> None:
    """Signal a process group; one already gone (or not ours) is no error."""
    try:
        os.killpg(pgid, sig)
    except OSError:
        pass


def pid_alive(pid: object) -> bool:
    """Is there a process with this pid (ours or another user's)?"""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
