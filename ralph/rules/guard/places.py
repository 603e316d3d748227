"""Where a path a command deletes or overwrites lies, and what losing it costs.

classify() puts a path (as the walk expanded it: UNKNOWN for text only known
when the command runs, GLOB before a glob character) in one of these places:

- "null": /dev/null, the terminal, a descriptor: nothing is lost.
- "temp": below a temporary directory (/tmp, /var/tmp, $TMPDIR, ...), or a
  path the command itself made (mktemp): nothing of value is lost.
- "artefact": a build or cache directory or file inside the project
  (ARTEFACT_NAMES: `node_modules`, `dist`, `build`, `__pycache__`, `*.pyc`, ...):
  made again by the build, not saved.
- "project": inside the project, recoverable by saving a snapshot first.
- "git-dir": the project's `.git` (its history and the snapshots themselves).
- "project-root": the project's directory or one above it.
- "home": a home directory or anything in it outside the project.
- "system": `/` or a system directory (/etc, /usr, ...) or anything in one.
- "device": a disk (/dev/sda, /dev/nvme0n1, ...).
- "outside": any other absolute path: another repository, a mounted volume.
- "unknown": the path is only known when the command runs.

Pure: paths are resolved lexically against the command's working directory
(symlinks are not followed; the reader of the project's files, when there is
one, answers only "is it tracked").
"""
import posixpath

from ralph.rules.guard.state import GLOB, UNKNOWN, Scope, Surroundings

# build outputs, caches and installed dependencies: the build makes them again
ARTEFACT_NAMES = frozenset((
    "node_modules", "bower_components", "dist", "build", "out", "target", "coverage", "htmlcov", ".coverage",
    "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".tox", ".nox", ".venv", "venv",
    ".eggs", ".next", ".nuxt", ".svelte-kit", ".turbo", ".parcel-cache", ".cache", ".gradle", ".angular",
    ".ipynb_checkpoints", ".DS_Store", "Thumbs.db", ".sass-cache", ".terraform", "cmake-build-debug",
    "cmake-build-release", "CMakeFiles", "CMakeCache.txt", ".pnpm-store", ".yarn-cache", "storybook-static",
    "_build", ".docusaurus", ".expo", ".dart_tool", "bin-debug", "obj", "tmp", ".tmp", "temp",
))
ARTEFACT_SUFFIXES = (".pyc", ".pyo", ".o", ".obj", ".class", ".egg-info", ".log", ".tsbuildinfo", ".orig", ".rej", ".swp")
# top-level directories of the system (and of macOS): deleting below them breaks the machine
SYSTEM_DIRS = frozenset((
    "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "opt", "proc", "run", "sbin", "srv", "sys", "usr",
    "var", "snap", "mnt", "media", "nix", "Applications", "Library", "System", "private", "Volumes", "cores", "efi",
))
HOME_DIRS = ("/home", "/Users", "/root")
# /dev entries that are not disks
HARMLESS_DEVICES = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/full",
                    "/dev/random", "/dev/urandom", "/dev/console", "/dev/ptmx")
DISK_PREFIXES = ("sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "md", "dm-", "loop", "sr", "mapper/",
                 "nbd", "zd", "zram", "mtd", "fd0", "ram", "root", "xvda", "by-id/", "by-uuid/", "by-path/", "disk/")


class Place:
    """Where one path lies: `kind` (see the module docstring), `path` (as
    resolved, "" when unknown) and `shown` (as a person writes it)."""

    __slots__ = ("kind", "path", "shown")

    def __init__(self, kind: str, path: str, shown: str) -> None:
        self.kind = kind
        self.path = path
        self.shown = shown

    def __repr__(self) -> str:
        return f"Place({self.kind!r}, {self.path!r})"


def shown(path: str) -> str:
    return path.replace(UNKNOWN, "…").replace(GLOB, "")


def is_artefact(name: str) -> bool:
    """A build or cache name (`node_modules`, `*.pyc`), with glob marks taken off."""
    name = name.replace(GLOB, "")
    return name in ARTEFACT_NAMES or name.endswith(ARTEFACT_SUFFIXES) or (name.startswith("*") and name[1:].endswith(ARTEFACT_SUFFIXES))


def working_directory(cwd: str, scope: Scope) -> str:
    """Where the command is when it reaches this point (after its `cd`s): an
    absolute path, "" when the start is unknown, or one holding UNKNOWN."""
    if scope.cwd.startswith("~"):
        return scope.cwd  # resolved by classify with the home directory
    if scope.cwd.startswith("/") or UNKNOWN in scope.cwd:
        return scope.cwd
    if not cwd:
        return ""
    return posixpath.normpath(posixpath.join(cwd, scope.cwd)) if scope.cwd else cwd


