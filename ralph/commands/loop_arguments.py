"""The full command line of `ralph-loop`, read by argparse: option values,
abbreviations, --help and usage errors. A command line of on/off flags only
never comes here (ralph.commands.loop.plain_flags reads it without argparse; it hands
this module its table of options, OPTIONS)."""
from __future__ import annotations

import argparse


DESCRIPTION = """\
Run a plan's stories one by one, each in a fresh agent process (default:
claude -p --dangerously-skip-permissions, prompt on stdin), with the hooks
enforcing the rules. A story is done when the agent marks it done, the verify
command passes, and the loop has committed it as `feat(<id>): <title>`.
"""
EPILOG = """\
exit codes: 0 complete, 1 error, 2 bad usage/config/plan, 3 max_iterations,
4 blocked, 5 no_changes, 6 hook_abort, 7 budget, 8 rate_limited, 130 SIGINT,
143 SIGTERM.
config: [loop] in ralph.toml (see docs/loop.md).
"""


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def amount(text: str) -> float:
    """A sum of money: a number, not negative."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


# the options table names each value's type; these read them
TYPES = {"positive_int": positive_int, "float": float, "int": int, "amount": amount}


def add_options(parser: argparse.ArgumentParser, table: tuple) -> argparse.ArgumentParser:
    for flags, options in table:
        if "type" in options:
            options = dict(options, type=TYPES[options["type"]])
        parser.add_argument(*flags, **options)
    return parser


def parse(argv: list[str], table: tuple) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ralph-loop", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    return add_options(parser, table).parse_args(argv)
