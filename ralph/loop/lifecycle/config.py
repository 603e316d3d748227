"""Loading and validating lifecycle hooks: `[[hooks.<point>]]` tables from the
global `hooks.toml` (platformdirs user config dir) and the project's
ralph.toml, in that order, plus the executables in `.ralph/hooks/`.

Every problem is collected, each as "<file>:<line>: [hooks.<point>] key: what
is wrong; how to fix", so `ralph-loop --dry-run` reports them all at once.
Import-light (no subprocess, no `re`, and no tomllib for an unchanged file):
`ralph-loop --dry-run` validates through here. An action type's own module is
imported only for a hook of that type (ralph.loop.lifecycle.action_types.ACTIONS).
ralph.config.tables.hooks declares [hooks]: its settings (SETTINGS_KEYS) and
the keys every [[hooks.<point>]] table has, whatever its type (COMMON_KEYS).
"""
from __future__ import annotations

import os

from ralph.config.locate import KEY_CHARS, Locator, Where
from ralph.config.reading import cached_parse, parse_config, read_text
from ralph.config.schema import ConfigError, check_keys
from ralph.config.tables.hooks import COMMON_KEYS, SETTINGS_KEYS
from ralph.loop.lifecycle import condition as conditions
from ralph.loop.lifecycle.action_types import ACTIONS, action_module, exported_names
from ralph.loop.lifecycle.context import key_for
from ralph.loop.lifecycle.points import ALIASES, DIR_HOOKS, NO_PIPE, POINTS, canonical
from ralph.plugins import load
from ralph.state.locations import GLOBAL_HOOKS_FILE as GLOBAL_FILE
from ralph.state.locations import global_hooks_path

# environment variables over [hooks] settings (fresher's FRESHER_HOOK_TIMEOUT, FRESHER_HOOK_FAIL_BEHAVIOR)
ENV_SETTINGS = {"RALPH_HOOK_TIMEOUT": "dir_timeout", "RALPH_HOOK_FAIL_BEHAVIOR": "dir_on_failure"}
# [[hooks.<name>]] tables read by another part of ralph, not lifecycle points
# -> the module whose validate(config, path, text) checks them, imported only
# for a file that has such tables (load()): users' hooks on Claude Code events
OTHER_TABLES = {"event": "ralph.claude.event_command_select"}
FALSE_WORDS = ("0", "false", "no", "off")

class HookSpec:
    """One configured action at one point, validated, defaults filled in."""

    __slots__ = ("point", "config_name", "source", "where", "table", "condition", "disabled", "kind")

    def __init__(self, point: str, config_name: str, source: str, where: Where, table: dict,
                 condition: tuple | None = None, kind: str = "declared") -> None:
        self.point = point
        self.config_name = config_name  # as written (an alias, or the hooks-dir file name)
        self.source = source  # "global", "project" or "hooks dir"
        self.where = where
        self.table = table
        self.condition = condition
        self.disabled = ""  # why it will not run ("" when it will)
        self.kind = kind  # "declared" ([[hooks.x]]) or "dir" (.ralph/hooks/ executable: exit-code contract)

    def __getitem__(self, key: str) -> object:
        return self.table[key]

    def get(self, key: str, default: object = None) -> object:
        return self.table.get(key, default)

    @property
    def type(self) -> str:
        return str(self.table.get("type", "shell"))

    @property
    def label(self) -> str:
        """Short name for traces: its name, else the command or type."""
        if self.table.get("name"):
            return str(self.table["name"])
        command = self.table.get("command")
        if isinstance(command, list):
            command = " ".join(command)
        if isinstance(command, str):
            return command if len(command) <= 60 else command[:57] + "..."
        return self.type

    def __repr__(self) -> str:
        return f"HookSpec({self.point!r}, {self.label!r}, {self.where!s})"


