"""Saving before a destructive command runs: what the guard's verdict says
the command would throw away is written to the object store first, then the
command is allowed and the agent is told how to get it back.

- The work tree and index ("tree" saves: `git reset --hard`, `git checkout --
  .`, `git clean -f`, `rm -r src`, ...): the no-loss snapshot the rollback
  uses (ralph.rollback: a commit under refs/ralph/rollbacks/<id> holding every
  tracked and untracked file, the index, modes; Kind "guard"), restored with
  `ralph rollbacks restore <id>`. Ignored files the command deletes are saved
  too (listed by `git ls-files --ignored` under the deleted paths, or by
  `git clean -n` with the same options), build artefacts (node_modules,
  dist, ...) excepted.
- Refs ("ref" and "stash" saves: `git branch -D x`, `git tag -d v1`, `git
  stash drop`/`clear`): kept under refs/ralph/kept/<time>-<command tag>-<sha>/...,
  with the command that brings each back (`git branch x <sha>`, `git stash
  store`).

Saving has a time limit ([guard] save_seconds, and at most what is left of the
hook's own deadline): past it, or when the snapshot cannot be made (no git
repository, an error), the command is denied with the reason and how to run
it safely; nothing half-saved is offered as a way back. When there is
nothing to save (a clean tree, a ref that does not exist) the command is
allowed as it is.
"""
import _signal
import os
import time
import zlib

from ralph.claude.protocol import HookCall, Outcome, allow, context, deny
from ralph.rollback.capture import capture
from ralph.rollback.git import Repo, RollbackError, split_z
from ralph.rollback.snapshots import write_snapshot
from ralph.rules.guard.places import is_artefact
from ralph.rules.guard.state import GLOB, UNKNOWN
from ralph.state import denials

KEPT_PREFIX = "refs/ralph/kept/"
DEADLINE_MARGIN = 2.0  # seconds left of the hook's own deadline for answering


class SaveTimeout(BaseException):
    """Saving took longer than allowed. Not an Exception: nothing on the way
    swallows it (subprocess.run kills the git it was waiting for)."""


def _on_alarm(signum: int, frame: object) -> None:
    raise SaveTimeout()


class TimeLimit:
    """SIGALRM after `seconds` (or what is left of the dispatcher's own
    deadline, minus a margin), restored afterwards."""

    __slots__ = ("seconds", "previous_handler", "previous_left", "started")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.previous_handler: object = None
        self.previous_left = 0.0
        self.started = 0.0

    def __enter__(self) -> "TimeLimit":
        self.started = time.monotonic()
        try:
            self.previous_left = _signal.getitimer(_signal.ITIMER_REAL)[0]
            if self.previous_left > 0:
                self.seconds = max(0.05, min(self.seconds, self.previous_left - DEADLINE_MARGIN))
            self.previous_handler = _signal.signal(_signal.SIGALRM, _on_alarm)
            _signal.setitimer(_signal.ITIMER_REAL, self.seconds)
        except (ValueError, OSError, AttributeError):
            self.previous_handler = None  # not the main thread (tests): no limit
        return self

    def __exit__(self, *exc: object) -> None:
        if self.previous_handler is None:
            return
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, self.previous_handler)
        if self.previous_left > 0:
            left = self.previous_left - (time.monotonic() - self.started)
            _signal.setitimer(_signal.ITIMER_REAL, max(left, 0.01))


class Saved:
    """What was saved: the snapshot (id, ref, files changed) and the kept refs
    with the command that brings each back."""

    __slots__ = ("snapshot_id", "snapshot_ref", "files_changed", "kept")

    def __init__(self) -> None:
        self.snapshot_id = ""
        self.snapshot_ref = ""
        self.files_changed = 0
        self.kept: list[tuple[str, str, str]] = []  # (what, sha, command that restores it)

    @property
    def anything(self) -> bool:
        return bool(self.snapshot_id or self.kept)


def save_then_allow(call: HookCall, command: str, verdict: object, policy: object) -> Outcome:
    """Save what the verdict names, then allow with a note on getting it
    back; deny when saving fails or takes too long."""
    what = "; ".join(dict.fromkeys(s[3] for s in verdict.saves))
    seconds = float(getattr(policy, "save_seconds", 10.0))
    started = time.monotonic()
    try:
        with TimeLimit(seconds):
            saved = save(call.root, command, verdict.saves, call.environ)
    except SaveTimeout:
        call.log_extra["saved"] = f"timed out after {time.monotonic() - started:.1f}s"
        return deny(
            f"ralph-hooks did not run this command: it would throw work away (`{what}`), and saving that work first took "
            f"longer than {seconds:.0f} s (the project is large). Commit the work you want to keep first (`git add -A && git "
            "commit -m wip`), or delete by name only what you mean to (build artefacts such as node_modules or dist are "
            "not saved and need no saving)."
        )
    except (RollbackError, OSError, UnicodeError) as e:
        call.log_extra["saved"] = f"failed: {e}"
        return deny(
            f"ralph-hooks did not run this command: it would throw work away (`{what}`), and ralph could not save that work "
            f"first ({e}). Commit what you want to keep first (`git add -A && git commit -m wip`) and run it again, or do "
            "it in a way that keeps the files (move them aside with `mv`)."
        )
    call.log_extra["save_ms"] = round((time.monotonic() - started) * 1000, 1)
    if not saved.anything:
        call.log_extra["saved"] = "nothing to save"
        return allow()
    if saved.snapshot_id:
        call.log_extra["snapshot"] = saved.snapshot_id
        call.log_extra["restore"] = f"ralph rollbacks restore {saved.snapshot_id}"
    if saved.kept:
        call.log_extra["kept"] = [f"{what_kept} {sha}" for what_kept, sha, _ in saved.kept]
    return context("PreToolUse", restore_note(saved, what))


