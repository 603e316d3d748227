"""Where a project is and where ralph keeps its state: the project root, its
config file, and the state directory."""
import os
import sys

from ralph.state.files import write_all

STATE_DIR_NAME = ".ralph"
CONFIG_FILE = "ralph.toml"
GLOBAL_HOOKS_FILE = "hooks.toml"  # in the user's config dir: global_hooks_path()


def project_root(cwd: str, environ: dict[str, str] | None = None) -> str:
    """$CLAUDE_PROJECT_DIR, else the git toplevel above cwd, else cwd.

    The toplevel is found by walking up to a `.git` entry (dir, or file for
    worktrees and submodules) instead of spawning git: this runs on every call.
    """
    env_dir = (os.environ if environ is None else environ).get("CLAUDE_PROJECT_DIR")
    if env_dir and os.path.isdir(env_dir):
        return os.path.abspath(env_dir)
    here = os.path.abspath(cwd)
    probe = here
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return here
        probe = parent


def config_path(root: str, environ: dict[str, str] | None = None) -> str | None:
    """The project's config file (`ralph.toml`, or $RALPH_CONFIG), None when
    there is none. Here, not in ralph.config, so the hot path can ask without
    importing the parser."""
    explicit = (os.environ if environ is None else environ).get("RALPH_CONFIG")
    if explicit:
        return explicit
    path = os.path.join(root, CONFIG_FILE)
    return path if os.path.isfile(path) else None


def global_hooks_path(environ: dict[str, str] | None = None) -> str:
    """The user's global hooks file: platformdirs' user config dir +
    hooks.toml. On Linux computed the way platformdirs does (XDG_CONFIG_HOME,
    else ~/.config) without importing it: the dispatcher asks on every call
    and `ralph-loop --dry-run` at start, and its import costs more than either."""
    env = os.environ if environ is None else environ
    if sys.platform.startswith("linux"):
        base = env.get("XDG_CONFIG_HOME", "").strip() or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
        return os.path.join(base, "ralph-hooks", GLOBAL_HOOKS_FILE)
    # rare path, off Linux: platformdirs knows each system's config dir
    import platformdirs

    return os.path.join(platformdirs.user_config_dir("ralph-hooks"), GLOBAL_HOOKS_FILE)


def fallback_state_dir(root: str) -> str:
    """Per-user state dir for a project outside git whose .ralph/ is not
    there (or cannot be written)."""
    # rare path, off the hook's start-up: platformdirs and hashlib cost more than a hook call
    import hashlib

    import platformdirs

    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return os.path.join(platformdirs.user_state_dir("ralph-hooks"), "projects", digest)


# .ralph/.gitignore, written by the loop and by `ralph init`, so `git add -A`
# never commits prompts, logs or run state.
STATE_GITIGNORE = """\
# Written by ralph-hooks: run state (run.json, events, logs, hook sessions)
# stays out of git; plans, progress notes and prompts are committed.
*
!.gitignore
!*.md
!prd.json
!PRD-*/
!hooks/
!hooks/**
!pipelines/
!pipelines/**
"""


def ensure_state_gitignore(directory: str) -> None:
    """Write `<directory>/.gitignore` atomically unless one exists: a user's
    own is never overwritten (a hard link from a finished temp file fails when
    the name is taken, so a racing writer cannot clobber it either)."""
    path = os.path.join(directory, ".gitignore")
    if os.path.lexists(path):
        return
    tmp = os.path.join(directory, f"..gitignore.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            write_all(fd, STATE_GITIGNORE.encode("utf-8"))
        finally:
            os.close(fd)
        os.link(tmp, path)
    except OSError:
        pass  # exists already (a racing writer won), or a filesystem without links: the next call retries
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def git_dir(root: str) -> str | None:
    """The repository's git directory: `<root>/.git`, or where a `.git` file
    (a worktree, a submodule) points; None outside git."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as f:
            first = f.readline()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    path = os.path.join(root, first[len("gitdir:"):].strip())
    return path if os.path.isdir(path) else None


def _usable(directory: str) -> bool:
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK | os.X_OK)


def state_dir(root: str) -> str:
    """Where hooks and commands keep this project's state, created on demand:

    - $RALPH_STATE_DIR (a spawned child loop keeps its run state, and its
      agent's hooks theirs, in its own directory);
    - `<root>/.ralph/` when ralph-loop or `ralph init` made it (it holds their
      .gitignore, or a run.json);
    - else `<git dir>/ralph/`: an interactive session in a repository never
      writes into the work tree, so `git add -A` never sees its state;
    - else (outside git, or nothing writable) a per-user directory."""
    override = os.environ.get("RALPH_STATE_DIR")
    if override:
        override = override if os.path.isabs(override) else os.path.join(root, override)
        os.makedirs(override, exist_ok=True)
        return override
    primary = os.path.join(root, STATE_DIR_NAME)
    if (os.path.lexists(os.path.join(primary, ".gitignore")) or os.path.lexists(os.path.join(primary, "run.json"))) and _usable(primary):
        return primary
    repository = git_dir(root)
    if repository is not None and _usable(os.path.join(repository, "ralph")):
        return os.path.join(repository, "ralph")
    fallback = fallback_state_dir(root)
    os.makedirs(fallback, exist_ok=True)
    return fallback


def loop_state_dir(root: str) -> str:
    """The state dir of a ralph-loop run: `<root>/.ralph/` (or
    $RALPH_STATE_DIR), created with its .gitignore so the agent's hooks find
    the run there; the per-user fallback when it cannot be written."""
    override = os.environ.get("RALPH_STATE_DIR")
    if override:
        return state_dir(root)
    primary = os.path.join(root, STATE_DIR_NAME)
    if _usable(primary):
        ensure_state_gitignore(primary)
        return primary
    fallback = fallback_state_dir(root)
    os.makedirs(fallback, exist_ok=True)
    return fallback
