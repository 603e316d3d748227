"""Checking a whole ralph.toml: every table it holds against its
declaration, and a table nobody declares refused by name with the known
ones (and "did you mean" for a near miss). ralph-loop runs this before it
starts and `ralph doctor` reports it; a hook, which reads one table, only
logs an unknown one (ralph.config.reading.section_or_defaults).

Here, above every owner, because some tables say more than their keys: the
owner of [hooks] reads it whole (its settings beside the hook tables of each
point), and only the loop's settings can tell that the stages are named
once each. The config package holds declarations, not owners' code.
"""
import os

from ralph.config import registry
from ralph.config.reading import UNKNOWN_TABLE, load_config, section
from ralph.config.schema import ConfigError, validate_table
from ralph.plugins import load
from ralph.run.settings import check_stages
from ralph.state.locations import CONFIG_FILE, config_path

# table -> its owner's reading of it, in place of the key-by-key check:
# section_values(config, path), raising ConfigError; loaded only for a file
# that holds the table (the hooks' checks are most of what a dry run would load)
OWNER_VALUES = {"hooks": "ralph.loop.lifecycle.config:section_values"}
# table -> what only the whole file can tell, run once every key is valid:
# check(config, path), raising ConfigError
WHOLE_FILE_CHECKS = {"loop": check_stages}


def config_errors(config: dict, path: str | None) -> list[str]:
    """Every problem in a parsed config, each `file:line: [table] key: ...`."""
    errors: list[str] = []
    for name in config:
        if name not in registry.SECTIONS:
            errors.append(load(UNKNOWN_TABLE)(name, path))  # type: ignore[operator]
            continue
        try:
            table = section(config, name, path or CONFIG_FILE)
        except ConfigError as e:
            errors.append(str(e))
            continue
        owner_values = OWNER_VALUES.get(name)
        if owner_values is not None:
            try:
                load(owner_values)(config, path)
            except ConfigError as e:
                errors.append(str(e))
        else:
            validate_table(table, registry.table(name).keys, path, name, errors=errors)
    if not errors:
        # what only the whole file can tell (the loop's stages, their unique names)
        for name in config:
            check = WHOLE_FILE_CHECKS.get(name)
            if check is not None:
                try:
                    check(config, path)
                except ConfigError as e:
                    errors.append(str(e))
    return errors


def check_config(root: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> dict:
    """The project's parsed config after checking every table; raises
    ConfigError listing every problem (one per line)."""
    config = load_config(root, environ)
    errors = config_errors(config, config_path(root, environ))
    if errors:
        raise ConfigError("\n".join(errors))
    return config
