"""[guard]: each key's kind, limits and help, with the defaults the pure
rule holds (ralph.rules.guard.policy: its lists, its families, how long
saving may take). The guard itself never loads this module: a project
without a ralph.toml uses the policy's defaults, and the config schema stays
off that hook call."""
from ralph.config.schema import Key, Table
from ralph.rules.guard.policy import FAMILIES, LISTS, SAVE_SECONDS

LIST_KEYS: dict[str, Key] = {
    "block_git_subcommands": Key([], "words", None, 'extra git subcommands to block, e.g. ["lfs"]'),
    "block_programs": Key([], "strings", None, 'extra programs (and words) to block, e.g. ["npm publish"]'),
    "allow_commands": Key([], "strings", None, 'exact commands always allowed, e.g. ["git push --dry-run"]'),
}
FAMILY_HELP: dict[str, str] = {
    "forge_merges": "block gh pr merge, glab mr merge, hub merge",
    "forge_api_writes": "block gh/glab/hub api calls that merge or write refs or commits",
    "forge_sync": "block gh repo sync, hub sync",
    "git_frontends": "block jj git push, git svn dcommit, git flow ... finish/publish",
    "merge_backends": "block git merge-recursive/-resolve/-octopus/-ours/-subtree/-index",
    "task_runners": "read Makefiles, package.json scripts, tox/nox/just/Taskfile/invoke files, tests given "
                    "to pytest, local pre-commit hooks, cmake -P scripts and scripts on disk, and judge what they run",
    "save_before_destroying": "save project work to a snapshot before git reset --hard, git checkout -- "
                              "<paths>, git clean -f, rm -r, ... (false: they run without a snapshot)",
    "destroy_outside": "block deleting or overwriting outside the project (home, system paths, other repositories) or the project itself",
    "destroy_devices": "block mkfs, dd of=/dev/..., wipefs and other writes to disks",
    "destroy_permissions": "block recursive chmod/chown/chgrp on system or home paths",
    "destroy_databases": "block database drops through psql, mysql, sqlite3, mongosh, redis-cli, dropdb",
}
GUARD_KEYS: dict[str, Key] = {
    **{key: LIST_KEYS[key] for key in LISTS},
    **{family: Key(True, "bool", None, FAMILY_HELP[family]) for family in FAMILIES},
    "save_seconds": Key(SAVE_SECONDS, "number", (1, 18), "how long saving before a destructive command may take; past it the "
                        "command is denied (the hook answers within 20 s)"),
}
GUARD_TABLE = Table("guard", GUARD_KEYS, "the push/merge guard: more to block, exact commands to allow, families to switch off")
