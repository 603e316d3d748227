"""`ralph demo`: replay real Claude Code hook payloads (captured from Claude
Code 2.1.330, shipped in ralph/data/payloads) through every handler, against a
temp git project, and print what each handler decided.

Each payload goes through the same entry point Claude Code runs (a `ralph`
subprocess fed the JSON on stdin); only paths, and for some steps the command,
are rewritten to fit the temp project.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from importlib import resources

from ralph.loop.recovery import LoopLock
from ralph.state.files import atomic_write

CAPTURED_PROJECT = "/home/dev/app"

FAILING_TEST = '''import unittest


class TestTotals(unittest.TestCase):
    def test_total_adds_tax(self):
        self.assertEqual(round(100 * 1.2), 121)


if __name__ == "__main__":
    unittest.main()
'''


def load_payload(name: str, project: str) -> dict:
    text = resources.files("ralph").joinpath("data", "payloads", f"{name}.json").read_text(encoding="utf-8")
    return json.loads(text.replace(CAPTURED_PROJECT, project))


def ralph_command() -> list[str]:
    """How to start ralph itself: the frozen binary, or this interpreter."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    return [sys.executable, "-m", "ralph"]


def python_command() -> list[str]:
    if getattr(sys, "frozen", False):
        return [shutil.which("python3") or "python3"]
    return [sys.executable]


def run_hook(payload: dict, project: str) -> dict:
    env = dict(os.environ, CLAUDE_PROJECT_DIR=project)
    proc = subprocess.run(
        [*ralph_command(), "hook"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=project,
        env=env,
        timeout=60,
    )
    text = proc.stdout.decode("utf-8", "replace").strip()
    try:
        output = json.loads(text)
    except ValueError:
        output = {"<invalid output>": text}
    return {"exit": proc.returncode, "output": output}


def describe(output: dict) -> tuple[str, str]:
    """(decision, the text the model or user would see) from one hook output."""
    specific = output.get("hookSpecificOutput") or {}
    if specific.get("permissionDecision") == "deny":
        return "DENY", specific.get("permissionDecisionReason", "")
    if output.get("decision") == "block":
        extra = specific.get("additionalContext")
        return "BLOCK", output.get("reason", "") + (f" | context: {extra}" if extra else "")
    if specific.get("additionalContext"):
        return "CONTEXT", specific["additionalContext"]
    if output == {}:
        return "allow", ""
    return "other", json.dumps(output)


def make_project(root: str) -> None:
    subprocess.run(["git", "init", "-q", root], check=True)
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write("hello\n")
    with open(os.path.join(root, "test_totals.py"), "w") as f:
        f.write(FAILING_TEST)
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write(".ralph/\n__pycache__/\n")
    git = ["git", "-C", root, "-c", "user.name=demo", "-c", "user.email=demo@example.invalid"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "initial"], check=True)


def start_loop_run(root: str, lock: LoopLock) -> None:
    """What ralph-loop writes at the start of an iteration (see ralph/run/state.py),
    and the lock it holds while it lives: hooks act for a run only while its loop holds it."""
    os.makedirs(os.path.join(root, ".ralph"), exist_ok=True)
    lock.acquire()
    head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    atomic_write(
        os.path.join(root, ".ralph", "plan.md"),
        "- [ ] US-001: Show totals with tax\n  - total_with_tax(100) == 120\n- [ ] US-002: Document the totals\n",
    )
    run = {
        "version": 1,
        "run_id": "demo-run",
        "status": "running",
        "iteration": 1,
        "story": {"id": "US-001", "title": "Show totals with tax", "criteria": ["total_with_tax(100) == 120"], "source": ".ralph/plan.md"},
        "checkpoint": head,
        "started": "2026-01-01T00:00:00Z",
        "pid": os.getpid(),
        "stage": "build",
        "finish": None,
    }
    atomic_write(os.path.join(root, ".ralph", "run.json"), json.dumps(run, indent=2))


