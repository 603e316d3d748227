"""What a tool call acts on, found the way the hooks find it: the project
($CLAUDE_PROJECT_DIR, else the git toplevel above the working directory),
its state directory, the active run in run.json and the loop's context for
that iteration (ralph.run.tool_calls). Found again on every call: the server
lives as long as the agent's session, the loop moves on between calls only
across sessions, and a person may start or stop a run while an interactive
session is open.
"""
from __future__ import annotations

import os
import shutil

from ralph.config.reading import load_config
from ralph.run import tool_calls as records
from ralph.run.paths import progress_path_for, relative
from ralph.run.settings import loop_settings
from ralph.run.state import ActiveRun, load_active_run
from ralph.sandbox import bwrap_prefix, probe, sandbox_config, settings_layer
from ralph.state.locations import config_path, project_root, state_dir


class Answer:
    """What a tool tells the agent: text, and whether it is an error (the
    client shows the agent `is_error: true`, so it keeps working)."""

    __slots__ = ("text", "is_error")

    def __init__(self, text: str, is_error: bool = False) -> None:
        self.text = text
        self.is_error = is_error

    def __repr__(self) -> str:
        return f"Answer(is_error={self.is_error}, {self.text[:80]!r})"


class VerifySetup:
    """The verify command a call runs, as the loop would run it."""

    __slots__ = ("command", "timeout", "prefix", "where")

    def __init__(self, command: list[str] | str | None, timeout: float, prefix: list[str], where: str) -> None:
        self.command = command
        self.timeout = timeout
        self.prefix = prefix  # bubblewrap's argv before the command, when the verify runs sandboxed
        self.where = where  # where the command comes from, for the answer

    def argv(self) -> list[str] | str:
        assert self.command is not None
        if not self.prefix:
            return self.command
        words = ["/bin/sh", "-c", self.command] if isinstance(self.command, str) else list(self.command)
        return [*self.prefix, *words]


class ToolContext:
    """The project, its state directory, the active run and the loop's context for it."""

    __slots__ = ("root", "state_dir", "environ", "run", "loop")

    def __init__(self, root: str, state_dir: str, environ: dict[str, str] | os._Environ[str],
                 run: ActiveRun | None, loop: dict | None) -> None:
        self.root = root
        self.state_dir = state_dir
        self.environ = environ
        self.run = run  # run.json while a loop iteration works on a story
        self.loop = loop  # the loop's context for that very iteration (agent-tools.json), or None

    @property
    def story_id(self) -> str | None:
        """The current story, or None when no build iteration is running."""
        return self.run.story_id if self.run is not None and self.run.stage == "build" else None

    def path(self, key: str, default: str) -> str:
        """A path from the loop's context (absolute), else `default` under the root."""
        value = (self.loop or {}).get(key)
        if isinstance(value, str) and value:
            return value
        return os.path.join(self.root, default)

    @property
    def plan_path(self) -> str:
        assert self.run is not None
        return self.path("plan", self.run.source or ".ralph/plan.md")

    @property
    def progress_path(self) -> str:
        return self.path("progress", progress_path_for(self.plan_path))

    def shown(self, path: str) -> str:
        return relative(self.root, path)

    def no_story(self) -> str:
        """The sentence every tool starts with outside a loop iteration."""
        if self.run is not None and self.run.stage != "build":
            return f"There is no current story: the ralph-loop run in {self.root} is in a {self.run.stage} stage."
        return f"There is no current story: no ralph-loop run is working on a story in {self.root}."

    def wrong_story(self, story_id: str) -> str | None:
        """Refusal text when `story_id` is not the current story; None when it is."""
        current = self.story_id
        if current is None or story_id.strip() == current:
            return None
        title = f" ({self.run.story_title})" if self.run is not None and self.run.story_title else ""
        return (f"Refused: {story_id!r} is not the current story. The current story is {current}{title}; "
                f"this iteration works on {current} only. Call the tool again with story_id {current!r}.")

    def verify_setup(self) -> VerifySetup:
        """In a loop iteration: the loop's verify command for this stage, its
        timeout and sandbox. Outside one: `[loop] verify_command` of ralph.toml,
        under bubblewrap when `[sandbox]` asks for it and it runs here.
        Raises ConfigError for a ralph.toml that cannot be read."""
        if self.loop is not None:
            command = self.loop.get("verify_command")
            prefix = self.loop.get("verify_prefix") or []
            return VerifySetup(command if isinstance(command, (str, list)) else None,
                               float(self.loop.get("verify_timeout_seconds") or 1800),
                               [str(w) for w in prefix] if isinstance(prefix, list) else [], "the loop's verify command")
        path = config_path(self.root, self.environ)
        config = load_config(self.root, self.environ)
        settings = loop_settings(self.root, config, path, {})
        command = settings["verify_command"]
        prefix: list[str] = []
        if command is not None:
            values = sandbox_config(config, path)
            if values["enabled"] and values["verify"] and probe()[0]:
                prefix = bwrap_prefix(settings_layer(self.root, config, path), shutil.which("bwrap") or "bwrap")
        return VerifySetup(command, float(settings["verify_timeout_seconds"]), prefix,
                           f"[loop] verify_command in {self.shown(path) if path else 'ralph.toml'}")


def find(environ: dict[str, str] | os._Environ[str] | None = None, cwd: str | None = None) -> ToolContext:
    """The context of a call made now."""
    environ = os.environ if environ is None else environ
    root = project_root(cwd or os.getcwd(), environ)
    state = state_dir(root)
    run = load_active_run(state)
    loop = records.read_iteration(state, run.run_id, run.iteration) if run is not None else None
    return ToolContext(root, state, environ, run, loop)
