"""The program models: which function of which module judges a program.

The models are plain modules under ralph.rules.guard.programs, one per
family, each a set of functions taking the analysis as their first argument
(ralph.rules.guard.interp). This table names them; ralph.plugins.load imports one
the first time a command runs a program it models, so a command pays only
for the models of the programs it runs. The judge hands the table to the
analysis; a model reaches another one through the analysis, never through
this module.
"""
from ralph.rules.guard.programs.facts import INTERPRETERS, SHELLS, WRAPPERS

GIT = "ralph.rules.guard.programs.git"
GIT_CONFIG = "ralph.rules.guard.programs.git_config"
GIT_SUBCOMMANDS = "ralph.rules.guard.programs.git_subcommands"
FORGES = "ralph.rules.guard.programs.forges"
SHELL_MODELS = "ralph.rules.guard.programs.shells"
WRAPPER_MODELS = "ralph.rules.guard.programs.wrappers"
DATA_EXEC = "ralph.rules.guard.programs.data_exec"
BUILTINS = "ralph.rules.guard.programs.shell_builtins"
NAME_GLOBS = "ralph.rules.guard.programs.name_globs"
DESTROY = "ralph.rules.guard.programs.destroy"
GIT_DESTROY = "ralph.rules.guard.programs.git_destroy"
RUNNERS = "ralph.rules.guard.programs.runners"
TASK_FILES = "ralph.rules.guard.programs.task_files"
MAKEFILES = "ralph.rules.guard.programs.makefiles"
DISK_SCRIPTS = "ralph.rules.guard.programs.disk_scripts"
# every module the guard loads by name (a bundler must ship them: build.spec)
MODEL_MODULES = (GIT, GIT_CONFIG, GIT_SUBCOMMANDS, FORGES, SHELL_MODELS, WRAPPER_MODELS, DATA_EXEC, BUILTINS, NAME_GLOBS, DESTROY,
                 GIT_DESTROY, RUNNERS, MAKEFILES, DISK_SCRIPTS, TASK_FILES)
# a model by its short name, the module's own (Analysis.model("shells"))
MODELS = {module.rsplit(".", 1)[1]: module for module in MODEL_MODULES}

# program -> (the module that models it, the function there that judges a
# call: function(analysis, argv, env, stdin, scope, where) -> the output when known)
PROGRAM_MODELS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(WRAPPERS, (WRAPPER_MODELS, "run_wrapper")),
    **dict.fromkeys(INTERPRETERS, (SHELL_MODELS, "run_interpreter")),
    **dict.fromkeys(SHELLS, (SHELL_MODELS, "run_shell")),
    # PowerShell is a shell whose commands run as they are written (facts lists it among the interpreters)
    **dict.fromkeys(("pwsh", "powershell"), (SHELL_MODELS, "run_powershell")),
    "eval": (SHELL_MODELS, "run_eval"),
    "source": (SHELL_MODELS, "run_source"),
    ".": (SHELL_MODELS, "run_source"),
    "trap": (SHELL_MODELS, "run_trap"),
    "git": (GIT, "run_git_program"),
    "yadm": (GIT, "run_git_program"),
    "hub": (FORGES, "run_hub"),
    "gh": (FORGES, "run_gh"),
    "glab": (FORGES, "run_glab"),
    "jj": (FORGES, "run_jj"),
    "ralph": (FORGES, "run_ralph"),
    "ssh": (WRAPPER_MODELS, "run_ssh"),
    "xargs": (WRAPPER_MODELS, "run_xargs"),
    "find": (WRAPPER_MODELS, "run_find"),
    "parallel": (WRAPPER_MODELS, "run_parallel"),
    **dict.fromkeys(("tmux", "screen", "at", "batch"), (WRAPPER_MODELS, "run_multiplexer")),
    **dict.fromkeys(("busybox", "toybox"), (WRAPPER_MODELS, "run_multicall")),
    **dict.fromkeys(("make", "gmake"), (MAKEFILES, "run_make")),
    **dict.fromkeys(("rm", "unlink", "shred"), (DESTROY, "run_rm")),
    "mktemp": (DESTROY, "run_mktemp"),
    "dd": (DESTROY, "run_dd"),
    **dict.fromkeys(("mke2fs", "mkswap", "wipefs", "blkdiscard", "fdisk", "sfdisk", "sgdisk", "cfdisk", "parted", "mkdosfs",
                     "mkntfs", "cryptsetup", "badblocks", "zpool", "pvcreate", "vgremove", "lvremove"), (DESTROY, "run_disk_writer")),
    **dict.fromkeys(("chmod", "chown", "chgrp"), (DESTROY, "run_permissions")),
    "truncate": (DESTROY, "run_truncate"),
    **dict.fromkeys(("psql", "mysql", "mariadb", "sqlite3", "mongosh", "mongo", "dropdb", "mysqladmin", "redis-cli",
                     "clickhouse-client", "cockroach"), (DESTROY, "run_database")),
    **dict.fromkeys(("npm", "pnpm", "yarn", "bun"), (RUNNERS, "run_package_scripts")),
    **dict.fromkeys(("pytest", "py.test"), (RUNNERS, "run_pytest")),
    "tox": (TASK_FILES, "run_tox"),
    "nox": (TASK_FILES, "run_nox"),
    "just": (TASK_FILES, "run_just"),
    **dict.fromkeys(("task", "go-task"), (TASK_FILES, "run_taskfile")),
    **dict.fromkeys(("invoke", "inv"), (TASK_FILES, "run_invoke")),
    "pre-commit": (TASK_FILES, "run_pre_commit"),
    "cmake": (TASK_FILES, "run_cmake"),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), (DATA_EXEC, "run_awk")),
    **dict.fromkeys(("sed", "gsed"), (DATA_EXEC, "run_sed")),
    **dict.fromkeys(("ed", "red", "ex", "vi", "vim", "nvim", "view", "vim.basic", "vim.tiny"), (DATA_EXEC, "run_editor")),
    **dict.fromkeys(("cd", "pushd"), (BUILTINS, "run_cd")),
    **dict.fromkeys(("export", "declare", "typeset", "local", "readonly"), (BUILTINS, "run_declare")),
    "set": (BUILTINS, "run_set"),
    "shift": (BUILTINS, "run_shift"),
    "unset": (BUILTINS, "run_unset"),
    "read": (BUILTINS, "run_read"),
    **dict.fromkeys(("mapfile", "readarray"), (BUILTINS, "run_mapfile")),
    "alias": (BUILTINS, "run_alias"),
    "unalias": (BUILTINS, "run_unalias"),
    "hash": (BUILTINS, "run_hash"),
    "printf": (BUILTINS, "run_printf"),
    "tee": (BUILTINS, "run_tee"),
    **dict.fromkeys(("cp", "ln", "install", "mv"), (BUILTINS, "run_copy")),
    "mkdir": (BUILTINS, "run_mkdir"),
}


def program_model(name: str) -> tuple[str, str] | None:
    """(module, function) that models the program `name`; None for a program
    the guard has no model of (what it prints may still be known: static_output)."""
    model = PROGRAM_MODELS.get(name)
    if model is None and name.startswith("git-") and len(name) > 4:
        return GIT, "run_dashed_git"  # git-<sub>: how git runs its subcommands
    if model is None and name.startswith(("python", "pypy")):
        return SHELL_MODELS, "run_interpreter"
    if model is None and name.startswith("mkfs"):
        return DESTROY, "run_disk_writer"
    return model

