"""The sandbox layer the loop hands every agent (ralph.sandbox builds it).

- It goes to the agent with `--settings`, merged into the user's own
  `--settings` file when the agent command has one (the client reads only the
  last `--settings` flag).
- `.ralph/protected/` holds that settings file and the guard's denial log;
  the layer makes it read-only to the agent's Bash (hooks, which write the
  log, run outside the sandbox).
- The verify command runs the agent's code: when the agent is sandboxed it
  runs under bubblewrap with the layer's limits (no network).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil

from ralph.config.reading import load_config
from ralph.loop.run import Finish, Run
from ralph.run import records
from ralph.run.proc import argv_for
from ralph.run.settings import Stage
from ralph.sandbox import ENV_SETTINGS, OPT_OUT_HINT, bwrap_prefix, merge_settings, permission_rules, probe, sandbox_config, settings_layer
from ralph.state.denials import protected_dir
from ralph.state.files import atomic_write
from ralph.state.locations import config_path

CLAUDE_WORD = re.compile(r"(?:(?<=^)|(?<=[\s;&|(]))((?:[^\s;&|()]*/)?claude)(?=\s|$|[;&|)])")
SETTINGS_FLAG = re.compile(r"(?:(?<=^)|(?<=\s))--settings(?:=|\s+)('[^']*'|\"[^\"]*\"|[^\s;&|]+)")


class SandboxSetupError(Exception):
    """The agent command's own --settings could not be read."""


class SandboxLayer:
    """What the run gives its agents and its verify command."""

    __slots__ = ("files", "verify_prefix")

    def __init__(self) -> None:
        self.files: dict[str, str] = {}  # stage name -> its agent settings file; "" -> the first one written
        self.verify_prefix: list[str] = []  # bubblewrap's argv before the verify command, when sandboxed

    def agent_command(self, stage: Stage) -> list[str] | str:
        file = self.files.get(stage.name)
        return with_settings(stage.agent_command, file) if file else stage.agent_command

    def verify_argv(self, command: list[str] | str) -> list[str] | str:
        """The verify command, under bubblewrap (no network, the layer's file
        limits) when the agent is sandboxed: it runs the agent's code."""
        return [*self.verify_prefix, *argv_for(command)] if self.verify_prefix else command

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """$RALPH_SANDBOX_SETTINGS, for an agent command that starts `claude` itself."""
        if self.files.get(""):
            env[ENV_SETTINGS] = self.files[""]
        return env


def prepare(run: Run) -> SandboxLayer:
    """Before the first iteration: build the sandbox layer and the agent
    settings files, or refuse to start when the sandbox cannot run."""
    sandbox = SandboxLayer()
    root, state_dir, display = run.root, run.state_dir, run.display
    config, path = load_config(root), config_path(root)
    values = sandbox_config(config, path)
    stages = run.settings.stages
    status = "on"
    skill_lines = skill_shell_layer(run.settings["skill_shell"])
    if not values["enabled"]:
        display.message("sandbox: OFF ([sandbox] enabled = false): a push the guard misses is not stopped")
        status = "off (config)"
        if skill_lines:
            # no sandbox layer, but skills' shell lines stay off: the agent gets a settings file all the same
            write_stage_files(sandbox, root, state_dir, stages, [s for s in stages if runs_claude(s.agent_command)], skill_lines)
    else:
        claude_stages = [s for s in stages if runs_claude(s.agent_command)]
        ok = False
        for stage in stages:
            if stage not in claude_stages:
                display.message(
                    f"sandbox: the {stage.name} agent command does not start `claude` itself, so ralph-loop cannot "
                    f"pass it the sandbox layer; pass ${ENV_SETTINGS} with --settings, or set [sandbox] enabled = false")
        if claude_stages:
            ok, message = probe()
            if not ok and values["fail_if_unavailable"]:
                raise Finish("error", f"the sandbox cannot run here, so ralph-loop will not start the agent: {message}; {OPT_OUT_HINT}")
            if not ok:
                display.message(f"sandbox: UNAVAILABLE, the agent runs unsandboxed ([sandbox] fail_if_unavailable = false): {message}")
                status = "unavailable"
        layer = settings_layer(root, config, path)
        protected = os.path.realpath(protected_dir(state_dir))
        os.makedirs(protected, exist_ok=True)
        extra = [protected] + ([os.path.realpath(path)] if path and os.path.exists(path) else [])
        deny_write = layer["sandbox"]["filesystem"]["denyWrite"]
        deny_write.extend(p for p in extra if p not in deny_write)
        rules = layer["permissions"]["deny"]
        for p in extra:
            rules.extend(r for r in permission_rules("Edit", p) + permission_rules("Write", p) if r not in rules)
        if values["verify"] and claude_stages and ok:
            sandbox.verify_prefix = bwrap_prefix(layer, shutil.which("bwrap") or "bwrap")
        write_stage_files(sandbox, root, state_dir, stages, claude_stages, merge_settings(layer, skill_lines))
    records.append_event(state_dir, {"event": "sandbox", "run_id": run.run_id, "status": status,
                                     "stages": sorted(k for k in sandbox.files if k)})
    return sandbox


