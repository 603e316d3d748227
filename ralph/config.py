"""Project configuration: `ralph.toml` at the project root (or the file named
by $RALPH_CONFIG), and the one schema that validates all of it.

Parsed only when the file exists, so a project without config pays nothing on
the hook path; a hook validates only the section it uses.

The schema is a table of sections (SCHEMA); each section is a table of keys
`key -> (default, kind, minimum)`, the shape of LOOP_KEYS in
ralph/loop/settings.py. Each default lives there and nowhere else. Adding a
section is adding one entry to SCHEMA. Every error reads
`<file>:<line>: [section] key: what is wrong; how to fix`. Hooks log it and
fall back to the defaults (which are the safe settings); commands print it.
"""
import os

from ralph.state.locations import CONFIG_FILE, config_path  # noqa: F401 - re-exported for callers


class ConfigError(ValueError):
    pass


# ---- the schema ---------------------------------------------------------

# kind: "int", "number" (int or float), "bool", "str", "path", "command"
# (string for /bin/sh or list of strings), "choice:a|b", "strings" (list of
# non-empty strings), "paths" (the same, stripped), "words" (list of single
# words), "regexes" (list of regular expressions of at most MAX_REGEX_CHARS),
# "hosts" (list of host names as the client's sandbox takes them); a trailing
# "?" allows None. minimum: a number, or (minimum, maximum); for a list, of
# its length.
KeyTable = dict[str, tuple[object, str, "float | tuple[float, float] | None"]]
MAX_REGEX_CHARS = 300
# a host name, wildcard or IP, with an optional port; no scheme, no path
HOST = r"^(\*|\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$"

ROLLBACK_KEYS: KeyTable = {
    "policy": ("consecutive", "choice:consecutive|immediate|stop|off", None),
    "max_consecutive_failures": (3, "int", (1, 100)),
    "count_by": ("command", "choice:command|runner|any", None),
    "at_stop": (True, "bool", None),
}

# section -> its key table, or "module:NAME" for a table that lives beside the
# code using it (imported only when that section is validated).
SCHEMA: dict[str, KeyTable | str] = {
    "loop": "ralph.loop.settings:LOOP_KEYS",
    "guard": "ralph.rules.guard.policy:GUARD_KEYS",
    "rollback": ROLLBACK_KEYS,
    "sandbox": "ralph.sandbox:SANDBOX_KEYS",
    "tests": "ralph.rules.outcome.tests_config:TESTS_KEYS",
    "hooks": "ralph.loop.lifecycle.config:SETTINGS_KEYS",
}
# section -> "module:function(config, path)" for a section whose values need
# checks beyond the kinds below (host names, ...); it raises ConfigError in
# the same `file:line: [section] key: ...` form.
SECTION_CHECKS: dict[str, str] = {
    "hooks": "ralph.loop.lifecycle.config:section_values",
}


def _resolve(ref: str) -> object:
    import sys

    module, attr = ref.split(":")
    __import__(module)  # not importlib.import_module: importing importlib (and warnings) costs the dry run
    return getattr(sys.modules[module], attr)


def keys_of(name: str) -> KeyTable:
    table = SCHEMA[name]
    return _resolve(table) if isinstance(table, str) else table


# ---- reading --------------------------------------------------------------


def parse_config(text: str, path: str) -> dict:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        # tomllib says "... (at line 3, column 7)": lead with file:line as compilers do.
        message = str(e)
        line = ""
        marker = "(at line "
        if marker in message:
            line = message.split(marker, 1)[1].split(",", 1)[0].rstrip(")")
            message = message.split(" (at line ", 1)[0]
        where = f"{path}:{line}" if line else path
        raise ConfigError(f"{where}: invalid TOML: {message}; fix the file or remove it to use the defaults") from None
    return data


