#!/usr/bin/env python3
"""Record a real multi-story ralph-loop run for the report's tests and the
README's screenshot.

The real `ralph-loop` of this checkout drives tests/fake_agent.py through a
night in a temp git project: a story done at once; one whose first attempt
fails the verify command (real pytest output; rolled back) and then passes;
one whose agent tries `git push` (denied by the real `ralph pre-tool` hook)
until its budget runs out (blocked); one the agent blocks itself; one more
done. `[handoff] mode = "push"` to a remote that does not exist makes the
hand-off fail. The run's `.ralph/events.jsonl` and `.ralph/run.json` are
copied to --out (tests/fixtures/report/night/ by default) with the temp
paths replaced by `<project>`; nothing in them is typed by hand.

    scripts/record_report_run.py [--out DIR] [--screenshot PNG] [--no-record]

--screenshot also renders the recorded run's report and has Debian's
chromium (headless) take a picture of its top (docs/images/report.png is
the README's); with --no-record, of the run already in --out.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))

from ralph.report import model as report_model  # noqa: E402
from ralph.report import page  # noqa: E402

FAKE_AGENT = os.path.join(REPO, "tests", "fake_agent.py")
DEFAULT_OUT = os.path.join(REPO, "tests", "fixtures", "report", "night")
GIT_ID = {"GIT_AUTHOR_NAME": "ralph recorder", "GIT_AUTHOR_EMAIL": "recorder@example.invalid",
          "GIT_COMMITTER_NAME": "ralph recorder", "GIT_COMMITTER_EMAIL": "recorder@example.invalid"}

PLAN = """# Greeter

- [ ] US-001: Greet a person by name
  - greet("Ada") returns "Hello, Ada!"
- [ ] US-002: Say goodbye
  - farewell("Ada") returns "Goodbye, Ada."
- [ ] US-003: Publish the package
  - the package is on the team's index
- [ ] US-004: Translate the greetings
  - French and German greetings
- [ ] US-005: Document the API
  - README lists greet and farewell
"""

APP = 'def greet(name):\n    return f"Hello, {name}!"\n'
FAREWELL_BAD = APP + '\n\ndef farewell(name):\n    return f"Bye {name}"\n'
FAREWELL_GOOD = APP + '\n\ndef farewell(name):\n    return f"Goodbye, {name}."\n'
TEST_GREET = "from app import greet\n\n\ndef test_greet():\n    assert greet('Ada') == 'Hello, Ada!'\n"
TEST_FAREWELL = TEST_GREET + "\n\ndef test_farewell():\n    from app import farewell\n    assert farewell('Ada') == 'Goodbye, Ada.'\n"


def agent_script() -> dict:
    """What the fake agent does in each invocation, in the loop's order."""
    return {
        "hooks": ["bash"],
        "runs": [
            # 1: US-001, done at once
            [{"sleep": 3}, {"write": "app.py", "text": APP}, {"write": "tests/test_app.py", "text": TEST_GREET},
             {"run": "git status --short"}, {"mark": "done"}],
            # 2: US-002, a wrong farewell: the verify command's pytest fails, the work is rolled back
            [{"sleep": 4}, {"write": "app.py", "text": FAREWELL_BAD}, {"write": "tests/test_app.py", "text": TEST_FAREWELL},
             {"mark": "done"}],
            # 3: US-002 again, right this time
            [{"sleep": 3}, {"write": "app.py", "text": FAREWELL_GOOD}, {"write": "tests/test_app.py", "text": TEST_FAREWELL},
             {"mark": "done"}],
            # 4, 5: US-003 wants to push; the guard says no; the agent gives up without finishing
            [{"sleep": 2}, {"run": "git push origin HEAD:main"}, {"run": "git push --force origin HEAD"}],
            [{"sleep": 2}, {"run": "git push origin HEAD:refs/heads/release"}],
            # 6: US-004: the agent blocks it (it needs the translations from a person)
            [{"sleep": 2}, {"mark": "blocked"}],
            # 7: US-005, done
            [{"sleep": 3}, {"write": "README.md", "text": "# Greeter\n\n`greet(name)` and `farewell(name)`.\n"}, {"mark": "done"}],
        ],
        "default": [{"exit": 1}],
    }


