"""Loading lifecycle hooks: every error at once with file and line, aliases,
global + project merge, disable_global_hooks, and the `ralph init` template."""
from __future__ import annotations

import os
import re

import pytest

from ralph.config.schema import ConfigError
from ralph.loop.lifecycle.config import require_valid
from tests.lifecycle_support import HookProject

BROKEN = """\
[loop]
max_iterations = 3

[hooks]
dir_timeout = "soon"

[[hooks.post_iteration]]
command = "echo {{nope}}"
when = "${ITERATION} % == 2"

[[hooks.on_iteration_complete]]
command = "ruff check ."
timeout = -1
bogus = 1
on_failure = "explode"

[[hooks.on_error]]
when = "${NOPE} == 1"

[[hooks.on_eror]]
command = "x"

[[hooks.session_start]]
type = "carrier-pigeon"
command = "x"

[[hooks.pre_iteration]]
command = "echo ok"
env = { RALPH_STORY_ID = "x", N = 3 }
"""


def test_every_error_is_reported_at_once_with_file_and_line(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, BROKEN)
    with pytest.raises(ConfigError) as caught:
        require_valid(p.hooks(monkeypatch))
    message = str(caught.value)
    lines = message.splitlines()[1:]
    path = p.config_path
    expected = [
        (5, "[hooks] dir_timeout: must be a number"),
        (8, "[hooks.post_iteration] command: unknown template variable {{nope}}"),
        (9, "[hooks.post_iteration] when: expected a value at column 16"),
        (13, "[hooks.on_iteration_complete] timeout: must be >= 0.001, got -1"),
        (14, "[hooks.on_iteration_complete] unknown key 'bogus'"),
        (15, "[hooks.on_iteration_complete] on_failure: must be one of 'continue', 'abort', 'retry'"),
        (17, "[hooks.on_error] a shell hook needs command"),
        (18, "[hooks.on_error] when: unknown variable ${NOPE} at column 1"),
        (20, "[hooks] unknown hook point or key 'on_eror'"),
        (24, "[hooks.session_start] type: unknown action type 'carrier-pigeon'"),
        (29, "[hooks.pre_iteration] env.RALPH_STORY_ID: RALPH_* names carry the hook context"),
        (29, "[hooks.pre_iteration] env.N must be a string"),
    ]
    assert message.startswith(f"{len(expected)} hook configuration error(s):")
    assert len(lines) == len(expected), message
    for (line, text), got in zip(expected, lines):
        assert got.strip().startswith(f"{path}:{line}: {text}"), (got, line, text)


def test_dry_run_reports_every_hook_error_and_exits_2(tmp_path) -> None:
    from tests.loop_support import Project

    p = Project(tmp_path, "- [ ] US-001: x\n", config=BROKEN)
    result = p.run_loop("--dry-run", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert result.returncode == 2
    assert "12 hook configuration error(s)" in result.stderr
    assert len(re.findall(r"ralph\.toml:\d+: \[hooks", result.stderr)) == 12


def test_aliases_land_on_their_points(tmp_path, monkeypatch) -> None:
    config = "".join(f'[[hooks.{name}]]\ncommand = "echo {name}"\n\n' for name in (
        "on_session_start", "on_iteration_start", "on_iteration_complete", "on_stage_complete",
        "on_session_complete", "started", "next_iteration", "finished"))
    hooks = require_valid(HookProject(tmp_path, config).hooks(monkeypatch))
    assert {p: [s.config_name for s in specs] for p, specs in hooks.by_point.items() if specs} == {
        "session_start": ["on_session_start", "started"],
        "pre_iteration": ["on_iteration_start", "next_iteration"],
        "post_iteration": ["on_iteration_complete"],
        "stage_complete": ["on_stage_complete"],
        "session_end": ["on_session_complete", "finished"],
    }


GLOBAL = '[[hooks.post_iteration]]\ncommand = "@RECORD@ global"\n\n[[hooks.session_end]]\ncommand = "@RECORD@ global-end"\n'


def test_global_hooks_run_before_the_projects(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.post_iteration]]\ncommand = "@RECORD@ project"\n', global_config=GLOBAL)
    p.dir_hook("finished", "exit 0")
    hooks = require_valid(p.hooks(monkeypatch))
    assert [(s.source, s.get("command").split()[-1]) for s in hooks.by_point["post_iteration"]] == [
        ("global", "global"), ("project", "project")]
    assert [s.source for s in hooks.by_point["session_end"]] == ["hooks dir", "global"]
    engine = p.engine(monkeypatch)
    engine.fire("post_iteration", {"iteration": 1})
    assert [r["argv"] for r in p.records()] == [["global"], ["project"]]


