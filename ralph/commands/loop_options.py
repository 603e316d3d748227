"""The options of `ralph-loop`, defined once, and the reading of a command line
of on/off flags only without argparse (ralph.commands.loop_arguments reads
every other command line from the same table)."""
from __future__ import annotations

# The options, defined once: (flags, argparse.add_argument keywords), with each
# value's type named ("positive_int", "float", "int", "amount": ralph.commands.loop_arguments.TYPES).
OPTIONS: tuple[tuple[tuple[str, ...], dict], ...] = (
    (("--plan",), {"help": "plan file (plan.md or prd.json); default: .ralph/plan.md, .ralph/prd.json, or the newest .ralph/PRD-N/"}),
    (("--prompt",), {"help": "prompt template for build iterations (default: the packaged PROMPT.md)"}),
    (("--mode",), {"choices": ("build", "plan"), "help": "run one stage of this mode instead of the configured pipeline"}),
    (("--max-iterations",), {"type": "positive_int", "metavar": "N", "help": "stop after N iterations in all"}),
    (("--once",), {"action": "store_true", "help": "run one iteration, then stop"}),
    (("--dry-run",), {"action": "store_true", "help": "print the next story and its full prompt, run nothing"}),
    (("--agent",), {"metavar": "CMD", "help": "agent command (run by /bin/sh; the prompt arrives on stdin)"}),
    (("--verify",), {"metavar": "CMD", "help": "verify command that must pass before a story counts as done"}),
    (("--timeout",), {"type": "float", "metavar": "SECONDS", "help": "agent timeout per iteration"}),
    (("--no-progress-limit",), {"type": "int", "metavar": "N", "help": "stop after N iterations without progress (0: never)"}),
    (("--max-cost-usd",), {"type": "amount", "metavar": "USD", "help": "stop (finish budget, exit 7) once the agents cost this much (the client's estimate)"}),
    (("--max-tokens",), {"type": "positive_int", "metavar": "N", "help": "stop (finish budget, exit 7) once the agents used N input + output tokens"}),
    (("-C", "--directory"), {"metavar": "DIR", "help": "project directory (default: the current one)"}),
    (("-q", "--quiet"), {"action": "store_true", "help": "do not stream the agent's output to the terminal"}),
    (("--allow-dirty",), {"action": "store_true", "help": "start even with uncommitted changes outside .ralph/ (they may end up in the agent's commits)"}),
)



class Flags:
    """An argparse.Namespace without argparse: the options as attributes."""

    def __init__(self, values: dict) -> None:
        self.__dict__.update(values)


def _dest(flags: tuple[str, ...]) -> str:
    """argparse's attribute name for an option: its first long flag."""
    long = next(flag for flag in flags if flag.startswith("--"))
    return long[2:].replace("-", "_")


def plain_flags(argv: list[str]) -> Flags | None:
    """What argparse returns for a command line of on/off flags only, each
    written out in full (`--dry-run`, `-q --once`, none at all); None for
    anything else (values, abbreviations, --help, mistakes): argparse reads
    those. Its import and help formatter cost `ralph-loop --dry-run` about
    as much as all the rest of its work."""
    switches = {flag: _dest(flags) for flags, options in OPTIONS if options.get("action") == "store_true" for flag in flags}
    if not all(arg in switches for arg in argv):
        return None
    values = {_dest(flags): False if options.get("action") == "store_true" else options.get("default") for flags, options in OPTIONS}
    for arg in argv:
        values[switches[arg]] = True
    return Flags(values)
