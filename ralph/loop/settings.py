"""Loop settings: defaults < ralph.toml [loop] (and [[loop.stages]]) < flags.

Every bad value raises ConfigError naming the file and line of the key, so
`ralph-loop` can print it and exit 2. LOOP_TABLE and STAGE_TABLE declare the
two tables (ralph.config.registry names them).
"""
from __future__ import annotations

import os

from ralph.config.locate import key_line
from ralph.config.reading import section
from ralph.config.schema import ConfigError, Key, Table, validate_table

MODES = ("build", "plan")
EXHAUSTED_ACTIONS = ("skip", "stop")

LOOP_KEYS: dict[str, Key] = {
    "agent_command": Key("claude -p --dangerously-skip-permissions", "command", None,
                         "the agent: a string runs through /bin/sh -c, a list as is; the prompt arrives on stdin"),
    "timeout_seconds": Key(1800, "number", 1, "wall-time limit per agent run, in seconds"),
    "verify_command": Key(None, "command?", None, "must pass before a story counts as done (string or list)"),
    "verify_timeout_seconds": Key(1800, "number", 1, "wall-time limit of the verify command, in seconds"),
    "max_iterations": Key(10, "int", 1, "iterations per stage (--max-iterations also caps the whole run)"),
    "max_iterations_per_story": Key(5, "int", 0, "iterations one story may take (0: unlimited)"),
    "max_minutes_per_story": Key(60, "number", 0, "agent and verify minutes per story in this run (0: unlimited)"),
    "on_story_exhausted": Key("skip", "choice:" + "|".join(EXHAUSTED_ACTIONS), None,
                              "a story that used up its budget is marked blocked: skip moves on, stop ends the run"),
    "no_progress_limit": Key(3, "int", 0, "stop after N iterations in a row with no commit and no story state change (0: never)"),
    "plan": Key(None, "path?", None, "the plan file (default: .ralph/plan.md, .ralph/prd.json or the newest .ralph/PRD-N/)"),
    "progress": Key(None, "path?", None, "the progress notes (default: progress.md beside the plan)"),
    "prompt": Key(None, "path?", None, "prompt template of build iterations (default: the packaged PROMPT.md)"),
    "plan_prompt": Key(None, "path?", None, "prompt template of plan iterations (default: the packaged one)"),
    "rollback_on_verify_fail": Key(True, "bool", None, "a failed verify saves the work to a ref and resets the tree to the checkpoint"),
    # guard denials in one iteration that end it (0: never); iterations of one
    # story ended that way before the story is marked blocked (0: never)
    "max_guard_denials": Key(5, "int", 0, "push/merge guard denials that end an iteration (0: never)"),
    "max_stuck_iterations": Key(2, "int", 0, "iterations of one story ended by denials before it is blocked (0: never)"),
    "skill_shell": Key(False, "bool", None, "let skills' and slash commands' inline shell lines (!`cmd`) run in the agent's session "
                       "(each still judged by the guard); false sets Claude Code's disableSkillShellExecution"),
    "agent_tools": Key(True, "bool", None, "give a Claude Code agent the tools of `ralph mcp` (complete_story, report_blocked, "
                       "request_merge, story_status); needs ralph-hooks[mcp]"),
    # the overnight run: budgets (the client's cost estimate), usage-limit waits, transient retries, hangs
    "max_cost_usd": Key(None, "number?", 0, "stop the run (finish budget) once its agents cost this much, in USD (the client's estimate)"),
    "max_cost_usd_per_story": Key(None, "number?", 0, "mark a story blocked once its iterations cost this much, in USD"),
    "max_tokens": Key(None, "int?", 0, "stop the run (finish budget) once its agents used this many input + output tokens"),
    "retry_backoff_seconds": Key(60, "number", 0, "first wait after a usage limit without a reset time, or a transient API error; doubles each time"),
    "max_wait_minutes": Key(360, "number", 0, "the longest the run waits for usage limits in a row before it finishes rate_limited"),
    "max_transient_retries": Key(5, "int", 0, "retries in a row after transient API errors (529, 5xx, connection lost) before one counts as a failure"),
    "idle_timeout_seconds": Key(600, "number", 0, "an agent that prints nothing this long is hung: its group is ended, the iteration retried once (0: never)"),
    "mode": Key("build", "choice:" + "|".join(MODES), None, "build or plan: used when no stages are configured"),
    "branch": Key("auto", "str", None, 'the branch the run commits on: "auto" (ralph/<plan name>, or prd.json\'s branchName), '
                  '"current" (the checked-out branch) or a branch name'),
    "stages": Key(None, "tables", None, "a pipeline of stages: [[loop.stages]] tables, run in order"),
}
STAGE_KEYS: dict[str, Key] = {
    "name": Key(None, "str", None, "the stage's name (unique)"),
    "mode": Key("build", "choice:" + "|".join(MODES), None, "build or plan"),
    "max_iterations": Key(None, "int?", 1, "iterations of this stage (default: [loop] max_iterations)"),
    "prompt": Key(None, "path?", None, "its prompt template (default: [loop] prompt or plan_prompt)"),
    "verify_command": Key(None, "command?", None, "its verify command (default: [loop] verify_command in build mode)"),
    "agent_command": Key(None, "command?", None, "its agent (default: [loop] agent_command)"),
    "timeout_seconds": Key(None, "number?", 1, "seconds one agent run may take (default: [loop] timeout_seconds)"),
}


def check_stages(config: dict, path: str | None) -> None:
    """What only the merged settings can tell ([[loop.stages]]: each named,
    names unique), once every [loop] key is valid. Raises ConfigError."""
    loop_settings(os.path.dirname(path or ".") or ".", config, path, {})


LOOP_TABLE = Table("loop", LOOP_KEYS, "ralph-loop: the agent, the verify command, budgets and the plan", check=check_stages,
                   parts=("ralph.loop.settings:STAGE_TABLE",))
STAGE_TABLE = Table("loop.stages", STAGE_KEYS, "one stage of a pipeline; unset keys take [loop]'s", array=True)


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