class HookSet:
    """The merged hooks: per point in run order, plus warnings and settings."""

    def __init__(self) -> None:
        self.by_point: dict[str, list[HookSpec]] = {p: [] for p in POINTS}
        self.warnings: list[str] = []
        self.errors: list[str] = []
        self.settings: dict = {k: declared.default for k, declared in SETTINGS_KEYS.items()}
        self.files: list[str] = []  # config files read
        self.hooks_dir = ""

    def active(self, point: str) -> list[HookSpec]:
        return [h for h in self.by_point.get(point, []) if not h.disabled]

    def has(self, point: str) -> bool:
        return any(not h.disabled for h in self.by_point.get(point, []))

    def all(self) -> list[HookSpec]:
        return [h for p in POINTS for h in self.by_point[p]]


def read_toml(path: str) -> tuple[dict, str]:
    """(parsed, text) of a hooks file (ralph.toml or the global hooks.toml)."""
    text = read_text(path)
    return parse_config(text, path), text


# A project file's hooks as section_values() (the whole-file check of every
# section) found them, for the load_hooks() that follows it in the same
# process (ralph-loop checks its config, then loads its hooks): validating
# every hook twice was a tenth of a dry run. Taken once, so no HookSpec is
# shared, and only for the same path, text and parsed data.
_checked: dict[tuple[str, str], tuple[str, dict, HookSet]] = {}


def load_file_hooks(hooks: HookSet, data: dict, text: str, path: str, source: str) -> None:
    """Add the [[hooks.<point>]] tables of one parsed file to `hooks`."""
    checked = _checked.pop((path, source), None)
    if checked is not None and checked[0] == text and checked[1] == data:
        part = checked[2]
    else:
        part = file_hooks(data, text, path, source)
    for point, specs in part.by_point.items():
        hooks.by_point[point] += specs
    hooks.errors += part.errors
    hooks.warnings += part.warnings
    hooks.settings.update(part.settings)


def file_hooks(data: dict, text: str, path: str, source: str) -> HookSet:
    """The [[hooks.<point>]] tables of one parsed file, validated; .settings
    holds only the [hooks] settings the file sets."""
    hooks = HookSet()
    hooks.settings = {}
    section = data.get("hooks")
    if section is None:
        return hooks
    if not isinstance(section, dict):
        hooks.errors.append(f"{path}: hooks must be a table ([hooks] or [[hooks.<point>]]), got {type(section).__name__}")
        return hooks
    locator = Locator(path, text)
    exports = exported_names()
    settings_where = locator.settings_where()
    for name, value in section.items():
        if name in SETTINGS_KEYS:
            if source == "global" and name == "disable_global_hooks":
                hooks.errors.append(f"{settings_where.key(name)}: [hooks] disable_global_hooks belongs in a project's ralph.toml, not in the global {GLOBAL_FILE}")
                continue
            problems = check_keys({name: value}, SETTINGS_KEYS, settings_where, "hooks")
            if problems:
                hooks.errors += problems
            else:
                hooks.settings[name] = value
            continue
        if name in OTHER_TABLES:  # checked here too, used elsewhere
            hooks.errors += load(OTHER_TABLES[name]).validate(data, path, text)  # type: ignore[attr-defined]
            continue
        point = canonical(name)
        if point is None:
            known = ", ".join([*POINTS, *SETTINGS_KEYS])
            hooks.errors.append(f"{settings_where.key(name) if name in settings_where.keys else locator.where('hooks.' + name, 0)}: "
                                f"[hooks] unknown hook point or key {name!r}; known: {known} (aliases: {', '.join(ALIASES)})")
            continue
        if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
            hooks.errors.append(f"{locator.where('hooks.' + name, 0)}: [hooks] {name} must be a list of tables: write [[hooks.{name}]]")
            continue
        for occurrence, table in enumerate(value):
            where = locator.where(f"hooks.{name}", occurrence)
            spec = validate_table(hooks, point, name, table, where, source, exports)
            if spec is not None:
                hooks.by_point[point].append(spec)
    return hooks