def config(python: str) -> str:
    return (
        "[loop]\n"
        f"verify_command = {json.dumps(shlex.join([python, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests']))}\n"
        "max_iterations = 12\nmax_iterations_per_story = 2\nno_progress_limit = 0\n\n"
        "[sandbox]\nenabled = false\n\n"
        "[handoff]\nmode = \"push\"\nremote = \"origin\"\n\n"
        "[[hooks.post_iteration]]\nname = \"lint\"\ncommand = \"true\"\n\n"
        "[[hooks.on_task_complete]]\nname = \"changelog\"\ncommand = \"echo {{task_id}} >> .ralph/changelog.txt\"\n"
    )


def git(root: str, *args: str) -> None:
    subprocess.run(["git", "-C", root, *args], check=True, capture_output=True, env=dict(os.environ, **GIT_ID))


def record(work: str) -> tuple[str, subprocess.CompletedProcess]:
    root = os.path.join(work, "project")
    agent = os.path.join(work, "agent")
    os.makedirs(os.path.join(root, ".ralph"))
    os.makedirs(agent)
    subprocess.run(["git", "init", "-q", "-b", "main", root], check=True)
    with open(os.path.join(root, ".ralph", "plan.md"), "w") as f:
        f.write(PLAN)
    with open(os.path.join(root, "ralph.toml"), "w") as f:
        f.write(config(sys.executable))
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write("# Greeter\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    script = os.path.join(agent, "script.json")
    with open(script, "w") as f:
        json.dump(agent_script(), f)
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG", "RALPH_STATE_DIR")}
    env.update(GIT_ID, FAKE_AGENT_SCRIPT=script)
    loop = os.path.join(os.path.dirname(sys.executable), "ralph-loop")
    done = subprocess.run([loop if os.path.exists(loop) else "ralph-loop", "-q", "--agent",
                           shlex.join([sys.executable, FAKE_AGENT])], cwd=root, env=env, capture_output=True, text=True)
    return root, done


def scrub(text: str, root: str) -> str:
    """The temp project's path out of the records (the report shows paths relative to the project)."""
    return text.replace(os.path.realpath(root), "<project>").replace(root, "<project>")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=DEFAULT_OUT, help="where events.jsonl and run.json go")
    parser.add_argument("--screenshot", help="also write a PNG of the report's top (needs chromium)")
    parser.add_argument("--no-record", action="store_true", help="only the screenshot, of the run already recorded in --out")
    args = parser.parse_args()
    if args.no_record:
        if args.screenshot:
            shoot(args.out, args.screenshot)
        return 0
    work = tempfile.mkdtemp(prefix="ralph-record-")
    try:
        root, done = record(work)
        print(done.stdout[-3000:], done.stderr[-2000:], sep="\n")
        if done.returncode != 4:  # blocked: US-003 and US-004 are left
            print(f"record: expected exit 4 (blocked), got {done.returncode}", file=sys.stderr)
            return 1
        os.makedirs(args.out, exist_ok=True)
        for name in ("events.jsonl", "run.json"):
            with open(os.path.join(root, ".ralph", name), encoding="utf-8") as f:
                text = scrub(f.read(), root)
            with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
                f.write(text)
        print(f"recorded {args.out}")
        if args.screenshot:
            shoot(args.out, args.screenshot)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def shoot(recorded: str, png: str) -> None:
    from browser_support import Browser

    with open(os.path.join(recorded, "events.jsonl"), encoding="utf-8") as f:
        events = [json.loads(line) for line in f if line.strip()]
    with open(os.path.join(recorded, "run.json"), encoding="utf-8") as f:
        state = json.load(f)
    html = page.render(report_model.build(events, state))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "report.html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(html)
        with Browser() as browser:
            tab = browser.open("file://" + path, width=1000, height=1400, scripts=False)
            tab.screenshot(png, height=1400)
    print(f"screenshot {png}")


if __name__ == "__main__":
    sys.exit(main())