def restore_note(saved: Saved, what: str) -> str:
    parts = [f"Before this command ran, ralph-hooks saved what it throws away (`{what}`)."]
    if saved.snapshot_id:
        parts.append(f"Snapshot {saved.snapshot_id} ({saved.snapshot_ref}) holds the work tree and index as they were "
                     f"({saved.files_changed} file(s) differing from HEAD); to get them back: "
                     f"`ralph rollbacks restore {saved.snapshot_id}` (work done since is saved first).")
    for what_kept, sha, restore in saved.kept:
        parts.append(f"{what_kept} was at {sha[:12]}; to get it back: `{restore}`.")
    return " ".join(parts)


def save(root: str, command: str, saves: tuple, environ: dict[str, str]) -> Saved:
    """Write what `saves` (GuardVerdict.saves) names. Raises RollbackError
    when it cannot be saved."""
    repo = Repo(root)
    saved = Saved()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + command_tag(command)
    trees = [target for kind, target, _, _ in saves if kind == "tree"]
    if trees:
        protect = protected_paths(repo, trees)
        cap = capture(repo, protect)
        if cap.dirty or cap.extras or cap.ita:
            fields = {"Kind": "guard", "Trigger": ", ".join(dict.fromkeys(rule for kind, _, rule, _ in saves if kind == "tree")),
                      "Story": environ.get(denials.ENV_STORY, ""), "Run": environ.get(denials.ENV_RUN_ID, ""),
                      "Iteration": environ.get(denials.ENV_ITERATION, "")}
            saved.snapshot_id, saved.snapshot_ref, _ = write_snapshot(repo, cap, snapshot_subject(command), fields)
            saved.files_changed = int(_files_changed(repo, cap))
    for kind, target, _, _ in saves:
        if kind == "ref":
            sha = repo.commit_exists(target) if UNKNOWN not in target else None
            if sha:
                name = target.split("/", 2)[-1]
                keep = f"{KEPT_PREFIX}{stamp}-{sha[:8]}/{target[5:]}"
                repo.run(["update-ref", "-m", "ralph guard: kept before it was deleted", keep, sha, ""])
                restore = f"git tag {name} {sha}" if target.startswith("refs/tags/") else \
                    f"git branch {name} {sha}" if target.startswith("refs/heads/") else f"git update-ref {target} {sha}"
                saved.kept.append((f"{'tag' if target.startswith('refs/tags/') else 'branch' if target.startswith('refs/heads/') else 'ref'} {name}",
                                   sha, restore))
        elif kind == "stash":
            entries = _stash_entries(repo) if target == "*" else [(target, repo.commit_exists(target))]
            for entry, sha in entries:
                if not sha:
                    continue
                keep = f"{KEPT_PREFIX}{stamp}-{sha[:8]}/stash"
                repo.run(["update-ref", "-m", "ralph guard: kept before it was dropped", keep, sha, ""])
                saved.kept.append((f"stash entry {entry}", sha, f"git stash store -m 'restored by ralph' {sha}"))
    return saved


def command_tag(command: str) -> str:
    """Eight hex digits that name the command among the refs kept for it
    (refs/ralph/kept/<time>-<tag>-<sha>/...): `ralph explain` finds them by it."""
    return "%08x" % zlib.crc32(" ".join(command.split()).encode("utf-8", "surrogateescape"))


def snapshot_subject(command: str) -> str:
    """The subject of a guard snapshot: `ralph explain` finds the snapshot of a
    command by it."""
    return "ralph guard: before `" + " ".join(command.split()) + "`"


def _files_changed(repo: Repo, cap: object) -> int:
    if cap.tree == cap.head_tree:
        return 0
    return len(split_z(repo.run(["diff-tree", "-r", "-z", "--no-renames", "--name-only", cap.head_tree, cap.tree])))


def _stash_entries(repo: Repo) -> list[tuple[str, str]]:
    out = repo.run(["log", "-g", "-z", "--format=%gd %H", "refs/stash"], ok=(0, 128))
    entries = []
    for record in split_z(out):
        name, _, sha = record.decode("utf-8", "replace").strip().partition(" ")
        if sha:
            entries.append((name, sha))
    return entries


def protected_paths(repo: Repo, targets: list[str]) -> list[bytes]:
    """Ignored files (and directories) the command deletes, for the snapshot's
    extras: under the paths it deletes, or what `git clean` with its own
    options would remove. Build artefacts are left out: the build makes them again."""
    listed: list[bytes] = []
    pathspecs = []
    top = repo.top.rstrip("/") + "/"
    for target in targets:
        if target.startswith("clean\0"):
            words = target.split("\0")[1:]
            options = [w for w in words[:words.index("--")] if w not in ("-i", "--interactive")]
            paths = words[words.index("--") + 1:]
            out = repo.run(["clean", "-n", *options, "--", *paths], ok=(0, 1, 128))
            for line in out.decode("utf-8", "surrogateescape").splitlines():
                if line.startswith("Would remove "):
                    listed.append(line[len("Would remove "):].encode("utf-8", "surrogateescape"))
        elif target and UNKNOWN not in target and target.startswith(top):
            pathspecs.append(target[len(top):].replace(GLOB, "") or ".")
    if pathspecs:
        out = repo.run(["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--", *pathspecs],
                       ok=(0, 1, 128))
        listed.extend(split_z(out))
    kept = []
    for path in listed:
        text = os.fsdecode(path).rstrip("/")
        if text and not any(is_artefact(part) for part in text.split("/")):
            kept.append(os.fsencode(text))
    return kept
