# `python -m ralph` and the PyInstaller binary's entry (build.spec). Hook
# subcommands run on every tool call: like bin/ralph, they go straight to
# ralph.claude.dispatch, without ralph.cli, and leave with os._exit once answered.
import sys

if getattr(sys, "frozen", False):
    # The bootloader points LD_LIBRARY_PATH at the bundle's libraries and
    # leaves its own state in _PYI_* variables. This process has loaded what
    # it needs (the dynamic loader read the path at start); what it starts
    # (git, the agent, user hooks, another ralph binary) must get the
    # system's libraries and start afresh (PyInstaller's documented recipe).
    import os

    _original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if _original is None:
        os.environ.pop("LD_LIBRARY_PATH", None)
    else:
        os.environ["LD_LIBRARY_PATH"] = _original
    os.environ["PYINSTALLER_RESET_ENVIRONMENT"] = "1"

from ralph.claude.dispatch import SUBCOMMANDS, answer_and_exit  # noqa: E402

if len(sys.argv) == 2 and sys.argv[1] in SUBCOMMANDS:
    answer_and_exit(SUBCOMMANDS[sys.argv[1]])

from ralph.cli import main  # noqa: E402

sys.exit(main())
