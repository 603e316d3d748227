"""The time every loop record is stamped with: UTC, ISO 8601, to the second."""
from __future__ import annotations

import time


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