def validate_table(hooks: HookSet, point: str, name: str, table: dict, where: Where, source: str,
                   exports: dict) -> HookSpec | None:
    """The hook as a HookSpec with defaults filled in; None (errors added) when invalid."""
    table_name = f"hooks.{name}"
    type_name = table.get("type", "shell")
    errors: list[str] = []
    module = action_module(type_name) if isinstance(type_name, str) else None
    if module is None:
        errors.append(f"{where.key('type')}: [{table_name}] type: unknown action type {type_name!r}; known: {', '.join(ACTIONS)}")
        hooks.errors += errors
        return None
    own_keys: dict = getattr(module, "KEYS", {})
    for key in table:
        if key not in COMMON_KEYS and key not in own_keys:
            known = ", ".join(sorted({*COMMON_KEYS, *own_keys}))
            errors.append(f"{where.key(key)}: [{table_name}] unknown key {key!r} for a {type_name} hook; known keys: {known}")
    errors += check_keys(table, COMMON_KEYS, where, table_name)
    errors += module.validate(table, where, exported_names())  # type: ignore[attr-defined]
    tree = None
    when = table.get("when")
    if isinstance(when, str):
        try:
            tree = conditions.parse(when)
            for var, column in conditions.variables(tree):
                if key_for(var, exports) is None:
                    errors.append(f"{where.key('when')}: [{table_name}] when: unknown variable ${{{var}}} at column {column}; "
                                  "use a context name such as ${ITERATION}, ${STAGE}, ${STORY_ID}, ${LAST_RESULT}")
        except conditions.ConditionError as e:
            errors.append(f"{where.key('when')}: [{table_name}] when: {e}; condition: {when!r}")
    if table.get("on_failure") != "retry" and "retries" in table:
        hooks.warnings.append(f"{where.key('retries')}: [{table_name}] retries only applies with on_failure = \"retry\"")
    if table.get("pipe_output") and point in NO_PIPE:
        hooks.warnings.append(f"{where.key('pipe_output')}: [{table_name}] pipe_output at {point} is only logged: no agent runs after it")
    if errors:
        hooks.errors += errors
        return None
    full = {k: declared.default for k, declared in COMMON_KEYS.items()}
    full.update({k: declared.default for k, declared in own_keys.items()})
    full.update(table)
    spec = HookSpec(point, name, source, where, full, tree)
    if not full["enabled"]:
        spec.disabled = f"enabled = false ({where.key('enabled')})"
    return spec


def env_flag(environ: dict | os._Environ, name: str) -> bool:
    value = environ.get(name)
    return value is None or value.strip().lower() not in FALSE_WORDS


def flag_name(name: str) -> str:
    """RALPH_HOOK_<NAME>_ENABLED, every character but ASCII letters and digits as `_`."""
    return "RALPH_HOOK_" + "".join(c if c in KEY_CHARS and c not in "_-" else "_" for c in name).upper() + "_ENABLED"


def load_dir_hooks(hooks: HookSet, root: str) -> None:
    """The executables in the hooks dir, each run with the exit-code contract."""
    directory = str(hooks.settings["dir"])
    directory = directory if os.path.isabs(directory) else os.path.join(root, directory)
    hooks.hooks_dir = directory
    try:
        entries = sorted(os.listdir(directory))
    except OSError:
        return
    for entry in entries:
        path = os.path.join(directory, entry)
        if entry.startswith(".") or entry == "custom" or entry.endswith((".md", ".sample", ".txt")):
            continue
        point = DIR_HOOKS.get(entry)
        if point is None:
            if os.path.isfile(path):
                hooks.warnings.append(f"{path}: not a hook name (known: {', '.join(DIR_HOOKS)}); helpers belong in custom/; not run")
            continue
        table = {k: declared.default for k, declared in COMMON_KEYS.items()}
        table.update({"command": [path], "timeout": hooks.settings["dir_timeout"], "name": entry,
                      "working_dir": None, "env": {}})
        spec = HookSpec(point, entry, "hooks dir", Where(path, None), table, kind="dir")
        if not os.path.isfile(path):
            spec.disabled = "not a regular file"
        elif not os.access(path, os.X_OK):
            if hooks.settings["dir_on_failure"] == "abort":  # fail closed: it runs, cannot start, and stops the loop
                hooks.warnings.append(f"{path}: not executable: with dir_on_failure = abort the loop stops at {point}; "
                                      "make it executable with chmod +x")
            else:
                spec.disabled = f"not executable (chmod +x {path})"
                hooks.warnings.append(f"{path}: not executable, so it is not run; make it executable with chmod +x")
        hooks.by_point[point].insert(0, spec)  # the directory hook has the first word at its point


