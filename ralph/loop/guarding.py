"""The loop's part of the push/merge defence: what an iteration did to git,
judged when the agent is done, before the loop runs git itself.

- Git hooks and config are fingerprinted when an iteration starts and
  checked after it; a change is undone and the iteration rolled back.
- History: an iteration whose commits include a merge, or commits that came
  from another branch or a remote, is failed and rolled back; so is one that
  leaves a merge in progress (MERGE_HEAD and its kin), which the loop's own
  commit would otherwise turn into a merge commit. The history is judged
  again after the verify command, which runs the agent's code (a test file
  can merge), right before the loop commits.
- Denials: the PreToolUse guard appends one line per denial during a loop
  run (ralph.state.denials); too many in one iteration end it, and a story
  ended that way again and again is marked blocked.

The sandbox layer, the first line, is ralph.loop.sandbox_layer.
"""
from __future__ import annotations

import os
import shutil
import time

from ralph.loop import hook_calls
from ralph.loop.commit import roll_back
from ralph.loop.recovery import clear_git_locks
from ralph.loop.run import Finish, Iteration, Run
from ralph.plan import set_story_state
from ralph.run.git import run as run_git
from ralph.sandbox import git_dirs
from ralph.state.denials import denial_summary, read_denials
from ralph.state.files import atomic_write

MAX_GIT_FILE = 1024 * 1024  # hooks and config kept byte for byte up to this size


# ---- git hooks and config ----


def git_control_files(root: str) -> dict[str, bytes | None]:
    """path -> fingerprint of git's config files and every file in the hooks
    directory (what runs when the loop runs git): the content, plus a marker
    when executable; None when too big to keep. An empty, non-executable file
    counts as absent: it changes nothing, and the client's sandbox leaves such
    files behind as mount points (e.g. `.git/config.worktree`)."""
    common, hooks = git_dirs(root)
    found: dict[str, bytes | None] = {}
    paths = [os.path.join(common, "config"), os.path.join(common, "config.worktree")]
    for directory, _dirs, files in os.walk(hooks):
        paths.extend(os.path.join(directory, f) for f in files)
    for path in paths:
        try:
            st = os.lstat(path)
            if os.path.islink(path):
                found[path] = SYMLINK + os.fsencode(os.readlink(path))
            elif st.st_size > MAX_GIT_FILE:
                found[path] = None
            else:
                with open(path, "rb") as f:
                    data = f.read()
                if st.st_mode & 0o111:
                    data += EXECUTABLE
                if data:
                    found[path] = data
        except OSError:
            continue
    return found


SYMLINK = b"\0symlink:"
EXECUTABLE = b"\0executable"
ABSENT = b""


def changed_control_files(before: dict[str, bytes | None], after: dict[str, bytes | None]) -> list[str]:
    return sorted(p for p in set(before) | set(after) if before.get(p, ABSENT) != after.get(p, ABSENT))


def restore_control_files(before: dict[str, bytes | None], after: dict[str, bytes | None]) -> list[str]:
    """Put hooks and config back as they were; what could not be restored."""
    problems = []
    for path in changed_control_files(before, after):
        old = before.get(path, ABSENT)
        try:
            if old is None:
                problems.append(f"{path} (too large to have been kept)")
                continue
            if os.path.islink(path) or os.path.isfile(path):
                os.unlink(path)
            if old.startswith(SYMLINK):
                os.symlink(os.fsdecode(old[len(SYMLINK):]), path)
            elif old != ABSENT:
                executable = old.endswith(EXECUTABLE)
                atomic_write(path, old[: -len(EXECUTABLE)] if executable else old)
                if executable:
                    os.chmod(path, 0o755)
        except OSError as e:
            problems.append(f"{path} ({e.strerror})")
    return problems


# ---- history ----


def _git(root: str, *args: str) -> tuple[int, str]:
    done = run_git(root, list(args))
    return done.code, done.out.decode("utf-8", "replace")


def ref_snapshot(root: str) -> dict[str, str]:
    """refname -> sha of every ref (branches, tags, remote-tracking refs)."""
    code, out = _git(root, "for-each-ref", "--format=%(objectname) %(refname)")
    refs = {}
    for line in out.splitlines():
        sha, _, name = line.partition(" ")
        if name:
            refs[name] = sha
    return refs


def head_ref(root: str) -> str:
    code, out = _git(root, "symbolic-ref", "-q", "HEAD")
    return out.strip() if code == 0 else ""


