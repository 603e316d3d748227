"""The [guard] table of ralph.toml: its keys and defaults, and what they make
of the guard (GuardPolicy): extra git subcommands and programs to block,
exact commands always allowed, the family switches that turn off one
family of rules that is on by default (a team that merges with `gh pr
merge` on purpose sets forge_merges = false; one that does not want its
project work saved before `git reset --hard` sets save_before_destroying =
false), and how long saving may take. Pure.
"""
from ralph.rules.guard.state import RISKY_WORDS, could_push

# The keys of [guard] and their defaults. Their kinds and help for ralph.toml
# are declared in ralph.config.tables.guard (the config schema, which a
# command judged without a ralph.toml never loads).
LISTS = ("block_git_subcommands", "block_programs", "allow_commands")  # each empty by default
# the family switches, each on by default
FAMILIES = ("forge_merges", "forge_api_writes", "forge_sync", "git_frontends", "merge_backends", "task_runners",
            "save_before_destroying", "destroy_outside", "destroy_devices", "destroy_permissions", "destroy_databases")
SAVE_SECONDS = 10.0


class GuardPolicy:
    """The [guard] table of ralph.toml."""

    __slots__ = ("block_git_subcommands", "block_programs", "allow_commands", "families", "risky", "save_seconds")

    def __init__(self, block_git_subcommands: tuple = (), block_programs: tuple = (), allow_commands: tuple = (),
                 families: dict[str, bool] | None = None, save_seconds: float = SAVE_SECONDS) -> None:
        self.save_seconds = float(save_seconds)
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
        "guard", path) validates them against ralph.config.tables.guard, with file:line)."""
        lists = [tuple(values.get(key, ())) for key in LISTS]
        families = {key: bool(values.get(key, True)) for key in FAMILIES}
        return cls(*lists, families=families, save_seconds=values.get("save_seconds", SAVE_SECONDS))

    def mentions_push(self, text: str) -> bool:
        """Does this text name push/merge/pull (or what this policy blocks
        besides)? Unlike could_push, encodings do not count: the project's own
        files are full of sed, tr and escapes."""
        low = text.lower()
        return any(word in low for word in self.risky)

    def could_push(self, text: str) -> bool:
        """Could this text, once decoded or expanded, spell a push or merge
        (or what this policy blocks besides)?"""
        return could_push(text, self.risky)


DEFAULT_POLICY = GuardPolicy()
