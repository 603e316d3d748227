"""The [guard] table of ralph.toml: its keys (GUARD_TABLE) and what they make
of the guard (GuardPolicy): extra git subcommands and programs to block,
exact commands always allowed, and the family switches that turn off one
family of blocks that is on by default (a team that merges with `gh pr
merge` on purpose sets forge_merges = false). Pure.
"""
from ralph.config.schema import Key, Table
from ralph.rules.guard.state import RISKY_WORDS, could_push

GUARD_KEYS: dict[str, Key] = {
    "block_git_subcommands": Key([], "words", None, 'extra git subcommands to block, e.g. ["lfs"]'),
    "block_programs": Key([], "strings", None, 'extra programs (and words) to block, e.g. ["npm publish"]'),
    "allow_commands": Key([], "strings", None, 'exact commands always allowed, e.g. ["git push --dry-run"]'),
    "forge_merges": Key(True, "bool", None, "block gh pr merge, glab mr merge, hub merge"),
    "forge_api_writes": Key(True, "bool", None, "block gh/glab/hub api calls that merge or write refs or commits"),
    "forge_sync": Key(True, "bool", None, "block gh repo sync, hub sync"),
    "git_frontends": Key(True, "bool", None, "block jj git push, git svn dcommit, git flow ... finish/publish"),
    "merge_backends": Key(True, "bool", None, "block git merge-recursive/-resolve/-octopus/-ours/-subtree/-index"),
}
GUARD_TABLE = Table("guard", GUARD_KEYS, "the push/merge guard: more to block, exact commands to allow, families to switch off")
FAMILIES = tuple(key for key, declared in GUARD_KEYS.items() if declared.kind == "bool")


class GuardPolicy:
    """The [guard] table of ralph.toml."""

    __slots__ = ("block_git_subcommands", "block_programs", "allow_commands", "families", "risky")

    def __init__(self, block_git_subcommands: tuple = (), block_programs: tuple = (), allow_commands: tuple = (),
                 families: dict[str, bool] | None = None) -> None:
        self.block_git_subcommands = frozenset(s.lower() for s in block_git_subcommands)
        # each rule: (program, words that must follow in order)
        self.block_programs = tuple((rule.split()[0].lower(), tuple(rule.split()[1:])) for rule in block_programs if rule.split())
        self.allow_commands = frozenset(block.strip() for block in allow_commands)
        self.families = {family: True for family in FAMILIES}
        self.families.update(families or {})
        self.risky = (RISKY_WORDS + tuple(self.block_git_subcommands)
                      + tuple(w for prog, words in self.block_programs for w in (prog,) + words))

    @classmethod
    def from_values(cls, values: dict) -> "GuardPolicy":
        """From the checked [guard] values (ralph.config.reading.section_values(config,
        "guard", path) validates them against GUARD_KEYS, with file:line)."""
        lists = [tuple(values.get(key, declared.default)) for key, declared in GUARD_KEYS.items() if declared.kind != "bool"]
        families = {key: bool(values.get(key, declared.default)) for key, declared in GUARD_KEYS.items() if declared.kind == "bool"}
        return cls(*lists, families=families)

    def could_push(self, text: str) -> bool:
        """Could this text, once decoded or expanded, spell a push or merge
        (or what this policy blocks besides)?"""
        return could_push(text, self.risky)


DEFAULT_POLICY = GuardPolicy()
