"""Where a project's state lives, and the only two ways ralph writes files:
append one line with O_APPEND, or write a temp file and rename it over.
On the hook path, so its file work goes through ralph.fastos rather than os."""
from ralph import fastos

STATE_DIR_NAME = ".ralph"
CONFIG_FILE = "ralph.toml"


def project_root(cwd: str, environ: dict[str, str] | None = None) -> str:
    """$CLAUDE_PROJECT_DIR, else the git toplevel above cwd, else cwd.

    The toplevel is found by walking up to a `.git` entry (dir, or file for
    worktrees and submodules) instead of spawning git: this runs on every call.
    """
    env_dir = (fastos.environ() if environ is None else environ).get("CLAUDE_PROJECT_DIR")
    if env_dir and fastos.isdir(env_dir):
        return fastos.abspath(env_dir)
    here = fastos.abspath(cwd)
    probe = here
    while True:
        if fastos.exists(fastos.join(probe, ".git")):
            return probe
        parent = fastos.dirname(probe)
        if parent == probe:
            return here
        probe = parent


def config_path(root: str, environ: dict[str, str] | None = None) -> str | None:
    """The project's config file (`ralph.toml`, or $RALPH_CONFIG), None when
    there is none. Here, not in ralph.config, so the hot path can ask without
    importing the parser."""
    explicit = (fastos.environ() if environ is None else environ).get("RALPH_CONFIG")
    if explicit:
        return explicit
    path = fastos.join(root, CONFIG_FILE)
    return path if fastos.isfile(path) else None


def fallback_state_dir(root: str) -> str:
    """Per-user state dir for a project whose own .ralph/ cannot be written."""
    import hashlib

    import platformdirs

    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return fastos.join(platformdirs.user_state_dir("ralph-hooks"), "projects", digest)


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
    path = fastos.join(directory, ".gitignore")
    if fastos.lexists(path):
        return
    tmp = fastos.join(directory, f"..gitignore.{fastos.getpid()}.tmp")
    try:
        fd = fastos.open(tmp, fastos.O_WRONLY | fastos.O_CREAT | fastos.O_TRUNC, 0o644)
        try:
            write_all(fd, STATE_GITIGNORE.encode("utf-8"))
        finally:
            fastos.close(fd)
        fastos.link(tmp, path)
    except OSError:
        pass  # exists already (a racing hook won), or a filesystem without links: the next call retries
    finally:
        try:
            fastos.unlink(tmp)
        except OSError:
            pass


def state_dir(root: str) -> str:
    """`<root>/.ralph`, created on demand (with its .gitignore); a per-user
    fallback when it cannot be. $RALPH_STATE_DIR overrides it: a spawned child
    loop (ralph.lifecycle.spawn) keeps its run state, and its agent's hooks
    theirs, in its own directory."""
    override = fastos.environ().get("RALPH_STATE_DIR")
    if override:
        override = override if fastos.isabs(override) else fastos.join(root, override)
        fastos.makedirs(override, exist_ok=True)
        return override
    primary = fastos.join(root, STATE_DIR_NAME)
    try:
        fastos.makedirs(primary, exist_ok=True)
        if fastos.access(primary, fastos.W_OK | fastos.X_OK):
            ensure_state_gitignore(primary)
            return primary
    except OSError:
        pass
    fallback = fallback_state_dir(root)
    fastos.makedirs(fallback, exist_ok=True)
    return fallback


def append_line(path: str, line: str) -> None:
    """Append one line in a single O_APPEND write, so parallel hook processes
    never interleave inside a record."""
    data = line.encode("utf-8", "surrogateescape")
    if not data.endswith(b"\n"):
        data += b"\n"
    try:
        fd = fastos.open(path, fastos.O_WRONLY | fastos.O_APPEND | fastos.O_CREAT, 0o644)
    except FileNotFoundError:
        fastos.makedirs(fastos.dirname(path), exist_ok=True)
        fd = fastos.open(path, fastos.O_WRONLY | fastos.O_APPEND | fastos.O_CREAT, 0o644)
    try:
        fastos.write(fd, data)
    finally:
        fastos.close(fd)


def rotate_if_larger(path: str, max_bytes: int) -> None:
    """Keep an append-only log bounded: past max_bytes it becomes `path.1`
    (replacing the previous one) and appends start a fresh file."""
    try:
        if fastos.stat(path).st_size > max_bytes:
            fastos.replace(path, path + ".1")
    except OSError:
        pass


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[fastos.write(fd, view):]


def replace_or_discard(tmp: str | bytes, path: str | bytes) -> None:
    """Rename a finished temp file over `path`; on failure remove the temp file."""
    try:
        fastos.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise


def _discard(tmp: str | bytes) -> None:
    try:
        fastos.unlink(tmp)
    except OSError:
        pass


def atomic_write(path: str, data: bytes | str, *, fsync: bool = True) -> None:
    """Write to a temp file beside `path`, fsync it, rename it over `path`.
    Readers see the old file or the new one, never a torn one."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    directory = fastos.dirname(path) or "."
    fastos.makedirs(directory, exist_ok=True)
    tmp = fastos.join(directory, f".{fastos.basename(path)}.{fastos.getpid()}.tmp")
    fd = fastos.open(tmp, fastos.O_WRONLY | fastos.O_CREAT | fastos.O_TRUNC, 0o644)
    try:
        try:
            write_all(fd, data)
            if fsync:
                fastos.fsync(fd)
        finally:
            fastos.close(fd)
    except BaseException:
        _discard(tmp)  # a failed write (a full disk) leaves no temp file
        raise
    replace_or_discard(tmp, path)
    if fsync:
        try:
            dfd = fastos.open(directory, fastos.O_RDONLY)
        except OSError:
            return
        try:
            fastos.fsync(dfd)
        except OSError:
            pass
        finally:
            fastos.close(dfd)


def read_lines(path: str, max_bytes: int = 16 * 1024 * 1024) -> list[str]:
    """The complete lines of an append-only file; a torn last line (a writer
    still at work, or one that died) is dropped. Missing file: no lines."""
    try:
        with open(path, "rb") as f:
            size = fastos.fstat(f.fileno()).st_size
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
        fastos.killpg(pgid, sig)
    except OSError:
        pass


def pid_alive(pid: object) -> bool:
    """Is there a process with this pid (ours or another user's)?"""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        fastos.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
