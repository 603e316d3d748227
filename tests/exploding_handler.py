"""A handler that raises, to prove the dispatcher contains it."""
from __future__ import annotations


def handle(call: object) -> object:
    return 1 / 0