def steps(root: str, lock: LoopLock) -> list[tuple[str, str, dict, object]]:
    """(label, payload name, overrides to tool_input, action after) for each step."""
    failing = subprocess.run(
        [*python_command(), "-m", "unittest", "test_totals"], cwd=root, capture_output=True, text=True, timeout=60
    )
    unittest_output = (failing.stdout + failing.stderr).strip()
    unittest_command = "python -m unittest test_totals"
    return [
        ("Edit a file never read", "PreToolUse_Edit", {}, None),
        ("Read it", "PostToolUse_Read", {}, None),
        ("Edit it again", "PreToolUse_Edit", {}, lambda: _write(root, "README.md", "hello world\n")),
        ("Edit done", "PostToolUse_Edit", {}, None),
        ("Write a new file", "PreToolUse_Write", {}, None),
        ("Bash: look at files", "PreToolUse_Bash", {}, None),
        ("Bash: git push", "PreToolUse_Bash", {"command": "git push origin main"}, None),
        ("Bash: push, disguised", "PreToolUse_Bash", {"command": "cd . && g\\it -c alias.p=push p origin HEAD"}, None),
        ("Bash: commit saying push", "PreToolUse_Bash", {"command": "git commit -am 'do not push yet'"}, None),
        ("Bash exited 0", "PostToolUse_Bash", {}, None),
        ("Bash exited 3", "PostToolUseFailure_Bash_exit3", {}, None),
        ("Failing unittest run", "PostToolUseFailure_Bash_exit3", {"command": unittest_command, "error": f"Exit code {failing.returncode}\n{unittest_output}"}, None),
        ("Prompt, no loop run", "UserPromptSubmit", {}, lambda: start_loop_run(root, lock)),
        ("Prompt, loop run active", "UserPromptSubmit", {}, None),
        ("Stop, story open", "Stop", {}, None),
        ("Stop again (stop_hook_active)", "Stop_after_block_stop_hook_active_true", {}, None),
        ("SessionStart (not handled)", "SessionStart", {}, None),
    ]


def _write(root: str, name: str, text: str) -> None:
    with open(os.path.join(root, name), "w") as f:
        f.write(text)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ralph demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the temp project and print its path")
    parser.add_argument("--json", action="store_true", help="print one JSON object per step instead of a table")
    args = parser.parse_args(argv)
    root = os.path.realpath(tempfile.mkdtemp(prefix="ralph-demo-"))
    lock = LoopLock(os.path.join(root, ".ralph"))
    try:
        make_project(root)
        rows = []
        for number, (label, name, overrides, after) in enumerate(steps(root, lock), 1):
            payload = load_payload(name, root)
            if "error" in overrides:
                payload["error"] = overrides["error"]
            tool_overrides = {k: v for k, v in overrides.items() if k != "error"}
            if tool_overrides:
                payload["tool_input"] = dict(payload.get("tool_input") or {}, **tool_overrides)
            result = run_hook(payload, root)
            decision, detail = describe(result["output"])
            rows.append((number, payload.get("hook_event_name", "?"), payload.get("tool_name", ""), label, decision, detail, result))
            if after is not None:
                after()
        if args.json:
            for number, event, tool, label, decision, detail, result in rows:
                print(json.dumps({"step": number, "event": event, "tool": tool, "label": label, "decision": decision, "exit": result["exit"], "output": result["output"]}))
        else:
            print_table(rows)
            print_details(rows)
            codes = sorted({r[6]["exit"] for r in rows})
            print(f"\nEvery call exited {codes} and printed one JSON object.")
        status = 0 if all(r[6]["exit"] == 0 for r in rows) else 1
    finally:
        lock.release()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.keep:
        print(f"project kept at {root}")
    if not args.json:
        print(hook_logs_line(root))
    return status


# where the hook log of each step lands: an interactive session's under .git/,
# a loop run's under .ralph/ (the demo starts a loop run halfway)
HOOK_LOGS = (".git/ralph/logs/hooks.jsonl", ".ralph/logs/hooks.jsonl")


def hook_logs_line(root: str) -> str:
    """The demo's last line, true of what is on disk now: the hook logs kept, or that they are gone."""
    kept = [os.path.join(root, rel) for rel in HOOK_LOGS if os.path.exists(os.path.join(root, rel))]
    if kept:
        return "Hook logs: " + ", ".join(kept)
    if os.path.exists(root):
        return f"Hook logs: none written in {root}"
    return "Hook logs: deleted with the temp project (`ralph demo --keep` keeps it)"


def print_details(rows: list, max_lines: int = 8) -> None:
    """What the model (or the user) is told, in full, for each step that said something."""
    width = min(100, shutil.get_terminal_size((100, 20)).columns)
    print("\nWhat the agent is told:")
    for number, _, _, label, decision, detail, _ in rows:
        if not detail:
            continue
        print(f"\n#{number} {label}: {decision}")
        lines = [w for para in detail.splitlines() for w in (textwrap.wrap(para, width - 4) or [""])]
        for line in lines[:max_lines]:
            print("    " + line)
        if len(lines) > max_lines:
            print(f"    … ({len(lines) - max_lines} more lines)")


def print_table(rows: list) -> None:
    width = shutil.get_terminal_size((120, 20)).columns
    header = f"{'#':>2}  {'event':<19} {'tool':<6} {'step':<30} {'decision':<8} detail"
    print(header)
    print("-" * min(width, len(header) + 40))
    for number, event, tool, label, decision, detail, _ in rows:
        prefix = f"{number:>2}  {event:<19} {tool:<6} {label:<30} {decision:<8} "
        room = max(20, width - len(prefix))
        detail = " ".join(detail.split())
        print(prefix + (detail if len(detail) <= room else detail[: room - 1] + "…"))
