"""TOML to data, with tomllib's error led by `file:line` as compilers write
it. Imported by name (ralph.config.reading) only when a file is not in the
parse cache: tomllib and the `re` it brings cost more than a hook call."""
import tomllib

from ralph.config.schema import ConfigError


def parse_toml(text: str, path: str) -> dict:
    """The parsed file. Raises ConfigError `<file>:<line>: invalid TOML: ...`."""
    try:
        return tomllib.loads(text)
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
