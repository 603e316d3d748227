"""The files a session has read (or written), for read-before-edit.

`.ralph/sessions/<session>/reads.log`, append-only, one record per line:
    <unix time> <dev> <ino> <ctime ns> <json string: canonical path>
(the time and the ctime tell a reused inode from the file that was read; see
ralph.rules.read_before_edit). Lines from before generations, without the
ctime, still count for their path, never for their inode.
Parallel hook processes append with single O_APPEND writes, so nothing is
lost and no lock is needed. A rollback writes `.ralph/reads_epoch` (temp file
+ rename): records older than it no longer count, in every session.
"""
import os
import sys
import time

from ralph import fastjson
from ralph.rules.read_before_edit import FileIdentity
from ralph.state.files import append_line, atomic_write, read_lines

EPOCH_FILE = "reads_epoch"


def session_dir(state_dir: str, session_id: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:100].lstrip(".")
    if safe != session_id or not safe:
        # rare path, off the hook's start-up (hashlib loads OpenSSL): a session id that is not a plain name
        import hashlib

        safe = (safe[:60] or "session") + "-" + hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return os.path.join(state_dir, "sessions", safe)


def case_insensitive_dir(directory: str) -> bool:
    """Does this directory's filesystem fold case? Probes with the directory's own name."""
    base = os.path.basename(directory.rstrip(os.sep))
    flipped = base.swapcase()
    if not base or flipped == base:
        return False
    try:
        a = os.stat(directory)
        b = os.stat(os.path.join(os.path.dirname(directory.rstrip(os.sep)), flipped))
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def identify(path: str, cwd: str) -> FileIdentity:
    """Resolve a tool's path the way the kernel will: relative to cwd, symlinks
    followed before `..` is applied (os.path.realpath walks component by component)."""
    full = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
    try:
        st = os.stat(full)
    except OSError:
        return FileIdentity(full)
    return FileIdentity(full, st.st_dev, st.st_ino, True, ctime=st.st_ctime_ns)


_statx: list = []  # [libc statx function or None], looked up once per process
STATX_BTIME = 0x800
AT_FDCWD = -100
STATX_BUFFER = 256  # struct statx is 256 bytes
BTIME_OFFSET = 80  # stx_btime: struct statx_timestamp {s64 tv_sec; u32 tv_nsec; s32 pad}


def birth_time_ns(path: str, st: os.stat_result | None = None) -> int:
    """The file's birth time in ns, 0 when the platform or filesystem has none.
    macOS and BSD report it in stat; Linux only through statx(2), which
    Python before 3.15 does not wrap, so it is called through ctypes."""
    if st is None:
        try:
            st = os.stat(path)
        except OSError:
            return 0
    birth = getattr(st, "st_birthtime_ns", None)
    if birth is None and hasattr(st, "st_birthtime"):
        birth = int(st.st_birthtime * 1e9)  # type: ignore[attr-defined]
    if birth:
        return int(birth)
    if not _statx:
        try:
            # rare path, off the hook's start-up (ctypes costs more than an Edit call): a file read under another name
            import ctypes

            function = ctypes.CDLL(None, use_errno=True).statx
            function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_char_p)
            _statx.append((function, ctypes))
        except (ImportError, OSError, AttributeError):
            _statx.append(None)
    if _statx[0] is None:
        return 0
    function, ctypes = _statx[0]
    buffer = ctypes.create_string_buffer(STATX_BUFFER)
    if function(AT_FDCWD, os.fsencode(path), 0, STATX_BTIME, buffer) != 0:
        return 0
    raw = buffer.raw
    order = sys.byteorder
    if not int.from_bytes(raw[0:4], order) & STATX_BTIME:  # stx_mask: what the filesystem filled in
        return 0
    seconds = int.from_bytes(raw[BTIME_OFFSET:BTIME_OFFSET + 8], order, signed=True)
    nanos = int.from_bytes(raw[BTIME_OFFSET + 8:BTIME_OFFSET + 12], order)
    return seconds * 1_000_000_000 + nanos


def record(state_dir: str, session_id: str, identity: FileIdentity) -> None:
    line = f"{time.time():.6f} {identity.dev} {identity.ino} {identity.ctime} {fastjson.dumps(identity.path)}"
    append_line(os.path.join(session_dir(state_dir, session_id), "reads.log"), line)


def invalidate_all(state_dir: str) -> None:
    """Files changed under every session (a rollback): earlier reads stop counting."""
    atomic_write(os.path.join(state_dir, EPOCH_FILE), f"{time.time():.6f}\n", fsync=False)


def _epoch(state_dir: str) -> float:
    try:
        with open(os.path.join(state_dir, EPOCH_FILE), encoding="ascii", errors="replace") as f:
            return float(f.read(64).strip() or 0)
    except (OSError, ValueError):
        return 0.0


def known_files(state_dir: str, session_id: str, problems: list[str] | None = None) -> list[FileIdentity]:
    epoch = _epoch(state_dir)
    found: list[FileIdentity] = []
    bad = 0
    for line in read_lines(os.path.join(session_dir(state_dir, session_id), "reads.log")):
        parts = line.split(" ", 4)
        try:
            stamp = float(parts[0])
            if parts[3].startswith('"'):  # a record from before generations: its path only
                identity = FileIdentity(fastjson.loads(line.split(" ", 3)[3]), int(parts[1]), int(parts[2]), True)
            else:
                identity = FileIdentity(fastjson.loads(parts[4]), int(parts[1]), int(parts[2]), True,
                                        ctime=int(parts[3]), read_at=int(parts[0].replace(".", "")) * 1000)
        except (ValueError, IndexError):
            bad += 1
            continue
        if stamp >= epoch and isinstance(identity.path, str):
            found.append(identity)
    if bad and problems is not None:
        problems.append(f"reads.log: skipped {bad} corrupt line(s)")
    return found
