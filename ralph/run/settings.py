"""Loop settings: defaults < ralph.toml [loop] (and [[loop.stages]]) < flags.

Every bad value raises ConfigError naming the file and line of the key, so
`ralph-loop` can print it and exit 2. ralph.config.tables.loop declares the
two tables; check_stages() is what only the merged settings can tell (the
whole-file check, ralph.loop.config_check, runs it).
"""
from __future__ import annotations

import os

from ralph.config.locate import key_line
from ralph.config.reading import section
from ralph.config.schema import ConfigError, validate_table
from ralph.config.tables.loop import LOOP_KEYS, STAGE_KEYS


def check_stages(config: dict, path: str | None) -> None:
    """What only the merged settings can tell ([[loop.stages]]: each named,
    names unique), once every [loop] key is valid. Raises ConfigError."""
    loop_settings(os.path.dirname(path or ".") or ".", config, path, {})


class Stage:
    """One pipeline stage: how many iterations, which prompt, which verify."""

    __slots__ = ("name", "mode", "max_iterations", "prompt", "verify_command", "agent_command", "timeout_seconds")

    def __init__(self, name: str, mode: str, max_iterations: int, prompt: str | None,
                 verify_command: list[str] | str | None, agent_command: list[str] | str, timeout_seconds: float) -> None:
        self.name = name
        self.mode = mode
        self.max_iterations = max_iterations
        self.prompt = prompt
        self.verify_command = verify_command
        self.agent_command = agent_command
        self.timeout_seconds = timeout_seconds

    def __repr__(self) -> str:
        return f"Stage({self.name!r}, mode={self.mode!r}, max_iterations={self.max_iterations})"


class LoopSettings:
    __slots__ = ("root", "config_path", "values", "stages", "once", "dry_run", "quiet", "max_total_iterations", "allow_dirty")

    def __init__(self, root: str, config_path: str | None, values: dict, stages: list[Stage]) -> None:
        self.root = root
        self.config_path = config_path
        self.values = values
        self.stages = stages
        self.once = False
        self.dry_run = False
        self.quiet = False
        self.max_total_iterations: int | None = None
        self.allow_dirty = False  # --allow-dirty: start on a tree with uncommitted changes

    def __getitem__(self, key: str) -> object:
        return self.values[key]


def loop_settings(root: str, config: dict, config_path: str | None, flags: dict) -> LoopSettings:
    """Merge defaults, the [loop] table and command-line flags (non-None ones win)."""
    table = section(config, "loop", config_path or "ralph.toml")
    values = {key: declared.default for key, declared in LOOP_KEYS.items() if key != "stages"}
    values.update(validate_table(table, LOOP_KEYS, config_path, "loop"))
    stages_raw = table.get("stages")
    stage_tables: list[dict] = []
    if stages_raw is not None:
        if not isinstance(stages_raw, list) or not all(isinstance(s, dict) for s in stages_raw):
            raise ConfigError(f"{key_line(config_path, 'stages')}: [loop] stages: must be [[loop.stages]] tables; write each stage as a [[loop.stages]] table")
        for number, stage in enumerate(stages_raw):
            checked = validate_table(stage, STAGE_KEYS, config_path, "loop.stages", number)
            if not checked.get("name"):
                raise ConfigError(f"{key_line(config_path, 'name', 'loop.stages', number)}: [loop.stages] name: stage #{number + 1} has none; add name = \"...\"")
            stage_tables.append(checked)
    for key, value in flags.items():
        if value is not None:
            values[key] = value
    if flags.get("mode") is not None or not stage_tables:
        # a --mode flag (or no pipeline) runs one stage of that mode
        stage_tables = [{"name": values["mode"], "mode": values["mode"]}]
    names = [s["name"] for s in stage_tables]
    if len(set(names)) != len(names):
        raise ConfigError(f"{key_line(config_path, 'stages', 'loop.stages')}: [loop.stages] name: names must be unique, got {names}; rename the repeated stage")
    stages = [
        Stage(
            name=s["name"],
            mode=s.get("mode") or "build",
            max_iterations=int(s.get("max_iterations") or values["max_iterations"]),
            prompt=s.get("prompt") or (values["plan_prompt"] if s.get("mode") == "plan" else values["prompt"]),
            verify_command=s["verify_command"] if s.get("verify_command") is not None else (values["verify_command"] if (s.get("mode") or "build") == "build" else None),
            agent_command=s.get("agent_command") or values["agent_command"],
            timeout_seconds=s.get("timeout_seconds") or values["timeout_seconds"],
        )
        for s in stage_tables
    ]
    if flags.get("verify_command") is not None:
        for stage in stages:
            if stage.mode == "build":
                stage.verify_command = flags["verify_command"]
    settings = LoopSettings(root, config_path, values, stages)
    # --max-iterations also caps the whole run, across stages
    settings.max_total_iterations = flags.get("max_iterations")
    return settings


def resolve(root: str, path: str) -> str:
    return path if os.path.isabs(path) else os.path.join(root, path)
