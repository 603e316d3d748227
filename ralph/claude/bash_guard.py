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

from ralph.claude.protocol import HookCall, Outcome, allow, deny
from ralph.plugins import load as load_plugin
from ralph.redaction import redact
from ralph.rules.guard.judge import judge_command
from ralph.rules.guard.policy import DEFAULT_POLICY, GuardPolicy
from ralph.rules.guard.state import Surroundings

# what most commands never need, loaded at one site (load) when one does:
# the project's ralph.toml (`section_or_defaults`: the config schema, only
# when there is a file), the repository's local remotes (`local_remotes`,
# when a command writes with git), the denial record of a loop run (a denied
# command), saving before a destructive command (`save_then_allow(call,
# command, verdict, policy) -> Outcome`: it runs git), and reading git's
# index (`index_has`)
LATER = {"config": "ralph.config.reading", "remotes": "ralph.claude.local_remotes", "denials": "ralph.state.denials",
         "snapshot": "ralph.claude.bash_save", "index": "ralph.claude.git_index"}
MAX_FILE_BYTES = 1024 * 1024  # a task runner's file, a script, a test: read this much at most
# variables the Bash tool's shell has, as the guard may expand them
KNOWN_VARIABLES = ("HOME", "TMPDIR", "CLAUDE_PROJECT_DIR", "USER", "CLAUDE_CODE_TMPDIR")


def load_guard_policy(call: HookCall) -> GuardPolicy:
    """The [guard] table of ralph.toml. A broken config is logged and the
    defaults apply: they block every push and merge."""
    values, problem = load("config").section_or_defaults(call.root, "guard", call.environ)
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
    verdict = judge_command(command, policy, cwd=call.cwd, remotes=lambda: load("remotes").local_remotes(call.root),
                            around=surroundings(call.root, call.cwd, call.environ))
    if verdict.blocked:
        call.log_extra["evidence"] = verdict.evidence[:10]
        call.log_extra["rule_id"] = verdict.rule_id
        denials = load("denials")
        outcome = deny(f"{verdict.reason} {denials.REQUEST_MERGE_HINT}" if denials.tools_active(call.environ) else verdict.reason)
        if call.environ.get(denials.ENV_RUN_ID):
            record_denial(call, command, verdict.reason, outcome)
        return outcome
    if verdict.saves:
        call.log_extra["rule_id"] = verdict.rule_id
        outcome = load("snapshot").save_then_allow(call, command, verdict, policy)
        if outcome.decision == "deny" and call.environ.get(load("denials").ENV_RUN_ID):
            record_denial(call, command, outcome.reason, outcome)
        return outcome
    return allow()


def load(what: str) -> object:
    return load_plugin(LATER[what])


def record_denial(call: HookCall, command: str, reason: str, outcome: Outcome) -> None:
    """During a ralph-loop run: log the denial where the loop reads it, and
    end the session at the loop's limit of denials per iteration (the deny
    still stands: the command never runs)."""
    environ = call.environ
    denials = load("denials")
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
        return load("index").index_has(entry[1], os.path.relpath(path, top).encode("utf-8", "surrogateescape"))

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
