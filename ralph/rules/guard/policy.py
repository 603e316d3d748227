"""The [guard] table of ralph.toml: its keys (GUARD_TABLE) and what they make
of the guard (GuardPolicy): extra git subcommands and programs to block,
exact commands always allowed, the family switches that turn off one
family of rules that is on by default (a team that merges with `gh pr
merge` on purpose sets forge_merges = false; one that does not want its
project work saved before `git reset --hard` sets save_before_destroying =
false), and how long saving may take. Pure.
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
    "task_runners": Key(True, "bool", None, "read Makefiles, package.json scripts, tox/nox/just/Taskfile/invoke files, tests given "
                        "to pytest, local pre-commit hooks, cmake -P scripts and scripts on disk, and judge what they run"),
    "save_before_destroying": Key(True, "bool", None, "save project work to a snapshot before git reset --hard, git checkout -- "
                                  "<paths>, git clean -f, rm -r, ... (false: they run without a snapshot)"),
    "destroy_outside": Key(True, "bool", None, "block deleting or overwriting outside the project (home, system paths, other "
                           "repositories) or the project itself"),
    "destroy_devices": Key(True, "bool", None, "block mkfs, dd of=/dev/..., wipefs and other writes to disks"),
    "destroy_permissions": Key(True, "bool", None, "block recursive chmod/chown/chgrp on system or home paths"),
    "destroy_databases": Key(True, "bool", None, "block database drops through psql, mysql, sqlite3, mongosh, redis-cli, dropdb"),
    "save_seconds": Key(10.0, "number", (1, 18), "how long saving before a destructive command may take; past it the command is "
                        "denied (the hook answers within 20 s)"),
}
GUARD_TABLE = Table("guard", GUARD_KEYS, "the push/merge guard: more to block, exact commands to allow, families to switch off")
FAMILIES = tuple(key for key, declared in GUARD_KEYS.items() if declared.kind == "bool")


class GuardPolicy:
    """The [guard] table of ralph.toml."""

    __slots__ = ("block_git_subcommands", "block_programs", "allow_commands", "families", "risky", "save_seconds")

    def __init__(self, block_git_subcommands: tuple = (), block_programs: tuple = (), allow_commands: tuple = (),
                 families: dict[str, bool] | None = None, save_seconds: float = 10.0) -> None:
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
        "guard", path) validates them against GUARD_KEYS, with file:line)."""
        lists = [tuple(values.get(key, GUARD_KEYS[key].default)) for key in ("block_git_subcommands", "block_programs", "allow_commands")]
        families = {key: bool(values.get(key, declared.default)) for key, declared in GUARD_KEYS.items() if declared.kind == "bool"}
        return cls(*lists, families=families, save_seconds=values.get("save_seconds", GUARD_KEYS["save_seconds"].default))

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
