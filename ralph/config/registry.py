"""Every table ralph.toml may hold, and where each is declared.

A table is declared (ralph.config.schema.Table: its keys with their kinds,
defaults and help) in ralph.config.tables, one module per top-level table,
and named here as "module:NAME". A declaration is imported by name when its
table is read (ralph.plugins.load), so a hook
that reads [guard] loads no other table's declaration. Their owners (the
loop, the guard, the sandbox, ...) import the declarations, never the other
way round.
"""
from ralph.config.schema import Table
from ralph.plugins import load

# top-level table -> its declaration; its parts (the tables declared inside
# it: [[loop.stages]], [[hooks.<point>]], [[hooks.event]]) are listed there
SECTIONS: dict[str, str] = {
    "loop": "ralph.config.tables.loop:LOOP_TABLE",
    "guard": "ralph.config.tables.guard:GUARD_TABLE",
    "rollback": "ralph.config.tables.rollback:ROLLBACK_TABLE",
    "tests": "ralph.config.tables.tests:TESTS_TABLE",
    "sandbox": "ralph.config.tables.sandbox:SANDBOX_TABLE",
    "hooks": "ralph.config.tables.hooks:HOOKS_TABLE",
    "handoff": "ralph.config.tables.handoff:HANDOFF_TABLE",
}


def table(name: str) -> Table:
    """The declaration of the top-level table `name` (a key of SECTIONS)."""
    return load(SECTIONS[name])  # type: ignore[return-value]


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
        found.extend(declared.parts)
    return found