def skill_shell_layer(allowed: object) -> dict:
    """The settings that keep skills' and slash commands' inline shell lines
    (!`cmd`) from running in the agent's session, unless [loop] skill_shell
    allows them (then the PreSkillShellCommand hook still judges each line).
    Clients before 2.1.332 ignore the key (their skills' lines run, unguarded)."""
    return {} if allowed else {"disableSkillShellExecution": True}


def write_stage_files(sandbox: SandboxLayer, root: str, state_dir: str, stages: list[Stage], claude_stages: list[Stage], layer: dict) -> None:
    """One agent settings file per stage (`layer` merged into the stage
    command's own --settings), recorded in `sandbox`."""
    try:
        for stage in stages:
            name = f"agent-settings-{re.sub(r'[^A-Za-z0-9_.-]', '_', stage.name)}.json"
            file = write_agent_settings(root, state_dir, stage.agent_command if stage in claude_stages else "", layer, name)
            if stage in claude_stages:
                sandbox.files[stage.name] = file
            sandbox.files.setdefault("", file)
    except SandboxSetupError as e:
        raise Finish("error", str(e)) from None


# ---- the agent command ----


def runs_claude(command: list[str] | str) -> bool:
    """True when the command starts Claude Code itself (so it takes --settings)."""
    if isinstance(command, list):
        return any(os.path.basename(word) == "claude" for word in command)
    return CLAUDE_WORD.search(command) is not None


def user_settings_value(command: list[str] | str) -> str | None:
    """The value of the command's own `--settings` (a file or inline JSON), if any."""
    if isinstance(command, list):
        for number, word in enumerate(command):
            if word == "--settings" and number + 1 < len(command):
                return command[number + 1]
            if word.startswith("--settings="):
                return word.split("=", 1)[1]
        return None
    m = SETTINGS_FLAG.search(command)
    if not m:
        return None
    try:
        words = shlex.split(m.group(1))
    except ValueError:
        return m.group(1)
    return words[0] if words else ""


def read_user_settings(root: str, value: str) -> dict:
    text = value.strip()
    where = "the agent command's --settings JSON"
    if not text.startswith("{"):
        path = os.path.expanduser(text if os.path.isabs(text) else os.path.join(root, text))
        where = path
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise SandboxSetupError(f"cannot read the agent command's --settings file {path}: {e.strerror}") from None
    try:
        data = json.loads(text)
    except ValueError as e:
        raise SandboxSetupError(f"{where}: not valid JSON ({e}); the sandbox layer cannot be merged into it") from None
    if not isinstance(data, dict):
        raise SandboxSetupError(f"{where}: settings must be a JSON object")
    return data


def with_settings(command: list[str] | str, settings_file: str) -> list[str] | str:
    """`command` running Claude Code with `--settings settings_file`: the
    command's own --settings value replaced, or the flag added right after
    the `claude` word."""
    if isinstance(command, list):
        out = list(command)
        for number, word in enumerate(out):
            if word == "--settings" and number + 1 < len(out):
                out[number + 1] = settings_file
                return out
            if word.startswith("--settings="):
                out[number] = f"--settings={settings_file}"
                return out
        at = next(i for i, word in enumerate(out) if os.path.basename(word) == "claude")
        return [*out[: at + 1], "--settings", settings_file, *out[at + 1:]]
    quoted = shlex.quote(settings_file)
    m = SETTINGS_FLAG.search(command)
    if m:
        return command[: m.start()] + f"--settings {quoted}" + command[m.end():]
    m = CLAUDE_WORD.search(command)
    assert m is not None
    return command[: m.end()] + f" --settings {quoted}" + command[m.end():]


def write_agent_settings(root: str, state_dir: str, command: list[str] | str, layer: dict, name: str) -> str:
    """Write the layer (merged with the command's own --settings) into
    .ralph/protected/; the path of the file."""
    value = user_settings_value(command)
    settings = merge_settings(read_user_settings(root, value), layer) if value is not None else layer
    os.makedirs(protected_dir(state_dir), exist_ok=True)
    path = os.path.join(protected_dir(state_dir), name)
    atomic_write(path, json.dumps(settings, indent=1) + "\n")
    return path