def load_config(root: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> dict:
    """The parsed config, or {} when there is none. Raises ConfigError."""
    path = config_path(root, environ)
    if path is None:
        return {}
    return cached_parse(root, read_text(path), path)


def read_text(path: str) -> str:
    """A config file's text. Raises ConfigError naming the file."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}; fix its permissions or unset RALPH_CONFIG") from None


# The parsed config, kept under .ralph/protected/ (which ralph-loop's sandbox
# layer makes read-only to the agent): importing tomllib costs more than the
# rest of a hook call (about 15 ms), and hooks run on every tool call while
# ralph.toml rarely changes. An entry is used only for the exact same text.
CACHE_FILE = os.path.join("protected", "config.json")


def cached_parse(root: str, text: str, path: str) -> dict:
    """parse_config(text, path), remembered per project (when `.ralph/` exists)."""
    from ralph import fastjson
    from ralph.state.files import atomic_write
    from ralph.state.locations import STATE_DIR_NAME

    state = os.path.join(root, STATE_DIR_NAME)
    cache = os.path.join(state, CACHE_FILE)
    try:
        with open(cache, encoding="utf-8") as f:
            entry = fastjson.loads(f.read())
        if isinstance(entry, dict) and entry.get("path") == path and entry.get("text") == text and isinstance(entry.get("config"), dict):
            return entry["config"]
    except (OSError, ValueError):
        pass
    config = parse_config(text, path)
    if os.path.isdir(state):
        try:
            data = fastjson.dumps({"path": path, "text": text, "config": config})
        except (TypeError, ValueError):
            return config  # dates and times are not JSON: parsed each time
        try:
            os.makedirs(os.path.dirname(cache), exist_ok=True)
            atomic_write(cache, data)
        except OSError:
            pass
    return config


def section(config: dict, name: str, path: str = CONFIG_FILE) -> dict:
    value = config.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{key_line(path, name, '')}: [{name}] must be a table, got {type(value).__name__}; write it as [{name}] followed by key = value lines")
    return value


def key_line(path: str | None, key: str, table: str = "loop", occurrence: int = 0) -> str:
    """`path:line` of `key` inside `[table]` (or the n-th `[[table]]`; table ""
    is the top level), for messages. The file itself when the key is not found."""
    if not path:
        return CONFIG_FILE
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return path
    import re

    header = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
    key_re = re.compile(r"^\s*[\"']?%s[\"']?\s*=" % re.escape(key))
    current = ""
    seen = -1 if table else 0
    header_line = 0
    for number, line in enumerate(lines, 1):
        m = header.match(line)
        if m:
            current = m.group(1)
            if not table and current == key:
                return f"{path}:{number}"
            if table and current == table:
                seen += 1
                if seen == occurrence:
                    header_line = number
            continue
        if current == table and seen == occurrence and key_re.match(line):
            return f"{path}:{number}"
    if header_line and occurrence:  # a key missing from a [[loop.stages]] table: point at the table
        return f"{path}:{header_line}"
    if table:
        # dotted keys (loop.max_iterations = 3) at top level
        dotted = re.compile(r"^\s*%s\s*\.\s*%s\s*=" % (re.escape(table), re.escape(key)))
        for number, line in enumerate(lines, 1):
            if dotted.match(line):
                return f"{path}:{number}"
        if header_line:
            return f"{path}:{header_line}"
    return path


# ---- validating -----------------------------------------------------------


class ValueProblem(ValueError):
    """What is wrong with one value, without where it is (checked_value)."""


def check_value(value: object, kind: str, minimum: object, where: "str | KeyLine", table: str, key: str) -> object:
    """checked_value(), or ConfigError `where: [table] key: what is wrong`."""
    try:
        return checked_value(value, kind, minimum, key)
    except ValueProblem as e:
        raise ConfigError(f"{where}: [{table}] {key}: {e}") from None


def checked_value(value: object, kind: str, minimum: object, key: str) -> object:
    """`value` (lists as tuples, paths and hosts stripped) if it is of
    `kind`, else ValueProblem saying what is wrong and how to write it."""
    optional = kind.endswith("?")
    base = kind.rstrip("?")
    if value is None and optional:
        return None

    def bad(what: str) -> ValueProblem:
        return ValueProblem(f"{what}, got {value!r}")

    if base == "command":
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return list(value)
        raise bad("must be a non-empty string (run by /bin/sh) or a list of strings (run as is)")
    if base in ("int", "number"):
        ok = isinstance(value, int) and not isinstance(value, bool)
        if base == "number":
            ok = ok or isinstance(value, float)
        if not ok:
            raise bad("must be " + ("a whole number" if base == "int" else "a number"))
        low, high = minimum if isinstance(minimum, tuple) else (minimum, None)
        if low is not None and value < low or high is not None and value > high:
            raise bad(f"must be from {low:g} to {high:g}" if high is not None else f"must be >= {low:g}")
        return value
    if base == "bool":
        if not isinstance(value, bool):
            raise bad("must be true or false")
        return value
    if base in ("path", "str"):
        if not isinstance(value, str) or not value:
            raise bad("must be a non-empty string")
        return value
    if base in ("strings", "paths", "words", "regexes", "hosts"):
        if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
            raise bad(f'must be a list of non-empty strings, e.g. {key} = ["..."]')
        low, high = minimum if isinstance(minimum, tuple) else (minimum or 0, None)
        if len(value) < low or high is not None and len(value) > high:
            raise ValueProblem(f"{len(value)} entries; " + (f"at most {high:g}" if high is not None else f"at least {low:g}"))
        if base == "words":
            for item in value:
                if len(item.split()) != 1:
                    raise ValueProblem(f'takes single words like "lfs", got {item!r}')
        if base == "regexes":
            import re

            for item in value:
                if len(item) > MAX_REGEX_CHARS:
                    raise ValueProblem(f"pattern longer than {MAX_REGEX_CHARS} characters: {item[:40]!r}...")
                try:
                    re.compile(item)
                except re.error as e:
                    raise ValueProblem(f"{item!r} is not a valid regular expression ({e}); fix or remove it") from None
        if base == "hosts":
            import re

            for item in value:
                if not re.match(HOST, item.strip()):
                    raise ValueProblem(f"{item!r} is not a host; write a name as the sandbox takes it, with no scheme or path: "
                                       '"pypi.org", "*.example.com", "10.0.0.1" or "registry.local:8080"')
        if base in ("paths", "hosts"):
            return tuple(item.strip() for item in value)
        return tuple(value)
    if base.startswith("choice:"):
        choices = base.split(":", 1)[1].split("|")
        if value not in choices:
            raise bad("must be one of " + ", ".join(repr(c) for c in choices))
        return value
    raise AssertionError(kind)


class KeyLine:
    """key_line(...), looked up only when a message is written: a valid table
    costs no re-read of the file (the hooks validate [guard] on every call)."""

    __slots__ = ("args",)

    def __init__(self, *args: object) -> None:
        self.args = args

    def __str__(self) -> str:
        return key_line(*self.args)  # type: ignore[arg-type]

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def validate_table(table: dict, keys: KeyTable, path: str | None, table_name: str, occurrence: int = 0,
                   errors: list[str] | None = None) -> dict:
    """The checked values of `table` (only the keys it sets). Raises the first
    ConfigError, or, given `errors`, appends every one and skips the bad keys.
    Keys of kind "stages" are left to their caller."""
    values: dict = {}
    for key, value in table.items():
        try:
            if key not in keys:
                where = key_line(path, key, table_name, occurrence)
                raise ConfigError(f"{where}: [{table_name}] {key}: unknown key; known keys: {', '.join(sorted(keys))}")
            default, kind, minimum = keys[key]
            if kind == "stages":
                continue
            values[key] = check_value(value, kind, minimum, KeyLine(path, key, table_name, occurrence), table_name, key)
        except ConfigError as e:
            if errors is None:
                raise
            errors.append(str(e))
    return values


def section_values(config: dict, name: str, path: str | None) -> dict:
    """Every key of section `name`: its default, or the checked value from
    `config`. Raises ConfigError."""
    if name in SECTION_CHECKS:
        return _resolve(SECTION_CHECKS[name])(config, path)
    keys = keys_of(name)
    values = {key: default for key, (default, _, _) in keys.items()}
    values.update(validate_table(section(config, name, path or CONFIG_FILE), keys, path, name))
    return values


def load_section(root: str, name: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> dict:
    """section_values() of the project's ralph.toml (defaults when there is none)."""
    path = config_path(root, environ)
    return section_values(load_config(root, environ) if path else {}, name, path)


def section_or_defaults(root: str, name: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> tuple[dict, str | None]:
    """load_section(), or the section's defaults and why when ralph.toml is
    broken: for hooks, which must go on (and log the problem)."""
    try:
        return load_section(root, name, environ), None
    except ConfigError as e:
        return section_values({}, name, None), f"{e}; the [{name}] section is ignored"


def config_errors(config: dict, path: str | None, unknown_sections: bool = True) -> list[str]:
    """Every problem in a parsed config, each `file:line: [section] key: ...`.
    unknown_sections=False skips sections the schema does not know (a
    section another version of ralph added): `ralph doctor` names them,
    the loop does not refuse to start over them."""
    errors: list[str] = []
    for name, value in config.items():
        if name not in SCHEMA:
            if unknown_sections:
                    errors.append(f"{key_line(path, name, '')}: [{name}]: unknown section; known sections: {', '.join(sorted(SCHEMA))}")
            continue
        try:
            table = section(config, name, path or CONFIG_FILE)
        except ConfigError as e:
            errors.append(str(e))
            continue
        if name in SECTION_CHECKS:
            try:
                _resolve(SECTION_CHECKS[name])(config, path)
            except ConfigError as e:
                errors.append(str(e))
        else:
            validate_table(table, keys_of(name), path, name, errors=errors)
    if not errors and isinstance(config.get("loop"), dict):
        # what only the merged loop settings can tell (stages, unique names)
        from ralph.loop.settings import loop_settings

        try:
            loop_settings(os.path.dirname(path or ".") or ".", config, path, {})
        except ConfigError as e:
            errors.append(str(e))
    return errors


def check_config(root: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> dict:
    """The project's parsed config after validating every known section;
    raises ConfigError listing every problem (one per line)."""
    config = load_config(root, environ)
    errors = config_errors(config, config_path(root, environ), unknown_sections=False)
    if errors:
        raise ConfigError("\n".join(errors))
    return config
