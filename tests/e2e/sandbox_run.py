"""One bounded run: the scripted API server plus one command, in one process.

The harness starts this script inside `unshare -n` (loopback only, brought up
by the wrapper) so that the server and the client share a network namespace
and nothing can leave the machine; without unshare it runs the same way on
the host's loopback. Usage:

    python tests/e2e/sandbox_run.py SPEC.json

SPEC.json: {"script": {"turns": [...]} | {"sessions": [[...], ...]},
            "command": [argv...], "cwd": str, "env": {str: str},
            "timeout": seconds, "record": path, "stdout": path, "stderr": path,
            "result": path}
The command gets env plus ANTHROPIC_BASE_URL=<server url>. It runs in its own
process group; at `timeout` the group gets SIGTERM, then SIGKILL 3 s later.
The result file gets {"exit_code", "timed_out", "duration", "url", "error"}.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from api_server import ScriptedServer  # noqa: E402 - runs as a script, beside its sibling

KILL_GRACE_SECONDS = 3.0
SERVER_GRACE_SECONDS = 15.0


def kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run(spec: dict) -> dict:
    timeout = float(spec["timeout"])
    server = ScriptedServer(**spec["script"], lifetime=timeout + SERVER_GRACE_SECONDS, record_path=spec["record"]).start()
    env = dict(spec["env"])
    env["ANTHROPIC_BASE_URL"] = server.url
    outcome = {"exit_code": None, "timed_out": False, "duration": 0.0, "url": server.url, "error": None}
    started = time.monotonic()
    proc = None
    try:
        with open(spec["stdout"], "wb") as out, open(spec["stderr"], "wb") as err:
            proc = subprocess.Popen(
                spec["command"], cwd=spec["cwd"], env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
            )

            def forward_term(signum: int, frame: object) -> None:
                kill_group(proc.pid, signal.SIGKILL)
                raise SystemExit(143)

            signal.signal(signal.SIGTERM, forward_term)
            try:
                outcome["exit_code"] = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                outcome["timed_out"] = True
                kill_group(proc.pid, signal.SIGTERM)
                try:
                    outcome["exit_code"] = proc.wait(timeout=KILL_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    kill_group(proc.pid, signal.SIGKILL)
                    outcome["exit_code"] = proc.wait()
            # Anything the command left running in its group (background shells) goes too.
            kill_group(proc.pid, signal.SIGKILL)
    except OSError as e:
        outcome["error"] = f"could not start {spec['command'][0]!r}: {e}"
    finally:
        outcome["duration"] = round(time.monotonic() - started, 3)
        server.stop()
    return outcome


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write(__doc__ or "")
        return 2
    with open(argv[0], encoding="utf-8") as f:
        spec = json.load(f)
    outcome = run(spec)
    tmp = spec["result"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(outcome, f)
    os.replace(tmp, spec["result"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