def classify(around: Surroundings, cwd: str, scope: Scope, path: str) -> Place:
    """The place of `path` (a word as expanded) for a command running in `cwd`
    (ralph's payload cwd) after this command's own `cd`s (scope.cwd)."""
    text = path
    if not text:
        return Place("unknown", "", "''")
    key = text
    while key.startswith("./"):
        key = key[2:]
    for made in scope.made:
        if key == made or key.startswith(made.rstrip("/") + "/"):
            return Place("temp", text, shown(text))
    home = around.home
    if text == "~" or text.startswith("~/"):
        if not home:
            return Place("home", "", shown(text))
        text = home + text[1:]
    elif text.startswith("~"):
        return Place("home", "", shown(text))  # ~user: someone's home directory
    if text.startswith(UNKNOWN):
        return _unknown(around, text, shown(text))  # `$dir/x`: could be anywhere, / included
    where = working_directory(cwd, scope)
    if where.startswith("~"):
        where = (home + where[1:]) if home else UNKNOWN
    if not text.startswith("/"):
        if UNKNOWN in where:
            return _unknown(around, text, shown(text))
        if not where:
            return _relative_without_cwd(posixpath.join(scope.cwd, text) if scope.cwd else text)
        text = posixpath.join(where, text)
    if UNKNOWN in text:
        return _unknown(around, text, shown(path))
    full = posixpath.normpath(text)
    if full.startswith("//"):
        full = "/" + full.lstrip("/")
    return _absolute(around, full, shown(path))


def _relative_without_cwd(text: str) -> Place:
    """A relative path when the guard does not know where the command runs
    (ralph explain without a project, the pure tests): inside the project."""
    parts = [p for p in posixpath.normpath(text).split("/") if p not in ("", ".")]
    if UNKNOWN in text:
        return _unknown(Surroundings(), text, shown(text))
    if not parts or parts[0] == "..":
        return Place("project-root" if not parts or parts == [".."] * len(parts) else "outside", "", shown(text))
    return _inside(parts, "", shown(text))


def _inside(parts: list[str], full: str, text: str) -> Place:
    """A path below the project's top, as its parts."""
    if parts[0] == ".git":
        if len(parts) > 1 and parts[-1].endswith(".lock"):
            return Place("temp", full, text)  # a stale lock file git left behind
        return Place("git-dir", full, text)
    if GLOB not in parts[-1] and is_artefact(parts[-1]) or any(is_artefact(p) and GLOB not in p for p in parts[:-1]):
        return Place("artefact", full, text)
    if GLOB in parts[-1] and is_artefact(parts[-1]):
        return Place("artefact", full, text)
    return Place("project", full, text)


def _absolute(around: Surroundings, full: str, text: str) -> Place:
    if full.startswith("/dev/"):
        return _device(full, text)
    root = around.root
    if root:
        if full == root or root.startswith(full.rstrip("/") + "/") or full == "/":
            return Place("project-root" if full != "/" else "system", full, text)
        if full.startswith(root + "/"):
            return _inside(full[len(root) + 1:].split("/"), full, text)
    # the closest of the temporary directories and the home directory decides
    # (a test's HOME may be in /tmp; a TMPDIR may be in the home directory)
    temp = max((len(t) for t in around.temp_dirs if full.startswith(t + "/")), default=-1)
    home = around.home
    in_home = len(home) if home and (full == home or full.startswith(home + "/")) else -1
    if temp > in_home:
        return Place("temp", full, text)
    if full == "/":
        return Place("system", full, text)
    if in_home >= 0 or (home and home.startswith(full + "/")):
        return Place("home", full, text)
    top = full.split("/")[1]
    if "/" + top in HOME_DIRS:
        return Place("home", full, text)
    if top.replace(GLOB, "") in SYSTEM_DIRS or GLOB in top:
        return Place("system", full, text)
    return Place("outside", full, text)


def _device(full: str, text: str) -> Place:
    if full in HARMLESS_DEVICES or full.startswith(("/dev/fd/", "/dev/pts/", "/dev/tty")):
        return Place("null", full, text)
    if full.startswith("/dev/shm/"):
        return Place("temp", full, text)
    name = full[5:]
    if name.startswith(DISK_PREFIXES) or GLOB in name:
        return Place("device", full, text)
    return Place("system", full, text)


def _unknown(around: Surroundings, text: str, display: str) -> Place:
    """A path with parts only known when the command runs: judged by the part
    that is known (`/tmp/tmp.…` is temporary, `…/node_modules` an artefact,
    `build/…` inside the project)."""
    head, _, tail = text.partition(UNKNOWN)
    last = text.rsplit("/", 1)[-1]
    if UNKNOWN not in last and last and is_artefact(last):
        return Place("artefact", "", display)
    if head.startswith("/"):
        directory = head.rsplit("/", 1)[0] or "/"
        if directory == "/":
            return Place("unknown", "", display)
        probe = _absolute(around, posixpath.normpath(directory) + "/", display)
        if probe.kind == "temp" or any(directory == t for t in around.temp_dirs):
            return Place("temp", "", display)
        if probe.kind in ("project", "artefact", "git-dir"):
            return Place(probe.kind, "", display)
        if probe.kind == "project-root" and probe.path == around.root:
            return Place("project", "", display)  # something directly in the project's top directory
        if probe.kind in ("home", "system", "device", "outside") and directory.count("/") >= 1:
            return Place(probe.kind, "", display)
        return Place("unknown", "", display)
    if "/" in head and not head.startswith(("../", "~")) and ".." not in head.split("/"):
        parts = [p for p in head.split("/")[:-1] if p not in ("", ".")]
        if parts:
            kind = _inside(parts, "", display).kind
            return Place(kind if kind in ("git-dir", "artefact") else "project", "", display)
        if head.startswith("./"):
            return Place("project", "", display)  # ./… : something in the current directory
    return Place("unknown", "", display)


def relative_to_root(around: Surroundings, place: Place) -> str | None:
    """The place's path relative to the project's top ('' for the top), None
    when it is not a known path inside the project."""
    root = around.root
    if not place.path or not root or not place.path.startswith(root + "/"):
        return None
    return place.path[len(root) + 1:]
