"""[tests]: a project's own test commands and what their output means
(ralph.rules.outcome.tests_config: the baseline modes, and what the values
make of a run). Errors read `<file>:<line>: [tests] key: ...`."""
from ralph.config.schema import Key, Table
from ralph.rules.outcome.tests_config import BASELINE_MODES

MAX_ENTRIES = 50

TESTS_KEYS: dict[str, Key] = {
    "commands": Key((), "strings", (0, MAX_ENTRIES), "command prefixes that run this project's tests"),
    "fail_patterns": Key((), "regexes", (0, MAX_ENTRIES), "regexes (per line) that mean a declared run failed"),
    "pass_patterns": Key((), "regexes", (0, MAX_ENTRIES), "regexes (per line) that mean a declared run passed"),
    "baseline": Key("first_runs", "choice:" + "|".join(BASELINE_MODES), None,
                    "which failing tests count as already failing: first_runs, verify or off"),
}
TESTS_TABLE = Table("tests", TESTS_KEYS, "the project's own test commands and what their output means")
