"""Did a Bash command run tests? Its shape (ralph.rules.outcome.command_shape)
and the project's own word on test runs: the `[tests]` table of ralph.toml,
read only when the file has one (a Bash call in a project without it parses
no TOML)."""

from ralph.claude.protocol import HookCall
from ralph.rules.outcome.command_shape import CommandShape, command_shape
from ralph.run.tests_config import read_tests_config


def test_shape(call: HookCall, command: str, path: str | None) -> tuple[object | None, CommandShape]:
    """The project's [tests] section (or None) and the command's shape as a
    test run. `path`: the project's config file, None without one."""
    tests_config = load_tests_config(call, path)
    return tests_config, command_shape(command, tuple(getattr(tests_config, "commands", ()) or ()))


def load_tests_config(call: HookCall, path: str | None) -> object | None:
    """The [tests] section of the config file at `path` (nothing parsed without one)."""
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
