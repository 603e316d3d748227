"""The `[tests]` section of ralph.toml: a project's own test commands.

    [tests]
    commands = ["./ci/unit.sh", "make itest"]   # command prefixes that run this project's tests
    fail_patterns = ['^FAILURES: [1-9]']        # regexes (per line) that mean the run failed
    pass_patterns = ['^ALL GREEN$']             # regexes (per line) that mean it passed
    baseline = "first_runs"                     # "first_runs" | "verify" | "off" (see ralph.rules.test_baseline)

A command that starts with one of `commands` (after `cd DIR &&`, `VAR=value`
and exec prefixes) is a test run even when the verdict knows no runner in it.
The patterns are read only for such declared runs, after the runners' own
summaries found nothing; a fail pattern wins over a pass pattern. Declaring a
command never makes a non-test command's output count: the patterns apply to
declared commands only.

TESTS_KEYS has the shape of LOOP_KEYS (ralph/loop/settings.py):
`key -> (default, kind, minimum)`; errors read `<file>:<line>: [tests] key: ...`.
"""
from __future__ import annotations

import re

BASELINE_MODES = ("first_runs", "verify", "off")
MAX_ENTRIES = 50
MAX_PATTERN = 300

TESTS_KEYS: dict[str, tuple[object, str, float | None]] = {
    "commands": ((), "list[str]", None),
    "fail_patterns": ((), "list[regex]", None),
    "pass_patterns": ((), "list[regex]", None),
    "baseline": ("first_runs", "choice:" + "|".join(BASELINE_MODES), None),
}


class TestsConfig:
    __slots__ = ("commands", "fail_patterns", "pass_patterns", "baseline")
    __test__ = False

    def __init__(self, commands: tuple[str, ...] = (), fail_patterns: tuple[str, ...] = (), pass_patterns: tuple[str, ...] = (), baseline: str = "first_runs") -> None:
        self.commands = tuple(commands)
        self.fail_patterns = tuple(fail_patterns)
        self.pass_patterns = tuple(pass_patterns)
        self.baseline = baseline

    def to_dict(self) -> dict:
        return {"commands": list(self.commands), "fail_patterns": list(self.fail_patterns), "pass_patterns": list(self.pass_patterns), "baseline": self.baseline}


DEFAULT = TestsConfig()


def _where(path: str | None, key: str) -> str:
    try:
        from ralph.loop.settings import key_line

        return key_line(path, key, "tests")
    except Exception:  # noqa: BLE001 - a message without a line beats no message
        return path or "ralph.toml"


def validate(table: object, path: str | None) -> TestsConfig:
    """The [tests] table as a TestsConfig. Raises ralph.config.ConfigError with file:line."""
    from ralph.config import ConfigError

    if not isinstance(table, dict):
        raise ConfigError(f"{path or 'ralph.toml'}: [tests] must be a table")
    unknown = sorted(set(table) - set(TESTS_KEYS))
    if unknown:
        raise ConfigError(f"{_where(path, unknown[0])}: [tests] {unknown[0]}: unknown key; known keys: {', '.join(TESTS_KEYS)}")
    values: dict[str, object] = {}
    for key, (default, kind, _minimum) in TESTS_KEYS.items():
        value = table.get(key, default)
        where = _where(path, key)
        if kind.startswith("list["):
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
                raise ConfigError(f"{where}: [tests] {key}: expected a list of non-empty strings; write e.g. {key} = [\"...\"]")
            if len(value) > MAX_ENTRIES:
                raise ConfigError(f"{where}: [tests] {key}: {len(value)} entries; at most {MAX_ENTRIES}")
            if kind == "list[regex]":
                for pattern in value:
                    if len(pattern) > MAX_PATTERN:
                        raise ConfigError(f"{where}: [tests] {key}: pattern longer than {MAX_PATTERN} characters")
                    try:
                        re.compile(pattern)
                    except re.error as e:
                        raise ConfigError(f"{where}: [tests] {key}: {pattern!r} is not a valid regular expression ({e}); fix or remove it") from None
            values[key] = tuple(v.strip() if kind == "list[str]" else v for v in value)
        elif kind.startswith("choice:"):
            choices = kind[len("choice:"):].split("|")
            if value not in choices:
                raise ConfigError(f"{where}: [tests] {key}: {value!r} is not one of {', '.join(repr(c) for c in choices)}")
            values[key] = value
    return TestsConfig(**values)  # type: ignore[arg-type]


def load(root: str, environ: dict) -> tuple[TestsConfig, str | None]:
    """The project's [tests] config (defaults when absent) and a problem message when it is broken."""
    from ralph.config import ConfigError, config_path, load_config

    try:
        config = load_config(root, environ)
        if not config or "tests" not in config:
            return DEFAULT, None
        return validate(config["tests"], config_path(root, environ)), None
    except ConfigError as e:
        return DEFAULT, f"{e}; the [tests] section is ignored"


def pattern_verdict(output: str, config: TestsConfig) -> tuple[str, str] | None:
    """('fail'|'pass', the matching line) from the declared patterns, read in the output's last 64 KB."""
    text = output[-65536:]
    for status, patterns in (("fail", config.fail_patterns), ("pass", config.pass_patterns)):
        for pattern in patterns:
            m = None
            for m in re.finditer(pattern, text, re.M):
                pass
            if m is not None:
                start = text.rfind("\n", 0, m.start()) + 1
                end = text.find("\n", m.end())
                return status, text[start:end if end >= 0 else len(text)].strip()[:240]
    return None


def section_values(config: dict, path: str | None) -> dict:
    """[tests] checked for ralph.config's one schema (SECTION_CHECKS): every
    key with its default; raises ConfigError with file:line."""
    return validate(config.get("tests", {}), path).to_dict()
