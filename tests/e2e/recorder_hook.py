"""A trivial hook command for testing the harness itself, independent of ralph.

    python recorder_hook.py LOG [REPLY_JSON]

Appends the hook's stdin payload (plus a few env vars) as one JSON line to LOG
and prints REPLY_JSON (default `{}`).
"""
from __future__ import annotations

import json
import os
import sys

ENV_KEYS = ("CLAUDE_PROJECT_DIR", "HOME", "CLAUDE_CONFIG_DIR", "PATH")


def main(argv: list[str]) -> int:
    raw = sys.stdin.read()
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = {"unparsable": raw[:2000]}
    entry = {"payload": payload, "env": {k: os.environ.get(k) for k in ENV_KEYS}}
    with open(argv[0], "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
    sys.stdout.write(argv[1] if len(argv) > 1 else "{}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