def test_disable_global_hooks(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[hooks]\ndisable_global_hooks = true\n\n[[hooks.post_iteration]]\ncommand = "@RECORD@ project"\n',
                    global_config=GLOBAL)
    hooks = require_valid(p.hooks(monkeypatch))
    assert [s.source for s in hooks.all()] == ["project"]
    assert any("global hooks not loaded" in w for w in hooks.warnings)


def test_broken_global_file_is_named(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, "", global_config="[[hooks.post_iteration]]\ncommand = = 'x'\n")
    with pytest.raises(ConfigError, match=r"hooks\.toml:2: invalid TOML"):
        require_valid(p.hooks(monkeypatch))


def test_disable_global_hooks_in_the_global_file_is_an_error(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, "", global_config="[hooks]\ndisable_global_hooks = true\n")
    with pytest.raises(ConfigError, match=r"hooks\.toml:2: \[hooks\] disable_global_hooks belongs in a project"):
        require_valid(p.hooks(monkeypatch))


def test_defaults_are_filled_in(tmp_path, monkeypatch) -> None:
    hooks = require_valid(HookProject(tmp_path, '[[hooks.post_iteration]]\ncommand = "true"\n').hooks(monkeypatch))
    [spec] = hooks.by_point["post_iteration"]
    assert {k: spec[k] for k in ("type", "timeout", "await", "on_failure", "retries", "retry_delay", "pipe_output", "enabled")} == {
        "type": "shell", "timeout": 30, "await": True, "on_failure": "continue", "retries": 3, "retry_delay": 5,
        "pipe_output": False, "enabled": True}


def test_the_init_template_is_valid_with_every_key_uncommented(tmp_path, monkeypatch) -> None:
    from ralph.commands.init import config_text

    text = config_text().decode("utf-8")  # the template with its defaults filled in from the schema
    uncommented = re.sub(r"(?m)^# ((?:\[|[a-z_]+ =).*)$", r"\1", text)
    assert uncommented.count("[[hooks.") == 4
    p = HookProject(tmp_path, uncommented)
    hooks = require_valid(p.hooks(monkeypatch))
    from ralph.loop.lifecycle.config import COMMON_KEYS
    from ralph.loop.lifecycle.shell_config import KEYS

    [lint] = hooks.by_point["post_iteration"]
    assert set(COMMON_KEYS) | set(KEYS) <= set(lint.table) and lint["name"] == "lint"
    shown = set(re.findall(r"(?m)^# ([a-z_]+) =", text))
    assert set(COMMON_KEYS) | set(KEYS) | {"disable_global_hooks", "dir", "dir_timeout"} <= shown | {"prompt"}


def test_the_config_check_hands_its_validated_hooks_to_the_load_once(tmp_path, monkeypatch) -> None:
    """ralph-loop checks ralph.toml (every section), then loads its hooks: the
    project file's hooks are validated once, handed over for the same text
    only, and never shared between two loads."""
    from ralph.loop.config_check import check_config
    from ralph.loop.lifecycle import config as hook_config

    p = HookProject(tmp_path, '[hooks]\ndir_timeout = 7\n\n[[hooks.post_iteration]]\nname = "p"\ncommand = "@RECORD@ project"\n'
                              'when = "${ITERATION} > 1"\n',
                    global_config='[hooks]\ndir = "elsewhere"\n\n' + GLOBAL)
    validated: list[str] = []
    original = hook_config.file_hooks
    monkeypatch.setattr(hook_config, "file_hooks", lambda data, text, path, source: validated.append(source) or original(data, text, path, source))

    def summary(hooks: object) -> list:
        return [(s.point, s.source, s.get("command"), s.condition, s.disabled) for s in hooks.all()]  # type: ignore[attr-defined]

    check_config(p.root, p.environ())
    handed = require_valid(p.hooks(monkeypatch))
    assert validated == ["project", "global"]  # the project file was not validated again
    again = require_valid(p.hooks(monkeypatch))
    assert validated == ["project", "global", "global", "project"]  # the hand-over is taken once
    assert summary(handed) == summary(again) and [s.source for s in handed.by_point["post_iteration"]] == ["global", "project"]
    assert handed.settings == again.settings == {"disable_global_hooks": False, "dir": "elsewhere", "dir_timeout": 7, "dir_on_failure": "continue"}
    assert not {id(s) for s in handed.all()} & {id(s) for s in again.all()}
    check_config(p.root, p.environ())
    p.write_config('[[hooks.post_iteration]]\ncommand = "@RECORD@ changed"\n')  # edited in between: validated afresh
    assert [s.get("command").split()[-1] for s in p.hooks(monkeypatch).by_point["post_iteration"]] == ["global", "changed"]
