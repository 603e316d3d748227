"""The `[tests]` section of ralph.toml: a project's own test commands.

    [tests]
    commands = ["./ci/unit.sh", "make itest"]   # command prefixes that run this project's tests
    fail_patterns = ['^FAILURES: [1-9]']        # regexes (per line) that mean the run failed
    pass_patterns = ['^ALL GREEN$']             # regexes (per line) that mean it passed
    baseline = "first_runs"                     # "first_runs" | "verify" | "off" (see ralph.rules.outcome.baseline)

A command that starts with one of `commands` (after `cd DIR &&`, `VAR=value`
and exec prefixes) is a test run even when the verdict knows no runner in it.
The patterns are read only for such declared runs, after the runners' own
summaries found nothing; a fail pattern wins over a pass pattern. Declaring a
command never makes a non-test command's output count: the patterns apply to
declared commands only.

ralph.config.tables.tests declares the section (ralph.config checks it like
every other table: errors read `<file>:<line>: [tests] key: ...`). Pure: no
file is read here.
"""
from __future__ import annotations

BASELINE_MODES = ("first_runs", "verify", "off")


class TestsConfig:
    __slots__ = ("commands", "fail_patterns", "pass_patterns", "baseline")
    __test__ = False

    def __init__(self, commands: tuple[str, ...] = (), fail_patterns: tuple[str, ...] = (), pass_patterns: tuple[str, ...] = (), baseline: str = "first_runs") -> None:
        self.commands = tuple(commands)
        self.fail_patterns = tuple(fail_patterns)
        self.pass_patterns = tuple(pass_patterns)
        self.baseline = baseline

    @classmethod
    def from_values(cls, values: dict) -> "TestsConfig":
        """From the checked [tests] values (ralph.config.reading.section_values)."""
        return cls(tuple(c.strip() for c in values["commands"]), values["fail_patterns"], values["pass_patterns"], values["baseline"])

    def to_dict(self) -> dict:
        return {"commands": list(self.commands), "fail_patterns": list(self.fail_patterns), "pass_patterns": list(self.pass_patterns), "baseline": self.baseline}


DEFAULT = TestsConfig()
