"""The only two ways ralph writes files: append one line with O_APPEND, or
write a temp file and rename it over; and the matching readers."""
import os

from ralph import fastjson


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
        _discard(tmp)
        raise


def _discard(tmp: str | bytes) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def atomic_write(path: str, data: bytes | str, *, fsync: bool = True, mode: int = 0o644) -> None:
    """Write to a temp file beside `path`, fsync it, rename it over `path`.
    Readers see the old file or the new one, never a torn one. `mode`: the
    new file's permissions (0o600 for one only its owner may read), which it
    has from the start."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        try:
            write_all(fd, data)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        _discard(tmp)  # a failed write (a full disk) leaves no temp file
        raise
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
    try:
        with open(path, encoding="utf-8") as f:
            data = fastjson.loads(f.read())
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None
