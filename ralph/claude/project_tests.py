"""The project's own word on test runs: the `[tests]` table of ralph.toml,
read only when the file has one (a Bash call in a project without it parses
no TOML)."""
import os

from ralph.claude.protocol import HookCall
from ralph.config.reading import section_or_defaults
from ralph.rules.outcome.tests_config import TestsConfig
from ralph.state.locations import config_path


def load_tests_config(call: HookCall) -> object | None:
    """The [tests] section when a config file exists (nothing parsed otherwise)."""
    path = config_path(call.root, call.environ)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            if "tests" not in f.read(1 << 20):
                return None  # a config without a [tests] section: no TOML parsing on every Bash call
    except OSError:
        return None
    config, problem = read_tests_config(call.root, call.environ)
    if problem:
        call.problems.append(problem)
    return config


def read_tests_config(root: str, environ: dict[str, str] | os._Environ[str]) -> tuple[object, str | None]:
    """The project's [tests] section as a TestsConfig (defaults when it is
    absent or broken), and what is broken."""
    values, problem = section_or_defaults(root, "tests", environ)
    return TestsConfig.from_values(values), problem
