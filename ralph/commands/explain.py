"""`ralph explain "<command>"`: how the guard judges a shell command.

Prints the decision, the reason the agent would see, the evidence, and the
rule id that decided it, and the trace (each simple command the guard
judged, with where it was nested and which rule applied). For a command
that destroys work the guard saves first, it names what is saved and the
command that restores it: `ralph rollbacks restore <id>` with the id of the
snapshot the hook saved for this command when there is one (the latest),
and kept refs with theirs. The judgement is the hook's: the [guard] table of
the project's ralph.toml (found from the current directory, or --config
FILE), the project's files, HOME and TMPDIR as the hook sees them.
`--skill-line` judges the text as a skill's or slash command's inline shell
line (`!`cmd``, the PreSkillShellCommand hook): the same rules, and a line the
client runs in PowerShell (`--powershell`) as `pwsh -Command <line>`.

Exit status: 0 allowed (saved first or not), 1 blocked, 2 usage or config error.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from ralph.claude.bash_guard import surroundings
from ralph.claude.bash_save import KEPT_PREFIX, command_tag, snapshot_subject
from ralph.claude.handlers.skill_shell import single_quoted
from ralph.config.reading import load_section
from ralph.config.schema import ConfigError
from ralph.redaction import redact
from ralph.rollback.git import Repo, RollbackError
from ralph.rollback.snapshots import list_snapshots, one_line
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
    parser.add_argument("--skill-line", action="store_true",
                        help="judge it as a skill's or slash command's inline shell line (the PreSkillShellCommand hook)")
    parser.add_argument("--powershell", action="store_true", help="with --skill-line: a line the client runs in PowerShell")
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_usage(sys.stderr)
        sys.stderr.write("ralph explain: give the command to judge, e.g. ralph explain \"git push origin main\"\n")
        return 2
    command = sys.stdin.read() if args.command == ["-"] else " ".join(args.command)

    policy = None
    cwd = os.getcwd()
    root = project_root(cwd)
    try:
        environ = dict(os.environ, RALPH_CONFIG=args.config) if args.config else os.environ
        policy = GuardPolicy.from_values(load_section(root, "guard", environ))
    except (ConfigError, OSError) as e:
        sys.stderr.write(f"ralph explain: {e}\n")
        return 2

    if args.powershell and not args.skill_line:
        parser.error("--powershell goes with --skill-line (a Bash tool call runs in bash)")
    event = "PreSkillShellCommand" if args.skill_line else "PreToolUse"
    judged = f"pwsh -NoProfile -Command {single_quoted(command)}" if args.powershell else command
    verdict = judge_command(judged, policy, cwd=cwd, around=surroundings(root, cwd, dict(os.environ)))
    restore = restore_commands(root, command, verdict.saves) if verdict.saves else []
    if args.json:
        print(json.dumps({"event": event, "blocked": verdict.blocked, "reason": verdict.reason, "evidence": verdict.evidence,
                          "rule_id": verdict.rule_id, "saves": [{"kind": kind, "what": what, "rule_id": rule}
                                                                for kind, _, rule, what in verdict.saves],
                          "restore": restore, "trace": verdict.trace}, indent=2, ensure_ascii=False))
        return 1 if verdict.blocked else 0
    saved_note = "PreToolUse additionalContext" if event == "PreToolUse" else "PreSkillShellCommand systemMessage"
    decision = f"BLOCK ({event} deny)" if verdict.blocked else f"allow after saving ({saved_note})" if verdict.saves else "allow"
    print(f"decision: {decision}")
    print(f"rule:     {verdict.rule_id}")
    if args.skill_line:
        shell = "PowerShell, judged as `pwsh -Command <line>`" if args.powershell else "Bash"
        print(f"hook:     {event}: a skill's or slash command's inline shell line ({shell}), judged as a Bash tool call is")
    if verdict.reason and verdict.blocked:
        print(f"reason:   {verdict.reason}")
    for item in verdict.evidence:
        print(f"{'evidence' if verdict.blocked else 'saves'}: {item}")
    for line in restore:
        print(f"restore:  {line}")
    print("trace:")
    for line in verdict.trace or ["(no command that runs a program)"]:
        print(f"  {line}")
    return 1 if verdict.blocked else 0


def restore_commands(root: str, command: str, saves: tuple) -> list[str]:
    """How to bring back what the hook saved before this command: the latest
    guard snapshot made for it and the refs it kept, or what the hook will
    save when it has not run yet."""
    lines = []
    if any(kind == "tree" for kind, _, _, _ in saves):
        wanted = one_line(redact(snapshot_subject(command)), 200)
        try:
            found = [s for s in list_snapshots(root) if s.fields.get("Kind") == "guard" and s.subject == wanted]
        except RollbackError:
            found = []
        if found:
            lines.append(f"ralph rollbacks restore {found[-1].id}   (saved {found[-1].to_dict()['time']} before this command ran)")
        else:
            lines.append("the hook saves a snapshot before this command runs and names it in its message; bring it back with "
                         "`ralph rollbacks restore <id>` (`ralph rollbacks list` shows the ids)")
    if any(kind != "tree" for kind, _, _, _ in saves):
        kept = kept_refs(root, command_tag(command))
        lines.extend(kept or ["the hook keeps the branch, tag or stash entry under refs/ralph/kept/ before this command runs and "
                              "names the command that brings it back"])
    return lines


def kept_refs(root: str, tag: str) -> list[str]:
    """The refs the hook kept the last time it saved before this command
    (refs/ralph/kept/<time>-<tag>-<sha>/...), as the commands that restore them."""
    try:
        listing = Repo(root).text(["for-each-ref", "--format=%(objectname) %(refname)", KEPT_PREFIX])
    except RollbackError:
        return []
    found: dict[str, list[str]] = {}
    for line in listing.splitlines():
        sha, _, ref = line.partition(" ")
        group, _, kind_name = ref[len(KEPT_PREFIX):].partition("/")
        if group[16:24] != tag:
            continue
        if kind_name.startswith("heads/"):
            found.setdefault(group[:15], []).append(f"git branch {kind_name[6:]} {sha}")
        elif kind_name.startswith("tags/"):
            found.setdefault(group[:15], []).append(f"git tag {kind_name[5:]} {sha}")
        elif kind_name == "stash":
            found.setdefault(group[:15], []).append(f"git stash store -m 'restored by ralph' {sha}")
    return found[max(found)] if found else []