def foreign_history(root: str, checkpoint: str, refs_before: dict[str, str], started_epoch: float,
                    clock_slack: float = 300.0) -> list[str]:
    """Why the history since `checkpoint` was not all made in this iteration
    (empty: it was): merge commits, HEAD no longer descending from the
    checkpoint, commits reachable from refs that existed before the iteration
    or from remote-tracking refs, commits dated before the iteration began."""
    code, head = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    head = head.strip()
    if code != 0 or head == checkpoint:
        return []
    reasons: list[str] = []
    _, merges = _git(root, "log", "--merges", "--format=%H %s", f"{checkpoint}..HEAD")
    for line in merges.splitlines()[:3]:
        sha, _, subject = line.partition(" ")
        reasons.append(f"merge commit {sha[:12]} ({subject[:80]})")
    if not run_git(root, ["merge-base", "--is-ancestor", checkpoint, "HEAD"]).ok:
        reasons.append(f"HEAD no longer descends from the checkpoint {checkpoint[:12]}: history was replaced "
                       "(a reset, rebase or checkout of another branch)")
        return reasons
    _, new = _git(root, "rev-list", f"{checkpoint}..HEAD")
    new_commits = new.split()
    refs_now = ref_snapshot(root)
    others = set(refs_before.values())
    others.update(sha for name, sha in refs_now.items() if name.startswith("refs/remotes/"))
    if others:
        _, own = _git(root, "rev-list", "HEAD", "--not", checkpoint, *sorted(others))
        own_commits = set(own.split())
        foreign = [c for c in new_commits if c not in own_commits]
        if foreign:
            current = head_ref(root)
            names = sorted({name for name, sha in {**refs_before, **refs_now}.items()
                            if name != current and _contains(root, sha, foreign[0])})
            source = f" (reachable from {', '.join(names[:3])})" if names else ""
            reasons.append(f"{len(foreign)} commit(s) brought in from another branch or a remote{source}, e.g. {foreign[0][:12]}")
    if new_commits:
        _, dates = _git(root, "log", "--no-walk=unsorted", "--format=%H %ct", *new_commits[:200])
        early = [line.split()[0] for line in dates.splitlines()
                 if len(line.split()) == 2 and int(line.split()[1]) < started_epoch - clock_slack]
        if early:
            reasons.append(f"{len(early)} commit(s) dated before this iteration began (brought in from elsewhere), e.g. {early[0][:12]}")
    return reasons


# what a merge, cherry-pick, revert or rebase in progress leaves in the git
# directory: the next `git commit` (the loop's) would complete it
IN_PROGRESS = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply", "sequencer")
IN_PROGRESS_LEFTOVERS = ("MERGE_MSG", "MERGE_MODE", "MERGE_RR", "AUTO_MERGE", "SQUASH_MSG")


def git_dir(root: str) -> str:
    code, out = _git(root, "rev-parse", "--path-format=absolute", "--git-dir")
    return out.strip() if code == 0 and out.strip() else os.path.join(root, ".git")


def in_progress(root: str) -> list[str]:
    """What a merge (or cherry-pick, revert, rebase) left in progress: the loop's
    commit would complete it with the other branch as a parent."""
    directory = git_dir(root)
    found = []
    for name in IN_PROGRESS:
        path = os.path.join(directory, name)
        if os.path.lexists(path):
            detail = ""
            if os.path.isfile(path):
                try:
                    with open(path, "rb") as f:
                        words = f.read(200).decode("utf-8", "replace").split()
                    detail = words[0][:12] if words else ""
                except OSError:
                    pass
            found.append(f"{name} left in the git directory{' (' + detail + ')' if detail else ''}: "
                         "the loop's commit would have made it a merge")
    return found


