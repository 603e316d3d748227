"""The project's own word on its test runs: the [tests] table of ralph.toml
(defaults when there is none), read by the hooks and the loop alike."""
import os

from ralph.config.reading import section_or_defaults
from ralph.rules.outcome.tests_config import TestsConfig


def read_tests_config(root: str, environ: dict[str, str] | os._Environ[str]) -> tuple[object, str | None]:
    """The project's [tests] section as a TestsConfig (defaults when it is
    absent or broken), and what is broken."""
    values, problem = section_or_defaults(root, "tests", environ)
    return TestsConfig.from_values(values), problem
