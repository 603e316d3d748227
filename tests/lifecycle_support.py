"""Helpers for the lifecycle hook tests: a project dir with ralph.toml and
hooks, an Engine on it, and a recorder hook that writes what it saw."""
from __future__ import annotations

import json
import os
import shlex
import stat
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Appends one JSON line per call to $RECORD_FILE: the point, every RALPH_*
# variable, the stdin JSON and argv.
RECORDER = """\
import json, os, sys
data = sys.stdin.read()
line = {"argv": sys.argv[1:], "env": {k: v for k, v in os.environ.items() if k.startswith("RALPH_")},
        "stdin": json.loads(data) if data.strip() else None, "cwd": os.getcwd()}
with open(os.environ["RECORD_FILE"], "a", encoding="utf-8") as f:
    f.write(json.dumps(line) + "\\n")
"""


class HookProject:
    def __init__(self, tmp_path: object, config: str = "", global_config: str | None = None) -> None:
        self.tmp = str(tmp_path)
        self.root = os.path.realpath(os.path.join(self.tmp, "project"))
        os.makedirs(os.path.join(self.root, ".ralph"), exist_ok=True)
        self.state_dir = os.path.join(self.root, ".ralph")
        self.config_path = os.path.join(self.root, "ralph.toml")
        self.xdg = os.path.join(self.tmp, "xdg")
        self.record_file = os.path.join(self.tmp, "record.jsonl")
        self.recorder = os.path.join(self.tmp, "recorder.py")
        with open(self.recorder, "w") as f:
            f.write(RECORDER)
        self.record_command = f"{shlex.quote(sys.executable)} {shlex.quote(self.recorder)}"
        self.write_config(config)
        if global_config is not None:
            self.write_global(global_config)

    def write_config(self, text: str) -> None:
        with open(self.config_path, "w", encoding="utf-8") as f:
            f.write(text.replace("@RECORD@", self.record_command))

    def write_global(self, text: str) -> None:
        path = os.path.join(self.xdg, "ralph-hooks", "hooks.toml")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace("@RECORD@", self.record_command))

    def dir_hook(self, name: str, body: str, executable: bool = True) -> str:
        path = os.path.join(self.root, ".ralph", "hooks", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        mode = os.stat(path).st_mode
        os.chmod(path, mode | stat.S_IXUSR if executable else mode & ~(stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))
        return path

    def environ(self, **extra: str) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RALPH_")}
        env["XDG_CONFIG_HOME"] = self.xdg
        env["RECORD_FILE"] = self.record_file
        env.update(extra)
        return env

    def hooks(self, monkeypatch: object, **environ: str) -> object:
        from ralph.loop.lifecycle.config import load_hooks

        monkeypatch.setenv("XDG_CONFIG_HOME", self.xdg)  # type: ignore[attr-defined]
        return load_hooks(self.root, None, self.config_path, self.environ(**environ))

    def engine(self, monkeypatch: object, sleeps: list | None = None, **environ: str) -> object:
        from ralph.loop.lifecycle.config import require_valid
        from ralph.loop.lifecycle.engine import Engine

        hooks = require_valid(self.hooks(monkeypatch, **environ))
        messages: list[str] = []
        display = Messages(messages)
        sleep = (lambda s: sleeps.append(s)) if sleeps is not None else (lambda s: None)
        engine = Engine(hooks, root=self.root, state_dir=self.state_dir, run_id="r1",
                        log_dir=os.path.join(self.state_dir, "logs", "r1"), display=display,
                        environ=self.environ(**environ), sleep=sleep)
        engine.messages = messages  # type: ignore[attr-defined]
        return engine

    def records(self) -> list[dict]:
        if not os.path.exists(self.record_file):
            return []
        with open(self.record_file, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    def traces(self) -> list[dict]:
        path = os.path.join(self.state_dir, "logs", "lifecycle.jsonl")
        if not os.path.exists(path):
            return []
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]


class Messages:
    def __init__(self, sink: list[str]) -> None:
        self.sink = sink
        self.outputs: list[bytes] = []

    def message(self, text: str) -> None:
        self.sink.append(text)

    def output(self, chunk: bytes) -> None:
        self.outputs.append(chunk)


CONTEXT = {"session": "r1", "stage": "build", "mode": "build", "iteration": 3, "max_iterations": 10,
           "story_id": "US-001", "story_title": "Add greeting"}
