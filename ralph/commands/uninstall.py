"""`ralph uninstall`: see ralph.commands.install (one module owns the settings merge)."""
from __future__ import annotations


def main(argv: list[str]) -> int:
    from ralph.commands.install import uninstall_main

    return uninstall_main(argv)
