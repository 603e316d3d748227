"""A scripted stand-in for `claude -p`, for driving ralph-loop in tests.

ralph-loop runs it as the agent command: the prompt arrives on stdin, the cwd
is the project root. What it does comes from the JSON file named by
$FAKE_AGENT_SCRIPT:

    {"runs": [[step, ...], [step, ...]],   # invocation 1, 2, ...
     "default": [step, ...],               # any later invocation
     "hooks": ["prompt", "stop", "bash"]}  # real hook calls to make, as the client would

Steps (objects with one main key):
    {"write": "src/a.py", "text": "..."}        create/replace a file
    {"append": "notes.txt", "text": "..."}      append to a file
    {"run": "python -m pytest -q"}             run a shell command, echo its output
    {"mark": "done" | "blocked" | "todo"}        edit the current story's checkbox
                                                (from .ralph/run.json) in its plan file
    {"print": "text"}                           write to stdout
    {"sleep": 2.5}
    {"spawn_sleeper": "path"}                   start `sleep 300` in the background, write its pid
    {"pid_file": "path"}                        write our own pid
    {"log_pids": "path"}                        start `sleep 300` in the background and append
                                                "<our pid> <its pid>" to the file
    {"ignore_term": true}                       ignore SIGTERM from now on (a hung agent)
    {"replay": "tools_success"}                 print a stream the real client printed
                                                (tests/fixtures/stream/<name>.jsonl), then exit
                                                with the code it exited with
    {"replay_file": "path", "exit": 1}          print that file as it is (then the next steps)
    {"exit": 3}                                 exit with that code now
    {"crash": true}                             die from SIGKILL (no cleanup, no output)
    {"stop": [steps]}                           end of turn through the real Stop hook: when it
                                                blocks, run the steps, then stop again with
                                                stop_hook_active=true (as Claude Code does)

Every invocation saves its prompt as prompt-<n>.txt, its arguments as
argv-<n>.json and the hook outputs it saw as hooks-<n>.jsonl beside the
script (started as `claude` by tests/loop_support.claude_stand_in, it sees
the flags the loop adds for Claude Code). With "hooks": "prompt" it sends the
prompt through `ralph prompt` first; "bash" sends each `run` through
`ralph pre-tool` and `ralph post-tool` / `ralph post-tool-failure`.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid

SESSION = str(uuid.uuid4())
STREAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "stream")


def ralph_command() -> list[str]:
    exe = os.path.join(os.path.dirname(sys.executable), "ralph")
    return [exe] if os.path.exists(exe) else [sys.executable, "-m", "ralph"]


class Agent:
    def __init__(self, script_path: str) -> None:
        with open(script_path, encoding="utf-8") as f:
            self.script = json.load(f)
        self.base = os.path.dirname(os.path.abspath(script_path))
        counter = os.path.join(self.base, "invocations")
        try:
            with open(counter) as f:
                self.number = int(f.read().strip() or 0) + 1
        except FileNotFoundError:
            self.number = 1
        with open(counter, "w") as f:
            f.write(str(self.number))
        self.hooks = set(self.script.get("hooks", []))
        self.cwd = os.getcwd()

    def steps(self) -> list[dict]:
        runs = self.script.get("runs", [])
        if self.number <= len(runs):
            return runs[self.number - 1]
        return self.script.get("default", [])

    def payload(self, event: str, **fields: object) -> dict:
        return {
            "session_id": SESSION,
            "transcript_path": os.path.join(self.base, f"transcript-{self.number}.jsonl"),
            "cwd": self.cwd,
            "permission_mode": "bypassPermissions",
            "hook_event_name": event,
            **fields,
        }

    def hook(self, subcommand: str, payload: dict) -> dict:
        proc = subprocess.run(ralph_command() + [subcommand], input=json.dumps(payload).encode(),
                              capture_output=True, cwd=self.cwd, timeout=60)
        output = json.loads(proc.stdout or b"{}")
        with open(os.path.join(self.base, f"hooks-{self.number}.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps({"hook": subcommand, "exit": proc.returncode, "output": output}) + "\n")
        return output

    def run(self, prompt: str) -> int:
        with open(os.path.join(self.base, f"prompt-{self.number}.txt"), "w", encoding="utf-8") as f:
            f.write(prompt)
        with open(os.path.join(self.base, f"argv-{self.number}.json"), "w", encoding="utf-8") as f:
            json.dump(sys.argv[1:], f)
        print(f"fake agent #{self.number} pid {os.getpid()} in {self.cwd}", flush=True)
        if "prompt" in self.hooks:
            self.hook("prompt", self.payload("UserPromptSubmit", prompt=prompt, source="sdk"))
        return self.do(self.steps()) or 0

    def do(self, steps: list[dict]) -> int | None:
        """None when every step ran; an exit code when one said to exit."""
        for step in steps:
            code = self.step(step)
            if code is not None:
                return code
        return None

    def step(self, step: dict) -> int | None:
        if "write" in step or "append" in step:
            path = os.path.join(self.cwd, step.get("write") or step["append"])
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "w" if "write" in step else "a", encoding="utf-8", newline="") as f:
                f.write(step.get("text", ""))
        elif "run" in step:
            self.run_command(step["run"])
        elif "mark" in step:
            mark_story(self.cwd, step["mark"])
        elif "print" in step:
            print(step["print"], flush=True)
        elif "sleep" in step:
            time.sleep(float(step["sleep"]))
        elif "spawn_sleeper" in step:
            child = subprocess.Popen(["sleep", "300"])
            with open(step["spawn_sleeper"], "w") as f:
                f.write(str(child.pid))
        elif "log_pids" in step:
            child = subprocess.Popen(["sleep", "300"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(step["log_pids"], "a") as f:
                f.write(f"{os.getpid()} {child.pid}\n")
        elif "ignore_term" in step:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        elif "pid_file" in step:
            with open(step["pid_file"], "w") as f:
                f.write(str(os.getpid()))
        elif "replay" in step:
            with open(os.path.join(STREAMS, step["replay"] + ".meta.json"), encoding="utf-8") as f:
                code = json.load(f)["exit_code"]
            self.replay(os.path.join(STREAMS, step["replay"] + ".jsonl"))
            return int(code)
        elif "replay_file" in step:
            self.replay(step["replay_file"])
            if "exit" in step:
                return int(step["exit"])
        elif "exit" in step:
            sys.stdout.flush()
            return int(step["exit"])
        elif "crash" in step:
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        elif "stop" in step:
            if "stop" not in self.hooks:
                return None
            first = self.hook("stop", self.payload("Stop", stop_hook_active=False, last_assistant_message="done"))
            if first.get("decision") == "block":
                print(f"Stop hook feedback:\n{first.get('reason', '')}", flush=True)
                code = self.do(step["stop"])
                if code is not None:
                    return code
                self.hook("stop", self.payload("Stop", stop_hook_active=True, last_assistant_message="done"))
        else:
            raise SystemExit(f"fake agent: unknown step {step!r}")
        return None

    def replay(self, path: str) -> None:
        sys.stdout.flush()
        with open(path, "rb") as f:
            while True:
                block = f.read(1 << 20)
                if not block:
                    break
                sys.stdout.buffer.write(block)
        sys.stdout.buffer.flush()

    def run_command(self, command: str) -> None:
        if "bash" in self.hooks:
            pre = self.hook("pre-tool", self.payload("PreToolUse", tool_name="Bash", tool_input={"command": command},
                                                      tool_use_id="toolu_fake"))
            if (pre.get("hookSpecificOutput") or {}).get("permissionDecision") == "deny":
                print(f"denied: {pre['hookSpecificOutput'].get('permissionDecisionReason')}", flush=True)
                return
        proc = subprocess.run(command, shell=True, cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        output = proc.stdout.decode("utf-8", "replace")
        sys.stdout.write(output)
        sys.stdout.flush()
        if "bash" in self.hooks:
            if proc.returncode == 0:
                self.hook("post-tool", self.payload(
                    "PostToolUse", tool_name="Bash", tool_input={"command": command}, tool_use_id="toolu_fake",
                    tool_response={"stdout": output, "stderr": "", "interrupted": False, "isImage": False,
                                   "noOutputExpected": False}))
            else:
                self.hook("post-tool-failure", self.payload(
                    "PostToolUseFailure", tool_name="Bash", tool_input={"command": command}, tool_use_id="toolu_fake",
                    error=f"Exit code {proc.returncode}\n{output}", is_interrupt=False))


def mark_story(root: str, state: str) -> None:
    """Edit the current story's state as an agent would: a text edit of its line."""
    state_dir = os.environ.get("RALPH_STATE_DIR") or os.path.join(root, ".ralph")  # a spawned child's own
    with open(os.path.join(state_dir, "run.json"), encoding="utf-8") as f:
        run = json.load(f)
    story = run["story"]
    path = os.path.join(root, story["source"])
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    if path.endswith(".json"):
        data = json.loads(text)
        for item in data["userStories"]:
            if item["id"] == story["id"]:
                item["passes"] = state == "done"
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        box = {"done": "x", "blocked": "!", "todo": " "}[state]
        text = re.sub(r"(?m)^([-*+] \[)[^\]]?(\][ \t]+%s[ \t]*:)" % re.escape(story["id"]), lambda m: m.group(1) + box + m.group(2), text, count=1)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def main() -> int:
    prompt = sys.stdin.read()
    return Agent(os.environ["FAKE_AGENT_SCRIPT"]).run(prompt)


if __name__ == "__main__":
    sys.exit(main())
