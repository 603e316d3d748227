"""The command line. Hook subcommands (ralph.claude.protocol.SUBCOMMANDS) go
straight to ralph.claude.dispatch, the hot path (bin/ralph sends them there
without even importing this module); every other command's module is imported
from COMMANDS only when asked for, so a hook call pays for nothing it does not
use (no argparse, no loop code)."""
import os
import sys

from ralph import __version__
from ralph.plugins import load

# a hook subcommand run through this module (python -m ralph, the binary): the
# names of the hook subcommands, and the one entry of a hook call
HOOK_SUBCOMMANDS = "ralph.claude.protocol:SUBCOMMANDS"
DISPATCH = "ralph.claude.dispatch"

# command -> module with a `main(argv: list[str]) -> int`
COMMANDS = {
    "demo": "ralph.commands.demo",
    "explain": "ralph.commands.explain",
    "classify": "ralph.commands.classify",
    "rollbacks": "ralph.commands.rollbacks",
    "loop": "ralph.commands.loop",
    "status": "ralph.commands.status",
    "report": "ralph.commands.report",
    "install": "ralph.commands.install",
    "uninstall": "ralph.commands.uninstall",
    "doctor": "ralph.commands.doctor",
    "sandbox": "ralph.commands.sandbox",
    "init": "ralph.commands.init",
    "hooks": "ralph.commands.hooks",
    "mcp": "ralph.commands.mcp",
}

USAGE = """\
usage: ralph <command> [args]

hook commands (read one Claude Code hook payload on stdin, print one JSON object):
  pre-tool            PreToolUse: read-before-edit, push/merge guard
  post-tool           PostToolUse: record reads and edits, judge test runs
  post-tool-failure   PostToolUseFailure: judge failed test runs
  prompt              UserPromptSubmit: log the prompt, inject the current story
  stop                Stop: refuse to stop while the loop's story is unfinished
  (the Claude event names PreToolUse, PostToolUse, ... work as aliases)

other commands:
  demo                replay real Claude Code payloads through every handler
  explain CMD         show how the push/merge guard judges a shell command
  classify            judge the test run in one hook payload read on stdin
  rollbacks           list or restore work saved before a rollback
  loop                run the plan's stories unattended (same as ralph-loop)
  status              stories done, current run, last iterations, rollbacks
  report [RUN_ID]     a run's report: .ralph/runs/<run>/report.html (--format md|json prints it, --open)
  install             merge ralph's hooks into Claude Code's settings (--user, --project, --local, --plugin DIR)
  uninstall           remove exactly ralph's hooks from a settings file
  doctor              check the whole setup: settings files, hooks, round trips, ralph.toml, state dir
  sandbox print|explain|check
                      Claude Code's Bash sandbox settings ralph wants, why, and a probe
  init                scaffold .ralph/ (plan, prompt, hooks) and a commented ralph.toml
  hooks list          ralph-loop's lifecycle hooks per point, with source and state
  hooks test POINT    fire one hook point with sample context and show what ran
  mcp                 serve the agent's tools to Claude Code over stdio (complete_story, report_blocked,
                      request_merge, story_status); needs ralph-hooks[mcp]
  version             print the version
"""


HOOK_HELP = """\
usage: ralph {name}

A Claude Code hook command ({event}): reads one hook payload (JSON) on stdin,
prints exactly one JSON object on stdout and exits 0, whatever it is fed.
Claude Code runs it; `ralph install` wires it. To try it by hand:
  ralph demo                  replays real payloads through every handler
  ralph {name} < payload.json
"""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if argv is None and sys.argv and sys.argv[0].rsplit("/", 1)[-1] == "ralph-loop":
        # the binary (or bin/ralph) reached through a `ralph-loop` symlink
        return loop_main()
    name = args[0] if args else ""
    event = load(HOOK_SUBCOMMANDS).get(name)
    if event is not None:
        if "-h" in args[1:] or "--help" in args[1:]:
            # help, not a hook run: reads nothing, writes no state
            sys.stdout.write(HOOK_HELP.format(name=name, event=event or "any event; the payload names it"))
            return 0
        return load(DISPATCH).main(event)
    if name in COMMANDS:
        try:
            return command_module(name).main(args[1:])
        except BrokenPipeError:
            return quiet_broken_pipe()
    if name in ("version", "--version", "-V"):
        print(f"ralph-hooks {__version__}")
        return 0
    if name in ("", "help", "-h", "--help"):
        sys.stdout.write(USAGE)
        return 0 if name else 2
    sys.stderr.write(f"ralph: unknown command {name!r}\n\n{USAGE}")
    return 2


def command_module(name: str) -> object:
    """The module of a command in COMMANDS, imported now."""
    return load(COMMANDS[name])


def quiet_broken_pipe() -> int:
    """`ralph demo | head`: the reader left. End quietly, as a program killed
    by SIGPIPE would (exit 141), without a traceback or a second error when
    Python flushes stdout at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141


def loop_main() -> int:
    """`ralph-loop` (bin/ralph under that name)."""
    try:
        return command_module("loop").main(sys.argv[1:])
    except BrokenPipeError:  # `ralph-loop --dry-run | head`
        return quiet_broken_pipe()
