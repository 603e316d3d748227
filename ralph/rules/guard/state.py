"""The guard's shared state: what an analysis knows while it walks a command.

Markers for unknown text and globs, the limits that keep the walk linear and
bounded, the deadline budget, the Scope (what the command itself defined so
far: variables, functions, aliases, files it wrote), how words are shown,
and the small readers the program models share (read_written, option_values).
Pure; no imports beyond ralph.rules.guard.programs.facts.
"""
import time

from ralph.rules.guard.programs.facts import INTERPRETERS

UNKNOWN = "\x00"  # stands for text the guard cannot know
GLOB = "\x01"  # marks an unquoted glob character in an expanded word
MAX_ALTERNATIVES = 16
MAX_VALUE = 100_000
MAX_CALL_DEPTH = 8
MAX_STEPS = 200_000

RISKY_WORDS = ("push", "merge", "pull", "send-pack", "subtree", "dcommit")
# ways to spell a word without writing it
ENCODINGS = ("\\x", "\\u", "\\0", "\\1", "\\2", "\\3", "\\4", "\\5", "\\6", "\\7", "$'", "base64", "b64",
             "xxd", "rev", "tr ", "sed", "awk", "chr(", "fromcharcode", "fromhex", "[::-1]", "bytes([",
             "reverse", "rot13", "codecs", "unhexlify", "pack(", "%c", "'+'", '"+"', "' + '", '" + "',
             "'.'", '"."', "frombase", "atob", "uudecode", "openssl")


class Deadline(Exception):
    pass


class Budget:
    __slots__ = ("deadline", "steps")

    def __init__(self, seconds: float) -> None:
        self.deadline = time.perf_counter() + seconds
        self.steps = 0

    def check(self) -> None:
        self.steps += 1
        if self.steps & 63 == 0 and time.perf_counter() > self.deadline:
            raise Deadline()
        if self.steps > MAX_STEPS:
            raise Deadline()


class Scope:
    """What the command itself defined so far."""

    __slots__ = ("vars", "arrays", "funcs", "aliases", "git_aliases", "exported", "positional", "files", "cwd", "refs",
                 "git_configs", "made")

    def __init__(self) -> None:
        self.vars: dict[str, list[str] | None] = {}  # name -> possible values, None = unknown
        self.arrays: dict[str, list[str]] = {}
        self.funcs: dict[str, tuple] = {}
        self.aliases: dict[str, str] = {}
        self.git_aliases: dict[str, str] = {}
        self.exported: dict[str, str] = {}
        self.positional: list[str] | None = None  # None = unknown ($1.. from outside)
        self.files: dict[str, str | None] = {}
        self.cwd = ""  # after `cd`, relative to where the command starts ("" = there; UNKNOWN inside = unknown)
        self.refs: dict[str, str] = {}  # namerefs (declare -n): name -> the variable it stands for
        self.git_configs: list[tuple[str, str]] = []  # git config set earlier in the command (include.path, core.hooksPath)
        self.made: tuple[str, ...] = ()  # paths the command created (mktemp): deleting them loses nothing

    def fork(self) -> "Scope":
        new = Scope.__new__(Scope)
        new.vars = dict(self.vars)
        new.arrays = dict(self.arrays)
        new.funcs = dict(self.funcs)
        new.aliases = dict(self.aliases)
        new.git_aliases = dict(self.git_aliases)
        new.exported = dict(self.exported)
        new.positional = self.positional
        new.files = dict(self.files)
        new.cwd = self.cwd
        new.refs = dict(self.refs)
        new.git_configs = list(self.git_configs)
        new.made = self.made
        return new


