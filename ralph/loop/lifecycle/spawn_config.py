"""The spawn action (`type = "spawn"`): run a child ralph-loop on a pipeline.

A pipeline is a folder `.ralph/pipelines/<name>/` holding

    plan.md (or prd.json)   the child's stories (required); copied, never edited
    PROMPT.md               its prompt template (optional; default: the packaged one)
    ralph.toml              its config: [loop], [guard], its own hooks (optional)

Each spawn gets a fresh directory `.ralph/children/<point>-<iteration>/`
(`.2`, `.3`... when that name is taken, e.g. by a retry) holding
`inputs.json` (the `inputs` table, variables substituted), the copies of the
plan and config, the child's own run.json, events, progress and logs
(RALPH_STATE_DIR points there), `spawn.json` (what was started, for `ralph
status`), and `output.json`: whatever the child agent or one of its hooks
writes to the path in $RALPH_SPAWN_OUTPUT_FILE. An awaited child's
output.json is exported to the parent's later actions as RALPH_SPAWN_OUTPUT.

The child works on the same repository (its stories commit like any loop's)
but sees only the environment it is given: a short list of basics (PATH,
HOME, locale, terminal, git identity), its spawn context (RALPH_SPAWN_*) and
the action's `env` table, where the user passes what the child may know
(`ANTHROPIC_API_KEY = "${ANTHROPIC_API_KEY}"`). Children nest up to
`max_depth` (RALPH_SPAWN_DEPTH counts).
"""
from __future__ import annotations

import os

from ralph.config.tables.hooks import SPAWN_KEYS as KEYS  # KEYS: the action contract (ralph.loop.lifecycle.actions)
from ralph.config.schema import check_keys
from ralph.loop.lifecycle import template
from ralph.loop.lifecycle.webhook_config import strings_in
from ralph.state.locations import STATE_DIR_NAME

PIPELINES_DIR = "pipelines"
CHILDREN_DIR = "children"
PLAN_FILES = ("plan.md", "prd.json")
OUTPUT_FILE = "output.json"
INPUTS_FILE = "inputs.json"
SPAWN_FILE = "spawn.json"
OUTPUT_CAP = 64 * 1024  # bytes of output.json exported (an env value must stay well under 128 KiB)
DEPTH_VAR = "RALPH_SPAWN_DEPTH"
# what a child inherits without being told: nothing secret
BASE_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ",
            "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
            "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")


def validate(table: dict, where: object, exports: dict[str, str]) -> list[str]:
    name = "hooks"
    pipeline = table.get("pipeline")
    if pipeline is None:
        return [f"{where}: [{name}] a spawn hook needs pipeline = \"<name>\" (a folder in .ralph/pipelines/)"]
    errors = check_keys({k: v for k, v in table.items() if k in ("pipeline", "max_depth")}, KEYS, where, name)  # type: ignore[arg-type]
    if isinstance(pipeline, str) and not valid_name(pipeline):
        errors.append(f"{where.key('pipeline')}: [{name}] pipeline: {pipeline!r} must be a folder name in .ralph/pipelines/ "  # type: ignore[attr-defined]
                      "(letters, digits, '-', '_', '.'; no '/')")
    for key in ("inputs", "env"):
        value = table.get(key, {})
        if not isinstance(value, dict):
            errors.append(f"{where.key(key)}: [{name}] {key} must be a table, got {value!r}")  # type: ignore[attr-defined]
            continue
        for text in strings_in(value):
            errors += [f"{where.key(key)}: [{name}] {key}: {p}" for p in template.check(text, exports)]  # type: ignore[attr-defined]
        if key == "env":
            bad = [k for k, v in value.items() if not isinstance(v, str) or not k or "=" in k]
            if bad:
                errors.append(f"{where.key('env')}: [{name}] env: {', '.join(map(repr, bad))} must be NAME = \"value\" strings")  # type: ignore[attr-defined]
    return errors


def valid_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and all(c.isalnum() or c in "-_." for c in name)


def pipeline_dir(root: str, name: str) -> str:
    """Always the project's `.ralph/pipelines/<name>/` (a child's own state dir holds none)."""
    return os.path.join(root, STATE_DIR_NAME, PIPELINES_DIR, name)
