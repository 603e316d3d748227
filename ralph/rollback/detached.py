"""A rollback that answers in time whatever it costs: for hooks, whose
client kills them at their timeout.

The rollback lock is taken first, then the work (the rollback and what is
recorded about it) runs in a forked child in its own session, with no tie to
the hook's stdin, stdout or stderr, so neither the client's kill nor the
hook's exit stops it. The hook waits for its result up to `wait` seconds;
past that it answers that the rollback goes on in the background, and the
child finishes and records it alone. The child holds the lock (inherited
from the hook) until it is done, so the loop, which waits for the lock
before judging an iteration, never judges a tree being reset; a child killed
half-way leaves its journal, and the next rollback, restore or loop start
finishes its work (ralph.rollback.journal)."""
from __future__ import annotations

import json
import os
import select
import signal
import time
from collections.abc import Callable

from ralph.rollback.git import Repo
from ralph.rollback.kept import KeptFiles
from ralph.rollback.lock import RollbackLock
from ralph.rollback.restore import RollbackResult, save_and_restore

WAIT_ENV = "RALPH_ROLLBACK_WAIT_SECONDS"


def wait_seconds(hook_timeout: float, environ: dict) -> float:
    """How long a hook waits for its rollback: half its timeout (the rest
    is for what the hook did before and answering), or $RALPH_ROLLBACK_WAIT_SECONDS."""
    value = environ.get(WAIT_ENV, "")
    try:
        return max(0.0, float(value)) if value else hook_timeout / 2
    except ValueError:
        return hook_timeout / 2


def roll_back_within(root: str, checkpoint: str, *, story: str, iteration: int, trigger: str, run_id: str,
                     wait: float, record: Callable[[RollbackResult], list[str]],
                     kept: KeptFiles | None = None) -> tuple[RollbackResult, list[str]]:
    """save_and_restore, then record(result) (what the hook writes about it;
    its problems are returned), in a detached child; the result and the
    problems when it ends within `wait` seconds, else a result with
    pending=True. Never raises."""
    deadline = time.monotonic() + wait
    try:
        repo = Repo(root)
        lock = RollbackLock(repo, f"a rollback of {story} (iteration {iteration}), started by a hook", wait=wait).acquire()
    except Exception as e:  # noqa: BLE001 - reported to the agent instead
        return RollbackResult(checkpoint=checkpoint, message=f"nothing was saved or reset: {e}"), []
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        try:
            result = save_and_restore(root, checkpoint, story=story, iteration=iteration, trigger=trigger, run_id=run_id, lock=lock,
                                     kept=kept)
            return result, record(result)
        finally:
            lock.release()
    if pid == 0:
        os.close(read_end)
        _child(write_end, lambda: save_and_restore(root, checkpoint, story=story, iteration=iteration, trigger=trigger,
                                                   run_id=run_id, lock=lock, kept=kept), record, lock)
    os.close(write_end)
    lock.detach()  # the child holds it now
    data = _read_until(read_end, deadline)
    os.close(read_end)
    if data is None:
        return RollbackResult(checkpoint=checkpoint, pending=True, message=(
            f"the rollback takes longer than this hook may wait ({wait:g}s): it goes on in the background (pid {pid}), "
            f"saving the work to refs/ralph/rollbacks/ and resetting the tree to checkpoint {checkpoint[:12]}; "
            f"{os.path.join(repo.git_dir, 'ralph-rollback.lock')} exists until it is done")), []
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    try:
        done = json.loads(data)
        fields = done["result"]
        return RollbackResult(**{k: v for k, v in fields.items() if k in RollbackResult.__slots__}), list(done.get("problems", []))
    except (ValueError, KeyError, TypeError) as e:
        return RollbackResult(checkpoint=checkpoint, message=f"the rollback process ended without a readable result ({e})"), []


def _child(write_end: int, work: Callable[[], RollbackResult], record: Callable[[RollbackResult], list[str]],
           lock: RollbackLock) -> None:
    """In the forked child: leave the hook's session and streams, do the
    work and record it, let go of the lock (the loop waits for it before
    judging: by then the records are there), send the result, exit."""
    code = 0
    try:
        os.setsid()
        signal.setitimer(signal.ITIMER_REAL, 0)  # no deadline the hook armed may cut a reset short
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.close(devnull)
        result = work()
        try:
            problems = record(result)
        except Exception as e:  # noqa: BLE001
            problems = [f"could not record the rollback: {type(e).__name__}: {e}"]
        lock.release()
        payload = json.dumps({"result": result.to_dict(), "problems": problems}).encode()
        try:
            while payload:
                payload = payload[os.write(write_end, payload):]
        except OSError:
            pass  # the hook stopped waiting: it is recorded anyway
    except BaseException:  # noqa: BLE001 - nothing may escape into the hook's code after fork
        code = 1
    finally:
        os._exit(code)


def _read_until(fd: int, deadline: float) -> bytes | None:
    """Everything the child writes until it closes its end; None when the deadline comes first."""
    chunks = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