def apply_env_settings(hooks: HookSet, environ: dict | os._Environ) -> None:
    """RALPH_HOOK_TIMEOUT and RALPH_HOOK_FAIL_BEHAVIOR over the [hooks] settings; a bad value is an error naming the variable."""
    for variable, key in ENV_SETTINGS.items():
        value = environ.get(variable, "").strip()
        if not value:
            continue
        declared = SETTINGS_KEYS[key]
        parsed: object = value
        if declared.kind == "number":
            try:
                parsed = float(value)
            except ValueError:
                parsed = value
        problems = check_keys({key: parsed}, SETTINGS_KEYS, Where(f"environment {variable}", None), "hooks")
        if problems:
            hooks.errors.append(f"environment {variable}={value!r}: " + problems[0].rsplit(": ", 1)[-1]
                                + f" ({variable} sets [hooks] {key})")
        else:
            hooks.settings[key] = parsed


def apply_env_flags(hooks: HookSet, environ: dict | os._Environ) -> None:
    master = env_flag(environ, "RALPH_HOOKS_ENABLED")
    for spec in hooks.all():
        if spec.disabled:
            continue
        if not master:
            spec.disabled = "RALPH_HOOKS_ENABLED=false"
            continue
        name = spec.get("name")
        if isinstance(name, str) and name:
            flag = flag_name(name)
            if not env_flag(environ, flag):
                spec.disabled = f"{flag}=false"


def load_hooks(root: str, config: dict | None = None, config_path: str | None = None,
               environ: dict | os._Environ = os.environ, include_global: bool = True) -> HookSet:
    """Every lifecycle hook of the project, merged; errors collected in .errors."""
    hooks = HookSet()
    project_text = ""
    if config_path and os.path.isfile(config_path):
        try:
            # the project's parse cache: an unchanged ralph.toml costs no tomllib import
            project_text = read_text(config_path)
            config = cached_parse(root, project_text, config_path)
        except ConfigError as e:
            hooks.errors.append(str(e))
            config = {}
    config = config or {}
    section = config.get("hooks") if isinstance(config.get("hooks"), dict) else {}
    disable_global = section.get("disable_global_hooks") is True
    global_path = global_hooks_path(environ) if include_global else ""
    if global_path and os.path.isfile(global_path):
        if disable_global:
            hooks.warnings.append(f"{global_path}: global hooks not loaded (disable_global_hooks = true in {config_path})")
        else:
            try:
                data, text = read_toml(global_path)
                load_file_hooks(hooks, data, text, global_path, "global")
                hooks.files.append(global_path)
            except ConfigError as e:
                hooks.errors.append(str(e))
    if config_path and config:
        load_file_hooks(hooks, config, project_text, config_path, "project")
        hooks.files.append(config_path)
    apply_env_settings(hooks, environ)
    load_dir_hooks(hooks, root)
    apply_env_flags(hooks, environ)
    return hooks


def section_values(config: dict, path: str | None) -> dict:
    """[hooks] of the project's ralph.toml as the whole-file check reads it
    (ralph.loop.config_check): every lifecycle and event hook table checked,
    each error with file:line; raises ConfigError listing them all. Its
    settings, defaults filled in."""
    text = ""
    if path and os.path.isfile(path):
        try:
            text = read_text(path)
        except ConfigError:
            pass  # the read error itself is reported by the caller's load
    part = file_hooks(config, text, path or "ralph.toml", "project")
    require_valid(part)
    _checked[(path or "ralph.toml", "project")] = (text, config, part)
    settings = {k: declared.default for k, declared in SETTINGS_KEYS.items()}
    settings.update(part.settings)
    return settings


def require_valid(hooks: HookSet) -> HookSet:
    if hooks.errors:
        def position(error: str) -> tuple[str, int]:
            path, _, rest = error.partition(":")
            line = rest.split(":", 1)[0]
            return path, int(line) if line.isdigit() else 0

        errors = sorted(hooks.errors, key=position)
        raise ConfigError(f"{len(errors)} hook configuration error(s):\n  " + "\n  ".join(errors))
    return hooks
