"""Process groups and liveness."""
import os


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
