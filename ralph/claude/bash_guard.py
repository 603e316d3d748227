"""The guard on one Bash command, with the project's [guard] table: deny what
would push, merge or destroy work beyond saving; save first what a snapshot
can hold (through the saver, loaded only then) and allow it; a denial during
a ralph-loop run is recorded where the loop reads it.

The guard's judgement is pure (ralph.rules.guard.judge): what it needs to
know about the machine comes in through Surroundings, built here: the
project's top, the home and temporary directories, the environment's HOME,
TMPDIR and PWD, and ProjectFiles, the reader through which it reads task
runners' files and asks whether git tracks a path (called only by commands
that need it)."""
import os
import stat
import sys

from ralph.claude.local_remotes import local_remotes
from ralph.claude.protocol import HookCall, Outcome, allow, deny
from ralph.config.reading import section_or_defaults
from ralph.redaction import redact
from ralph.rules.guard.judge import judge_command
from ralph.rules.guard.policy import DEFAULT_POLICY, GuardPolicy
from ralph.rules.guard.state import Surroundings
from ralph.state import denials

# what a verdict needs done before the command may run -> the module that
# does it (`save_then_allow(call, command, verdict, policy) -> Outcome`):
# saving runs git, and most commands never need it
SAVERS = {"snapshot": "ralph.claude.bash_save"}
MAX_FILE_BYTES = 1024 * 1024  # a task runner's file, a script, a test: read this much at most
# variables the Bash tool's shell has, as the guard may expand them
KNOWN_VARIABLES = ("HOME", "TMPDIR", "CLAUDE_PROJECT_DIR", "USER", "CLAUDE_CODE_TMPDIR")


def load_guard_policy(call: HookCall) -> GuardPolicy:
    """The [guard] table of ralph.toml. A broken config is logged and the
    defaults apply: they block every push and merge."""
    values, problem = section_or_defaults(call.root, "guard", call.environ)
    if problem:
        call.problems.append(problem)
    return GuardPolicy.from_values(values)


def surroundings(root: str, cwd: str, environ: dict[str, str]) -> Surroundings:
    """Where a command of this call runs, for the guard's judgement."""
    temp = ["/tmp", "/var/tmp", "/dev/shm"] + [environ[name] for name in ("TMPDIR", "CLAUDE_CODE_TMPDIR") if environ.get(name)]
    variables = {name: environ[name] for name in KNOWN_VARIABLES if environ.get(name)}
    variables["PWD"] = cwd
    return Surroundings(root, environ.get("HOME", ""), tuple(temp), ProjectFiles(root), variables)


def judge(call: HookCall, command: str, config_path: str | None) -> Outcome:
    """Deny `command` when running it would push or merge or destroy what no
    snapshot can hold; save first what one can. `config_path`: the project's
    ralph.toml (its [guard] table applies), None when there is none."""
    policy = load_guard_policy(call) if config_path else DEFAULT_POLICY
    verdict = judge_command(command, policy, cwd=call.cwd, remotes=lambda: local_remotes(call.root),
                            around=surroundings(call.root, call.cwd, call.environ))
    if verdict.blocked:
        call.log_extra["evidence"] = verdict.evidence[:10]
        call.log_extra["rule_id"] = verdict.rule_id
        outcome = deny(verdict.reason)
        if call.environ.get(denials.ENV_RUN_ID):
            record_denial(call, command, verdict.reason, outcome)
        return outcome
    if verdict.saves:
        call.log_extra["rule_id"] = verdict.rule_id
        name = SAVERS["snapshot"]
        __import__(name)
        outcome = sys.modules[name].save_then_allow(call, command, verdict, policy)
        if outcome.decision == "deny" and call.environ.get(denials.ENV_RUN_ID):
            record_denial(call, command, outcome.reason, outcome)
        return outcome
    return allow()


def record_denial(call: HookCall, command: str, reason: str, outcome: Outcome) -> None:
    """During a ralph-loop run: log the denial where the loop reads it, and
    end the session at the loop's limit of denials per iteration (the deny
    still stands: the command never runs)."""
    environ = call.environ
    try:
        iteration = int(environ.get(denials.ENV_ITERATION, "0"))
        limit = int(environ.get(denials.ENV_MAX_DENIALS, "0"))
    except ValueError:
        iteration, limit = 0, 0
    try:
        count = denials.append_denial(call.state_dir, environ.get(denials.ENV_RUN_ID, ""), iteration, environ.get(denials.ENV_STORY),
                                      call.session_id, redact(command), redact(reason))
    except OSError as e:
        call.problems.append(f"could not record the denial: {e}")
        return
    call.log_extra["denials_this_iteration"] = count
    if limit and count >= limit:
        outcome.output["continue"] = False
        outcome.output["stopReason"] = (
            f"ralph-loop: {count} commands denied by the guard in this iteration (limit {limit}); "
            "the loop ends the iteration and tells the next one why"
        )


