"""A handler that never returns, to prove the PreToolUse deadline answers."""
from __future__ import annotations

import time


def handle(call: object) -> object:
    while True:
        time.sleep(1)