class Surroundings:
    """Where a command runs, for the rules that judge what it deletes or
    overwrites and the task runners whose files it reads: the project's top
    directory, the home directory, the temporary directories, and `files`,
    the reader of the project's files (ralph.claude.bash_guard passes one; None:
    nothing on disk is read and nothing is known to be tracked). "" = unknown.
    Pure: the reader is passed in, as the local remotes are."""

    __slots__ = ("root", "home", "temp_dirs", "files", "variables")

    def __init__(self, root: str = "", home: str = "", temp_dirs: tuple[str, ...] = ("/tmp", "/var/tmp", "/dev/shm"),
                 files: object = None, variables: dict[str, str] | None = None) -> None:
        self.root = root.rstrip("/") if root != "/" else root
        self.home = home.rstrip("/") if home != "/" else ""
        self.temp_dirs = tuple(d.rstrip("/") for d in temp_dirs if d.startswith("/") and d.rstrip("/"))
        self.files = files
        # variables the command's shell has from its environment, as the walk may
        # use them (HOME, TMPDIR, PWD): `rm -rf "$TMPDIR/x"` is temporary
        self.variables = dict(variables or {})
        if self.home:
            self.variables.setdefault("HOME", self.home)


def could_push(text: str, risky_words: tuple) -> bool:
    """Could this text, once decoded or expanded, spell a push or merge?"""
    low = text.lower()
    return any(w in low for w in risky_words) or any(e in low for e in ENCODINGS)


def file_key(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def shell_quote(word: str) -> str:
    if word and all(c.isalnum() or c in "-_./=:,+@%" for c in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def show(word: str) -> str:
    """A word as a person would write it (unknown parts as `…`)."""
    return word.replace(UNKNOWN, "…").replace(GLOB, "")


def show_argv(argv: list[str], limit: int = 160) -> str:
    text = " ".join(shell_quote(show(a)) if a else "''" for a in argv)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def program_name(word: str) -> str | None:
    """The program a command word runs (basename, lower case), None when unknown."""
    base = word.rsplit("/", 1)[-1]
    if not base or UNKNOWN in base or GLOB in base:
        return None
    return base.lower()


def normalize_program(name: str) -> str:
    """python3.12 -> python, perl5.36 -> perl, pip3 stays for DATA_PROGRAMS."""
    stripped = name.rstrip("0123456789.")
    if stripped != name and stripped in INTERPRETERS:
        return stripped
    if name.endswith(".exe"):
        return normalize_program(name[:-4])
    return name


def lookup_file(files: dict[str, str | None], path: str) -> tuple[bool, str | None]:
    """(found, content) of a file written earlier in the command. A path with an
    unknown or absolute prefix (`$PWD/x.cfg`) matches a written file of that name."""
    key = file_key(path)
    if key in files:
        return True, files[key]
    if path.startswith("/") and UNKNOWN not in path:
        # `$PWD/x.cfg`, `$(pwd)/x.cfg`: a file the command wrote by a relative name
        for name, content in files.items():
            if not name.startswith("/") and UNKNOWN not in name and path.endswith("/" + name):
                return True, content
    if UNKNOWN in path:
        tail = path.rsplit(UNKNOWN, 1)[1].lstrip("/")
        if tail and UNKNOWN not in tail:
            for name, content in files.items():
                if name == tail or name.endswith("/" + tail):
                    return True, content
    return False, None


def bare_repository(path: str) -> bool:
    """Does this path name another repository's git directory (`../origin.git`,
    `/srv/repo.git`): a bare repository, which is what a local-path remote is."""
    path = path.rstrip("/")
    base = path.rsplit("/", 1)[-1]
    return base.endswith(".git") and base != ".git" and UNKNOWN not in base


def read_written(path: str, scope: Scope) -> str | None:
    """The content of a file this command wrote, None when unknown (and for
    stdin, `-`, which the caller reads itself)."""
    if path in ("-", "/dev/stdin"):
        return None
    return lookup_file(scope.files, path)[1]


def option_values(args: list[str], options: tuple) -> list[str]:
    """The values given to these options: `-x v`, `-xv`, `--long v`, `--long=v`."""
    values = []
    for i, arg in enumerate(args):
        for option in options:
            if arg == option and i + 1 < len(args):
                values.append(args[i + 1])
            elif option.startswith("--") and arg.startswith(option + "="):
                values.append(arg[len(option) + 1:])
            elif not option.startswith("--") and arg.startswith(option) and len(arg) > len(option):
                values.append(arg[len(option):])
    return values