class ProjectFiles:
    """The files the guard may read, through judge_command's Surroundings:
    regular files (at most MAX_FILE_BYTES, as text), directory listings,
    whether a path exists, whether git tracks it (the index, read once, with
    no git process) and whether a word names a branch or tag."""

    __slots__ = ("root", "_indexes", "_texts")

    def __init__(self, root: str) -> None:
        self.root = root  # the project's top: whose branches and tags is_ref knows
        self._indexes: dict[str, tuple[str, bytes]] = {}  # work tree top -> (its git dir, index bytes)
        self._texts: dict[str, str | None] = {}

    def read(self, path: str) -> str | None:
        if path in self._texts:
            return self._texts[path]
        text = None
        try:
            # O_NONBLOCK: a FIFO must not hang the hook; only regular files are read
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            try:
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    head = os.read(fd, 4096)
                    if b"\0" not in head:  # a program's binary is not a script
                        text = (head + (os.read(fd, MAX_FILE_BYTES - len(head)) if len(head) == 4096 else b"")).decode("utf-8", "replace")
            finally:
                os.close(fd)
        except OSError:
            text = None
        self._texts[path] = text
        return text

    def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    def list_dir(self, path: str) -> list[tuple[str, bool]] | None:
        try:
            with os.scandir(path) as entries:
                return [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
        except OSError:
            return None

    def tracked(self, path: str) -> bool:
        """Is this file in its repository's index (staged or committed)? A
        path whose index cannot be read counts as tracked when it exists."""
        if not os.path.isfile(path):
            return False
        top = os.path.dirname(path)
        while not os.path.exists(os.path.join(top, ".git")):
            parent = os.path.dirname(top)
            if parent == top:
                return False
            top = parent
        entry = self._index(top)
        if entry is None:
            return True
        return index_has(entry[1], os.path.relpath(path, top).encode("utf-8", "surrogateescape"))

    def is_ref(self, name: str) -> bool:
        """Does `name` name a branch, tag or remote-tracking branch of the
        project's repository?"""
        top = self.root
        while not os.path.exists(os.path.join(top, ".git")):
            parent = os.path.dirname(top)
            if parent == top:
                return False
            top = parent
        git_dir = _git_dir(top)
        if git_dir is None:
            return False
        for kind in ("heads", "tags", "remotes"):
            if os.path.isfile(os.path.join(git_dir, "refs", kind, name)):
                return True
        try:
            with open(os.path.join(git_dir, "packed-refs"), "rb") as f:
                packed = f.read(4 * MAX_FILE_BYTES)
        except OSError:
            return False
        wanted = name.encode("utf-8", "surrogateescape")
        return any(b" refs/" + kind + b"/" + wanted + b"\n" in packed for kind in (b"heads", b"tags", b"remotes"))

    def _index(self, top: str) -> tuple[str, bytes] | None:
        if top not in self._indexes:
            git_dir = _git_dir(top)
            try:
                with open(os.path.join(git_dir or "", "index"), "rb") as f:
                    data = f.read()
            except OSError:
                data = b""
            self._indexes[top] = (git_dir or "", data)
        entry = self._indexes[top]
        return entry if entry[1][:4] == b"DIRC" else None


def _git_dir(top: str) -> str | None:
    """The git directory of the work tree at `top` (`.git`, or where a
    worktree's or submodule's `.git` file points)."""
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as f:
            pointed = f.read(4096).split("gitdir:", 1)[-1].strip()
    except OSError:
        return None
    return os.path.normpath(os.path.join(top, pointed)) if pointed else None


def index_has(index: bytes, path: bytes) -> bool:
    """Is `path` an entry of this git index (bytes of .git/index)? Versions 2
    and 3 are searched for the path and checked at their entry's place; a
    version 4 index (paths compressed) is walked entry by entry."""
    version = int.from_bytes(index[4:8], "big")
    if version == 4:
        return path in _v4_paths(index)
    needle = path + b"\0"
    length = min(len(path), 0xFFF)
    at = index.find(needle, 12)
    while at >= 0:
        for offset in (62, 74):  # sha-1 and sha-256 entries: 40 bytes of stat data, the id, 2 bytes of flags
            for extended in (0, 2):
                start = at - offset - extended
                if start >= 12 and (start - 12) % 8 == 0:
                    flags = int.from_bytes(index[start + offset - 2:start + offset], "big")
                    if flags & 0xFFF == length and bool(flags & 0x4000) == bool(extended):
                        return True
        at = index.find(needle, at + 1)
    return False


def _v4_paths(index: bytes) -> set[bytes]:
    """Every path of a version 4 index (each entry's path is the previous
    one's with a number of bytes cut off its end, then a suffix)."""
    count = int.from_bytes(index[8:12], "big")
    paths: set[bytes] = set()
    position = 12
    previous = b""
    for _ in range(count):
        flags_at = position + 60
        if flags_at + 2 > len(index):
            break
        flags = int.from_bytes(index[flags_at:flags_at + 2], "big")
        position = flags_at + 2 + (2 if flags & 0x4000 else 0)
        cut = 0
        shift = 0
        while position < len(index):  # git's offset encoding: 7 bits a byte, high bit = more
            byte = index[position]
            position += 1
            cut = (cut << 7) | (byte & 0x7F) if shift == 0 else ((cut + 1) << 7) | (byte & 0x7F)
            shift += 1
            if not byte & 0x80:
                break
        end = index.find(b"\0", position)
        if end < 0:
            break
        previous = previous[:len(previous) - cut] + index[position:end]
        paths.add(previous)
        position = end + 1
    return paths
