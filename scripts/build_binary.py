#!/usr/bin/env python3
"""Build the PyInstaller binary (build.spec) and smoke-test every subcommand
of what was built, with the real payloads shipped in ralph/data/payloads.

    python scripts/build_binary.py              # onedir: dist/ralph/ralph (+ ralph-loop symlink)
    python scripts/build_binary.py --onefile    # one file: dist/ralph-onefile/ralph (slow per call)
    python scripts/build_binary.py --no-build   # smoke-test the binary already in dist/

The smoke test runs each command the way users and Claude Code run it, in a
temp git project with a temp HOME: every hook payload, and every hook
subcommand by name (exit 0, exactly one JSON object; a `git push` denied; an
Edit through a hard link judged as bin/ralph judges it), `pre-tool --help`
(writes nothing), demo, explain, classify, `loop --dry-run` (also through the
`ralph-loop` symlink), `report` of a recorded run, `install --dry-run`,
install + doctor. Exit 1 on the
first failure, with what went wrong. Nothing is written outside dist/, build/
and the temp dir.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAYLOADS = os.path.join(REPO, "ralph", "data", "payloads")
sys.path.insert(0, REPO)
from ralph.claude.dispatch import SUBCOMMANDS  # noqa: E402
from scripts.install_claude import locate_binary  # noqa: E402

EVENT_PAYLOADS = {
    "PreToolUse": "PreToolUse_Bash.json",
    "PostToolUse": "PostToolUse_Bash.json",
    "PostToolUseFailure": "PostToolUseFailure_Bash_exit3.json",
    "UserPromptSubmit": "UserPromptSubmit.json",
    "Stop": "Stop.json",
    "PreSkillShellCommand": "PreSkillShellCommand_Bash.json",
}
CAPTURED_PROJECT = "/home/dev/app"


class SmokeFailure(Exception):
    pass


def build(onefile: bool) -> str:
    distpath = os.path.join(REPO, "dist", "ralph-onefile" if onefile else "")
    command = [sys.executable, "-m", "PyInstaller", "build.spec", "--noconfirm", "--log-level", "WARN",
               "--distpath", distpath, "--workpath", os.path.join(REPO, "build", "onefile" if onefile else "onedir")]
    if onefile:
        command += ["--", "--onefile"]
    started = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True)
    print(f"build_binary: built {'onefile' if onefile else 'onedir'} in {time.perf_counter() - started:.1f}s")
    binary = os.path.join(distpath, "ralph") if onefile else os.path.join(REPO, "dist", "ralph", "ralph")
    link = os.path.join(os.path.dirname(binary), "ralph-loop")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink("ralph", link)
    return binary


class Smoke:
    def __init__(self, binary: str, tmp: str) -> None:
        self.binary = binary
        self.tmp = tmp
        self.home = os.path.join(tmp, "home")
        self.project = os.path.join(tmp, "project")
        os.makedirs(os.path.join(self.home, ".claude"))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "RALPH_", "PYTHON"))}
        self.env.update(HOME=self.home, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="smoke", GIT_AUTHOR_EMAIL="smoke@example.invalid",
                        GIT_COMMITTER_NAME="smoke", GIT_COMMITTER_EMAIL="smoke@example.invalid")
        # the binary must not lean on the interpreter that built it
        self.env["PATH"] = os.pathsep.join(p for p in self.env.get("PATH", "").split(os.pathsep) if not p.startswith(os.path.dirname(sys.executable)))
        self.count = 0
        os.makedirs(self.project)
        self.run(["git", "init", "-q", self.project], program=False)
        with open(os.path.join(self.project, "README.md"), "w") as f:
            f.write("hello\n")
        self.run(["git", "-C", self.project, "add", "-A"], program=False)
        self.run(["git", "-C", self.project, "commit", "-q", "-m", "initial"], program=False)

    def run(self, args: list[str], stdin: str = "", expect: int | tuple = 0, program: bool = True, cwd: str | None = None,
            argv0: str | None = None) -> subprocess.CompletedProcess:
        argv = [argv0 or self.binary, *args] if program else args
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=cwd or self.project, env=self.env, timeout=300)
        expected = expect if isinstance(expect, tuple) else (expect,)
        if done.returncode not in expected:
            raise SmokeFailure(f"`{' '.join(argv)}` exited {done.returncode}, expected {expect}\nstdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-2000:]}")
        if "Traceback" in done.stderr:
            raise SmokeFailure(f"`{' '.join(argv)}` printed a traceback:\n{done.stderr[-2000:]}")
        if program:
            self.count += 1
        return done

    def hook(self, subcommand: str, payload_name: str) -> dict:
        with open(os.path.join(PAYLOADS, payload_name), encoding="utf-8") as f:
            payload = f.read().replace(CAPTURED_PROJECT, self.project)
        out = self.run([subcommand], payload).stdout
        try:
            answer = json.loads(out)
        except ValueError:
            raise SmokeFailure(f"{subcommand} {payload_name}: stdout is not one JSON object: {out[:500]!r}") from None
        if not isinstance(answer, dict):
            raise SmokeFailure(f"{subcommand} {payload_name}: answered {out[:200]!r}")
        return answer

    def hooks(self) -> None:
        for path in sorted(glob.glob(os.path.join(PAYLOADS, "*.json"))):
            self.hook("hook", os.path.basename(path))
        # every other hook subcommand by name (the binary's entry dispatches on it)
        for subcommand, event in SUBCOMMANDS.items():
            if event:
                self.hook(subcommand, EVENT_PAYLOADS[event])
        with open(os.path.join(PAYLOADS, "PreToolUse_Bash.json"), encoding="utf-8") as f:
            push = json.loads(f.read().replace(CAPTURED_PROJECT, self.project))
        push["tool_input"]["command"] = "git push origin main"
        answer = json.loads(self.run(["pre-tool"], json.dumps(push)).stdout)
        if (answer.get("hookSpecificOutput") or {}).get("permissionDecision") != "deny":
            raise SmokeFailure(f"pre-tool did not deny `git push origin main`: {answer}")
        self.edit_through_link()
        self.child_environment()
        if not os.path.exists(os.path.join(self.project, ".git", "ralph", "logs", "hooks.jsonl")):
            raise SmokeFailure("the hook calls logged nothing in the git directory's state dir (.git/ralph/)")
        if os.path.exists(os.path.join(self.project, ".ralph")):
            raise SmokeFailure("interactive hook calls made .ralph/ in the work tree")
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty)
        if "usage: ralph pre-tool" not in self.run(["pre-tool", "--help"], cwd=empty).stdout or os.listdir(empty):
            raise SmokeFailure("pre-tool --help printed no help or wrote files")

    def child_environment(self) -> None:
        """What the binary starts (here: a user's event hook) gets the
        system's libraries, not the bundle's LD_LIBRARY_PATH, and a ralph
        binary it starts in turn starts afresh (PYINSTALLER_RESET_ENVIRONMENT)."""
        project = os.path.join(self.tmp, "env-project")
        os.makedirs(project)
        self.run(["git", "init", "-q", project], program=False)
        seen = os.path.join(self.tmp, "child-env")
        with open(os.path.join(project, "ralph.toml"), "w") as f:
            f.write(f'[[hooks.event]]\nmatch = "PreToolUse:Bash"\ncommand = ["sh", "-c", "env > \\"$0\\"", {json.dumps(seen)}]\n')
        with open(os.path.join(PAYLOADS, "PreToolUse_Bash.json"), encoding="utf-8") as f:
            payload = json.loads(f.read().replace(CAPTURED_PROJECT, project))
        payload["tool_input"]["command"] = "npm test"
        self.run(["pre-tool"], json.dumps(payload), cwd=project)
        try:
            with open(seen, encoding="utf-8") as f:
                child = dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line)
        except OSError:
            raise SmokeFailure("the event hook in the child-environment check did not run") from None
        bundle = os.path.dirname(os.path.realpath(self.binary))
        if bundle in child.get("LD_LIBRARY_PATH", "") or child.get("LD_LIBRARY_PATH", "") != self.env.get("LD_LIBRARY_PATH", ""):
            raise SmokeFailure(f"a child of the binary got LD_LIBRARY_PATH={child.get('LD_LIBRARY_PATH')!r}")
        if child.get("PYINSTALLER_RESET_ENVIRONMENT") != "1":
            raise SmokeFailure("a child of the binary would not start a ralph binary afresh (no PYINSTALLER_RESET_ENVIRONMENT=1)")

    def edit_through_link(self) -> None:
        """An Edit of README.md (read above) under a second name: the one hook
        path that imports ctypes (statx for the birth time), which build.spec
        loads lazily. The binary must judge it as bin/ralph from this tree does
        (allowed where the filesystem keeps birth times, denied elsewhere)."""
        link = os.path.join(self.project, "README-link.md")
        os.link(os.path.join(self.project, "README.md"), link)
        try:
            with open(os.path.join(PAYLOADS, "PreToolUse_Edit.json"), encoding="utf-8") as f:
                edit = json.loads(f.read().replace(CAPTURED_PROJECT, self.project))
            edit["tool_input"]["file_path"] = link
            payload = json.dumps(edit)
            answer = json.loads(self.run(["pre-tool"], payload).stdout)
            env = dict(self.env, PYTHONPATH=REPO)  # -S: no site; bin/ralph then finds this tree first
            reference = subprocess.run([sys.executable, "-S", os.path.join(REPO, "bin", "ralph"), "pre-tool"], input=payload,
                                       capture_output=True, text=True, cwd=self.project, env=env, timeout=300)
            try:
                expected = json.loads(reference.stdout)
            except ValueError:
                raise SmokeFailure(f"bin/ralph pre-tool (the reference) failed: {reference.stderr[-2000:]}") from None
        finally:
            os.unlink(link)

        def decision(output: dict) -> str:
            return (output.get("hookSpecificOutput") or {}).get("permissionDecision", "allow")

        if decision(answer) != decision(expected):
            raise SmokeFailure(f"Edit through a hard link: the binary answered {answer}, bin/ralph {expected}")

    def commands(self) -> None:
        self.run(["version"])
        self.run(["demo"])
        if "BLOCK" not in self.run(["explain", "git push origin main"], expect=1).stdout:
            raise SmokeFailure("explain did not block `git push origin main`")
        with open(os.path.join(PAYLOADS, "PostToolUseFailure_Bash_exit3.json"), encoding="utf-8") as f:
            self.run(["classify"], f.read(), expect=(0, 1))
        os.makedirs(os.path.join(self.project, ".ralph"), exist_ok=True)
        with open(os.path.join(self.project, ".ralph", "plan.md"), "w") as f:
            f.write("- [ ] US-001: First story\n  - it works\n")
        self.run(["loop", "--dry-run"])
        self.run(["--dry-run"], argv0=os.path.join(os.path.dirname(self.binary), "ralph-loop"))
        for name in ("events.jsonl", "run.json"):  # a recorded run, for `ralph report`
            shutil.copy(os.path.join(REPO, "tests", "fixtures", "report", "night", name), os.path.join(self.project, ".ralph", name))
        if not self.run(["report"]).stdout.strip().endswith("report.html"):
            raise SmokeFailure("report did not print the path of the report.html it wrote")
        self.run(["report", "--format", "md"])
        if self.binary not in self.run(["install", "--dry-run"]).stdout:
            raise SmokeFailure("install --dry-run does not wire the binary's absolute path")
        self.run(["install", "--user"])
        client = locate_binary()  # the suite's Claude Code: doctor's session runs the binary's hooks in it
        if client:
            self.run(["doctor", "--client", client])
        elif "NOT PROVEN" not in self.run(["doctor"], expect=1).stdout:
            raise SmokeFailure("doctor without a Claude Code client did not say that nothing was proven")
        self.run(["uninstall", "--user"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--onefile", action="store_true", help="build the one-file layout instead (slow per call; see docs/install.md)")
    parser.add_argument("--no-build", action="store_true", help="smoke-test the binary already built")
    args = parser.parse_args()
    if args.no_build:
        binary = os.path.join(REPO, "dist", "ralph-onefile", "ralph") if args.onefile else os.path.join(REPO, "dist", "ralph", "ralph")
    else:
        binary = build(args.onefile)
    tmp = tempfile.mkdtemp(prefix="ralph-smoke-")
    started = time.perf_counter()
    try:
        smoke = Smoke(binary, tmp)
        smoke.hooks()
        smoke.commands()
    except SmokeFailure as e:
        print(f"build_binary: SMOKE TEST FAILED ({binary}):\n{e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"build_binary: smoke test passed: {smoke.count} runs of {binary} in {time.perf_counter() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
