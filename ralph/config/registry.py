"""Every table ralph.toml may hold, and where each is declared.

A table is declared (ralph.config.schema.Table: its keys with their kinds,
defaults and help) beside the code that uses it, and named here as
"module:NAME". The declarations are imported by name when a table is read
(resolve(), the config package's one import site), so this package imports
none of them: the loop, the guard and the sandbox import the schema to
declare their tables, never the other way round.
"""
from ralph.config.schema import Table, resolve

# top-level table -> its declaration; its parts (the tables declared inside
# it: [[loop.stages]], [[hooks.<point>]], [[hooks.event]]) are named there
SECTIONS: dict[str, str] = {
    "loop": "ralph.run.settings:LOOP_TABLE",
    "guard": "ralph.rules.guard.guard_table:GUARD_TABLE",
    "rollback": "ralph.rules.rollback_policy:ROLLBACK_TABLE",
    "tests": "ralph.rules.outcome.tests_config:TESTS_TABLE",
    "sandbox": "ralph.sandbox:SANDBOX_TABLE",
    "hooks": "ralph.loop.lifecycle.config:HOOKS_TABLE",
    "handoff": "ralph.loop.handoff:HANDOFF_TABLE",
}


def table(name: str) -> Table:
    """The declaration of the top-level table `name` (a key of SECTIONS)."""
    return resolve(SECTIONS[name])  # type: ignore[return-value]


def tables() -> list[Table]:
    """Every table ralph.toml may hold, each top-level table followed by the
    tables declared inside it, in the order of SECTIONS. Each has .name (as
    written: "loop", "loop.stages", "hooks.<point>", "hooks.event"), .array
    (written [[name]]), .variant (what tells apart declarations of one name:
    an action type, 'type = "webhook"'), .help, and .keys: key -> Key with
    .default, .kind, .limits and .help. For the documentation and its test."""
    found: list[Table] = []
    for name in SECTIONS:
        declared = table(name)
        found.append(declared)
        found.extend(resolve(part) for part in declared.parts)  # type: ignore[misc]
    return found
