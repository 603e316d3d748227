"""Project configuration: `ralph.toml` at the project root (or the file named
by $RALPH_CONFIG). Parsed only when the file exists, so a project without
config pays nothing on the hook path.

A broken file raises ConfigError naming the file and line; hooks log it and
fall back to the defaults (which are the safe settings), commands print it.
"""
from __future__ import annotations

import os

from ralph.project import CONFIG_FILE, config_path  # noqa: F401 - re-exported for callers


class ConfigError(ValueError):
    pass


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
        raise ConfigError(f"{where}: invalid TOML: {message}. Fix the file or remove it to use the defaults.") from None
    return data


def load_config(root: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> dict:
    """The parsed config, or {} when there is none. Raises ConfigError."""
    path = config_path(root, environ)
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
    return parse_config(text, path)


def section(config: dict, name: str, path: str = CONFIG_FILE) -> dict:
    value = config.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: [{name}] must be a table, got {type(value).__name__}")
    return value
