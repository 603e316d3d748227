"""Helpers for the ralph-loop tests: a temp git project with a plan, and the
installed `ralph-loop` console script driving tests/fake_agent.py."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_AGENT = os.path.join(HERE, "fake_agent.py")
AGENT_COMMAND = f"{shlex.quote(sys.executable)} {shlex.quote(FAKE_AGENT)}"
GIT_ID = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
          "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def loop_executable() -> str:
    candidate = os.path.join(os.path.dirname(sys.executable), "ralph-loop")
    return candidate if os.path.exists(candidate) else "ralph-loop"


RALPH_LOOP = loop_executable()


def git(root: str, *args: str) -> str:
    env = dict(os.environ, **GIT_ID)
    return subprocess.run(["git", "-C", root, *args], check=True, capture_output=True, text=True, env=env).stdout


class Project:
    """A git repo with one commit, a plan, and a folder for the fake agent's script."""

    def __init__(self, tmp_path: object, plan: str | bytes | None, plan_name: str = "plan.md",
                 config: str | None = None, commit_plan: bool = True) -> None:
        self.root = os.path.realpath(str(tmp_path / "project"))  # type: ignore[operator]
        self.agent_dir = str(tmp_path / "agent")  # type: ignore[operator]
        os.makedirs(self.root)
        os.makedirs(self.agent_dir)
        subprocess.run(["git", "init", "-q", "-b", "main", self.root], check=True)
        self.write("README.md", "hello\n")
        self.plan_path = os.path.join(self.root, ".ralph", plan_name)
        if plan is not None:
            os.makedirs(os.path.dirname(self.plan_path), exist_ok=True)
            with open(self.plan_path, "wb") as f:
                f.write(plan.encode("utf-8") if isinstance(plan, str) else plan)
        if config is not None:
            self.write("ralph.toml", config)
        if commit_plan:
            git(self.root, "add", "-A")
        else:
            git(self.root, "add", "README.md")
        git(self.root, "commit", "-q", "-m", "initial")

    def write(self, rel: str, text: str) -> None:
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)

    def commit(self, message: str = "setup") -> None:
        """Commit everything: the loop refuses to start on a tree with uncommitted changes outside .ralph/."""
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "--allow-empty", "-m", message)

    def read(self, rel: str) -> str:
        with open(os.path.join(self.root, rel), encoding="utf-8", newline="") as f:
            return f.read()

    def plan_bytes(self) -> bytes:
        with open(self.plan_path, "rb") as f:
            return f.read()

    def script(self, runs: list | None = None, default: list | None = None, hooks: list | None = None) -> str:
        path = os.path.join(self.agent_dir, "script.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"runs": runs or [], "default": default or [], "hooks": hooks or []}, f)
        return path

    def env(self, extra: dict | None = None) -> dict:
        env = dict(os.environ, **GIT_ID)
        for name in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG"):
            env.pop(name, None)
        env["FAKE_AGENT_SCRIPT"] = os.path.join(self.agent_dir, "script.json")
        if extra:
            env.update(extra)
        return env

    def loop_argv(self, *args: str, agent: str | None = AGENT_COMMAND) -> list[str]:
        argv = [RALPH_LOOP, *args]
        if agent is not None:
            argv += ["--agent", agent]
        return argv

    def run_loop(self, *args: str, agent: str | None = AGENT_COMMAND, timeout: float = 120,
                 env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(self.loop_argv(*args, agent=agent), cwd=self.root, env=self.env(env),
                              capture_output=True, text=True, timeout=timeout)

    def start_loop(self, *args: str, agent: str | None = AGENT_COMMAND) -> subprocess.Popen:
        return subprocess.Popen(self.loop_argv(*args, agent=agent), cwd=self.root, env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def events(self, kind: str | None = None) -> list[dict]:
        path = os.path.join(self.root, ".ralph", "events.jsonl")
        if not os.path.exists(path):
            return []
        with open(path, encoding="utf-8") as f:
            events = [json.loads(line) for line in f if line.strip()]
        return [e for e in events if kind is None or e.get("event") == kind]

    def failures(self) -> list[dict]:
        path = os.path.join(self.root, ".ralph", "failures.jsonl")
        if not os.path.exists(path):
            return []
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    def run_state(self) -> dict:
        with open(os.path.join(self.root, ".ralph", "run.json"), encoding="utf-8") as f:
            return json.load(f)

    def log(self) -> list[str]:
        return git(self.root, "log", "--format=%s").splitlines()

    def prompt(self, number: int) -> str:
        with open(os.path.join(self.agent_dir, f"prompt-{number}.txt"), encoding="utf-8") as f:
            return f.read()

    def argv(self, number: int) -> list[str]:
        """The arguments the agent's invocation `number` got."""
        with open(os.path.join(self.agent_dir, f"argv-{number}.json"), encoding="utf-8") as f:
            return json.load(f)

    def claude_stand_in(self) -> str:
        """A `claude` executable that is the fake agent: the loop takes it for
        Claude Code (and adds its flags to the command line)."""
        path = os.path.join(self.agent_dir, "bin", "claude")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(FAKE_AGENT)} "$@"\n')
        os.chmod(path, 0o755)
        return path

    def invocations(self) -> int:
        try:
            with open(os.path.join(self.agent_dir, "invocations")) as f:
                return int(f.read())
        except FileNotFoundError:
            return 0

    def temp_files(self) -> list[str]:
        found = []
        for dirpath, _dirs, files in os.walk(os.path.join(self.root, ".ralph")):
            found += [os.path.join(dirpath, name) for name in files if name.endswith(".tmp")]
        return found


def gone(pid: int, within: float = 60.0) -> bool:
    """Has the process exited? A kill is delivered asynchronously (the target
    dies when it is next scheduled), so wait for the exit itself: at once when
    it happened, else up to a bound far past any loaded machine's scheduling
    delay (a hang guard, not a speed check)."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    except OSError:  # no pidfd (Linux < 5.3): the state now
        return not pid_alive(pid)
    try:
        select.select([fd], [], [], within)
    finally:
        os.close(fd)
    return not pid_alive(pid)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0): look at its state
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
