"""`ralph explain "<command>"`: how the push/merge guard judges a shell command.

Prints the decision, the reason the agent would see, the evidence, and the
rule id that decided it, and the
trace (each simple command the guard judged, with where it was nested and
which rule applied). Uses the [guard] table of the project's ralph.toml
(found from the current directory, or --config FILE).

Exit status: 0 allowed, 1 blocked, 2 usage or config error.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from ralph.config.reading import load_section
from ralph.config.schema import ConfigError
from ralph.rules.guard.judge import judge_command
from ralph.rules.guard.policy import GuardPolicy
from ralph.state.locations import project_root


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ralph explain",
        description="Show how the push/merge guard judges a shell command (as the Bash tool would run it).",
    )
    parser.add_argument("command", nargs="*", help="the command; quote it as one argument, or use - to read it from stdin")
    parser.add_argument("--config", help="ralph.toml to take [guard] from (default: the project's)")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_usage(sys.stderr)
        sys.stderr.write("ralph explain: give the command to judge, e.g. ralph explain \"git push origin main\"\n")
        return 2
    command = sys.stdin.read() if args.command == ["-"] else " ".join(args.command)

    policy = None
    try:
        environ = dict(os.environ, RALPH_CONFIG=args.config) if args.config else os.environ
        policy = GuardPolicy.from_values(load_section(project_root(os.getcwd()), "guard", environ))
    except (ConfigError, OSError) as e:
        sys.stderr.write(f"ralph explain: {e}\n")
        return 2

    verdict = judge_command(command, policy)
    if args.json:
        print(json.dumps({"blocked": verdict.blocked, "reason": verdict.reason, "evidence": verdict.evidence,
                          "rule_id": verdict.rule_id, "trace": verdict.trace}, indent=2, ensure_ascii=False))
        return 1 if verdict.blocked else 0
    print(f"decision: {'BLOCK (PreToolUse deny)' if verdict.blocked else 'allow'}")
    print(f"rule:     {verdict.rule_id}")
    if verdict.reason:
        print(f"reason:   {verdict.reason}")
    for item in verdict.evidence:
        print(f"evidence: {item}")
    print("trace:")
    for line in verdict.trace or ["(no command that runs a program)"]:
        print(f"  {line}")
    return 1 if verdict.blocked else 0
