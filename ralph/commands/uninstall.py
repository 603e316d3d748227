"""`ralph uninstall`: see ralph.commands.install (one module owns the settings merge)."""
from __future__ import annotations

from ralph.commands.install import uninstall_main


def main(argv: list[str]) -> int:
    return uninstall_main(argv)
