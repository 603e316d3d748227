# `python -m ralph` and the PyInstaller binary's entry (build.spec). Hook
# subcommands run on every tool call: like bin/ralph, they go straight to
# ralph.hook, without ralph.cli, and leave with os._exit once answered.
import sys

from ralph.hook import SUBCOMMANDS

if len(sys.argv) == 2 and sys.argv[1] in SUBCOMMANDS:
    from ralph.hook import main

    code = main(SUBCOMMANDS[sys.argv[1]])
    # The answer went straight to fd 1 and the call is logged; tearing the
    # interpreter down would only cost time.
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(code)

from ralph.cli import main  # noqa: E402

sys.exit(main())