def clear_in_progress(root: str) -> None:
    """Remove what a merge in progress left (after the rollback reset the tree)."""
    directory = git_dir(root)
    for name in (*IN_PROGRESS, *IN_PROGRESS_LEFTOVERS):
        path = os.path.join(directory, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            elif os.path.lexists(path):
                os.unlink(path)
        except OSError:
            pass


def _contains(root: str, ref_sha: str, commit: str) -> bool:
    return run_git(root, ["merge-base", "--is-ancestor", commit, ref_sha]).ok


# ---- the iteration's judgement ----


def start(run: Run) -> None:
    """When an iteration starts: what its end is compared with."""
    run.guard_start = {"refs": ref_snapshot(run.root), "control": git_control_files(run.root),
                       "head_ref": head_ref(run.root), "epoch": time.time()}


def judge(run: Run, it: Iteration) -> str | None:
    """After the agent: a result that fails the iteration, or None. Git
    hooks/config changed: restored. History not made here: rolled back.
    Too many guard denials: the iteration ends as stuck. In a plan stage
    there is no story to reopen."""
    root, start = run.root, run.guard_start
    if not start:
        return None
    denials = read_denials(run.state_dir, run.run_id, run.iteration)
    if denials:
        it.event["guard_denials"] = len(denials)
        it.event["denied"] = [{"command": str(d.get("command", ""))[:200], "reason": str(d.get("reason", ""))[:300]} for d in denials[-10:]]
    after = git_control_files(root)
    changed = changed_control_files(start["control"], after)
    if changed:
        problems = restore_control_files(start["control"], after)
        shown = ", ".join(os.path.relpath(p, root) for p in changed[:5])
        summary = (f"the agent changed git's hooks or config ({shown}); restored before the loop ran git, "
                   "and the iteration's work was rolled back")
        if problems:
            summary += f"; could not restore: {', '.join(problems)}"
        run.fail(it.story_id, "git_control", summary, command="(sandbox)")
        run.display.message(summary)
        it.event["git_control_changed"] = changed[:20]
        roll_back(run, it, "git hooks/config changed")
        reopen(run, it)
        return "git_config_changed"
    merged = judge_history(run, it)
    if merged:
        return merged
    limit = run.settings["max_guard_denials"]
    if limit and len(denials) >= limit:
        summary = (f"{len(denials)} commands were denied by the push/merge guard in this iteration (limit {limit}), "
                   "so the loop ended it. Pushing and merging are not part of the task: commit locally and carry on "
                   "with the story; if the story truly needs a push or merge, mark it blocked and say why.")
        run.fail(it.story_id, "guard_denials", summary, denial_summary(denials))
        run.display.message(summary)
        reopen(run, it)
        return "guard_stopped"
    return None


def judge_history(run: Run, it: Iteration, during: str = "") -> str | None:
    """A merge, foreign commits or a merge in progress since the checkpoint:
    the work is saved and rolled back, the story reopened, and the result is
    "merge_detected"; None when the history is the iteration's own. `during`
    names what ran last (the verify command), for the message."""
    root, start = run.root, run.guard_start
    if not start:
        return None
    reasons = in_progress(root) + foreign_history(root, it.checkpoint, start["refs"], start["epoch"])
    if not reasons:
        return None
    summary = ("the iteration's history is not all its own work" + (f" (after {during})" if during else "") + ": "
               + "; ".join(reasons)
               + ". Merges and commits from other branches or remotes are left to the person; the work was saved "
               "and rolled back to the checkpoint. Make your own commits on the current branch only, and no code "
               "(a script, a test) that merges.")
    run.fail(it.story_id, "merge", summary)
    run.display.message(summary)
    it.event["foreign_history"] = reasons
    if during:
        it.event["foreign_history_during"] = during
    clear_git_locks(run, "moving back to the loop's branch and rolling back")
    if start["head_ref"] and head_ref(root) != start["head_ref"]:
        _git(root, "symbolic-ref", "HEAD", start["head_ref"])  # back on the loop's branch; the reset does the rest
    roll_back(run, it, "merge or foreign commits")
    clear_in_progress(root)
    reopen(run, it)
    return "merge_detected"


def reopen(run: Run, it: Iteration) -> None:
    if it.story is not None:
        set_story_state(run.plan_path, it.story.id, "todo")


def count_stuck(run: Run, story_id: str, title: str, result: str) -> None:
    """Stuck iterations in a row for one story (ended by the guard): mark it
    blocked at the limit, and stop the run when on_story_exhausted says so."""
    if result != "guard_stopped":
        if result == "done":
            run.stuck_iterations.pop(story_id, None)
        return
    count = run.stuck_iterations.get(story_id, 0) + 1
    run.stuck_iterations[story_id] = count
    limit = run.settings["max_stuck_iterations"]
    if not limit or count < limit:
        return
    set_story_state(run.plan_path, story_id, "blocked")
    denials = read_denials(run.state_dir, run.run_id, story=story_id)
    summary = (f"{story_id} was ended by the push/merge guard in {count} iterations ({len(denials)} denied commands); "
               f"marked blocked ([!]) in {run.plan_rel}: it looks stuck on a push or merge only a person should make")
    run.fail(story_id, "guard_blocked", summary, denial_summary(denials))
    hook_calls.story_blocked(run, story_id, title, "guard_denials", "guard", iterations=count, denials=len(denials))
    run.display.message(summary)
    if run.settings["on_story_exhausted"] == "stop":
        raise Finish("blocked", summary)
