"""Skip policy for tests that need Claude Code's Bash sandbox (bubblewrap + socat):
skipped loudly when it cannot run here, a failure under CI=true (where
scripts/test installed bubblewrap and socat)."""
from __future__ import annotations

import functools
import os
import sys

import pytest


@functools.lru_cache(maxsize=1)
def _probe() -> tuple[bool, str]:
    from ralph.sandbox import probe

    return probe()


def require_sandbox() -> str:
    ok, message = _probe()
    if ok:
        return message
    if os.environ.get("CI", "").lower() == "true" and sys.platform.startswith("linux"):
        pytest.fail(f"CI: the Bash sandbox cannot run though scripts/test installs bubblewrap and socat: {message}", pytrace=False)
    text = f"SANDBOX SKIPPED: Claude Code's Bash sandbox cannot run here: {message}"
    sys.stderr.write(f"\n*** {text}\n")
    pytest.skip(text)


@pytest.fixture
def sandbox_available() -> str:
    return require_sandbox()
