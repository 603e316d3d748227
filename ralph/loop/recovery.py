"""Crash consistency: what a ralph-loop killed with SIGKILL (the OOM killer,
`kill -9`, a closed lid) left behind, put right when the next run starts,
before it touches anything.

The plan must never be ahead of git: a story marked done has its
`feat(ID): title` commit. Two records make that checkable after a crash:

- `.ralph/run.json` says which story the killed run worked on, from which
  checkpoint, and which child process group (agent or verify) was running;
- `.ralph/commit_intent.json` is written (temp file + rename) before the loop
  ticks a verified story and commits it, and removed once the commit is made
  or undone.

Before anything, a run takes `.ralph/loop.lock` (flock(2): the kernel lets
go of it when the loop dies, however it dies). A second ralph-loop started
on the same project while one runs is refused there, before it reads or
writes any state of the running one, and says which loop holds it.

On start, `recover()`:
1. refuses to run beside a ralph-loop that is still alive on this project
   (one recorded in run.json that does not take the lock);
2. kills the killed run's child group if it is still running (the agent and
   whatever it started), recognised by its leader's start time;
3. removes temp files (`.<name>.<pid>.tmp`) whose writer is gone;
4. removes git's own lock files (`index.lock`, `HEAD.lock`, a ref's lock)
   that a git process killed with the loop left, when no git process of this
   repository is alive (ralph.rollback.git_locks): otherwise every commit
   and every rollback fails from then on;
5. finishes a rollback or restore that was killed half-way (its journal,
   ralph.rollback.journal), so the tree is not left half reset;
6. puts back the killed run's plan as it was at its checkpoint when it has
   lost a story it had there: an edit of the plan cut short by the kill (a
   file truncated and not yet written again) must not read as "nothing left
   to do"; the plan as it was found is kept in `.ralph/recovered/` (a plan cut
   mid-line cannot be read, and stops the loop with its file and line);
7. for the story in the intent record, and the killed run's story: if it is
   marked done but has no `feat(ID)` commit since its checkpoint, marks it to
   do again (its work stays in the tree, uncommitted; the next iteration
   re-verifies it before it is committed) and takes back the progress note the
   interrupted commit added;
8. says what it did: on the terminal, in events.jsonl (`crash_recovery`) and
   in failures.jsonl, so the next prompt tells the agent too.
"""
from __future__ import annotations

import fcntl
import json
import os
import re

import time

from ralph.loop.run import Run
from ralph.plan import PlanError, parse_stories, set_story_state, story_state
from ralph.process import pid_alive
from ralph.rollback.git import Repo, RollbackError
from ralph.rollback.git_locks import clear_stale_locks
from ralph.rollback.restore import finish_interrupted
from ralph.run import records
from ralph.run.clock import utc_now
from ralph.run.git import run as run_git
from ralph.run.proc import Watchdog, end_recorded_group, git, group_members, is_same_process, process_identity
from ralph.run.state import CRASHED, LOOP_LOCK_FILE
from ralph.state.files import atomic_write, read_json_object

INTENT_FILE = "commit_intent.json"
# The lock is also taken for an instant by others: the hooks' probe (shared,
# microseconds) and `ralph status` finishing a dead loop's run (milliseconds).
# A loop that finds it taken looks again this many times before it refuses.
LOCK_TRIES = 40
LOCK_RETRY_SECONDS = 0.025
TEMP_FILE = re.compile(r"^\..+\.(\d+)\.tmp$")  # ralph.state.files.atomic_write's temp names


class AnotherLoopRunning(Exception):
    """Another ralph-loop runs on this project: this one stops before touching anything."""


class LoopLock:
    """`.ralph/loop.lock`, held for the whole run. The file stays (it is the
    lock's name, not the lock) and says who holds it."""

    __slots__ = ("path", "fd")

    def __init__(self, state_dir: str) -> None:
        self.path = os.path.join(state_dir, LOOP_LOCK_FILE)
        self.fd = -1

    def acquire(self) -> None:
        """Raises AnotherLoopRunning, naming the loop that holds it."""
        if not self.try_take(LOCK_TRIES):
            raise AnotherLoopRunning(refusal(read_json_object(self.path), os.path.dirname(self.path)))
        data = json.dumps(process_identity(os.getpid())).encode() + b"\n"
        fd = self.fd
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
        except OSError:
            pass  # a full disk: the lock holds all the same, unnamed

    def try_take(self, tries: int = 1) -> bool:
        """Take the lock without naming a holder; False while another holds it."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        for attempt in range(tries):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if attempt + 1 < tries:
                    time.sleep(LOCK_RETRY_SECONDS)
                continue
            except BaseException:
                os.close(fd)
                raise
            self.fd = fd
            return True
        os.close(fd)
        return False

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def refusal(holder: dict | None, state_dir: str) -> str:
    """The message of a refused loop: which loop runs, and what to do."""
    pid = holder.get("pid") if isinstance(holder, dict) else None
    state = records.read_run_state(state_dir) or {}
    loop = state.get("loop") if isinstance(state.get("loop"), dict) else {}
    run = f", run {state.get('run_id')}" if state.get("run_id") and (pid is None or loop.get("pid") == pid) else ""
    who = f"pid {pid}{run}" if pid else "its pid not known yet"
    return (f"another ralph-loop ({who}) is running in this project; stop it first (Ctrl-C, or `kill` it), "
            "or wait for it to finish. Nothing of it was touched")


def killed_run(previous: object) -> bool:
    """run.json of a loop that died mid-run and that no later loop has put
    right yet: still "running" (read while holding the loop lock: its loop is
    gone), or finished as crashed by `ralph status`."""
    if not isinstance(previous, dict):
        return False
    if previous.get("status") == "running":
        return True
    finish = previous.get("finish")
    return isinstance(finish, dict) and finish.get("type") == CRASHED and not finish.get("recovered_by")


def finish_as_crashed(state_dir: str, state: dict, found_by: str, recovered_by: str = "") -> dict:
    """Write the finish a dead loop could not: run.json "finished" with type
    `crashed`, and (the first time) a `finish` event for its run. Call it
    holding the loop lock, so no live loop's run.json is overwritten. Returns
    the state written."""
    finish = state.get("finish") if isinstance(state.get("finish"), dict) else None
    if finish is None or finish.get("type") != CRASHED:
        pid = (state.get("loop") or {}).get("pid") if isinstance(state.get("loop"), dict) else state.get("pid")
        finish = {"type": CRASHED, "at": utc_now(), "found_by": found_by, "iterations": state.get("iteration"),
                  "message": f"the loop (pid {pid}) ended without writing its finish: killed (SIGKILL, the OOM killer) "
                             f"or stopped by a full disk during iteration {state.get('iteration')}"}
        records.append_event(state_dir, {"event": "finish", "run_id": state.get("run_id"), "type": CRASHED,
                                         "message": finish["message"], "at": finish["at"], "found_by": found_by,
                                         "iterations": state.get("iteration")})
    else:
        finish = dict(finish)
    if recovered_by:
        finish["recovered_by"] = recovered_by
    finished = dict(state)
    finished.update(status="finished", waiting=None, finish=finish)
    records.write_run_state(state_dir, finished)
    return finished


def finish_dead_run(state_dir: str, found_by: str) -> dict | None:
    """`ralph status`: the run.json of a loop that is gone, finished as
    crashed; None when a loop holds the lock (it lives, or one is starting)
    or run.json does not say running. Raises OSError when it cannot write."""
    lock = LoopLock(state_dir)
    if not lock.try_take():
        return None
    try:
        state = records.read_run_state(state_dir)
        if not isinstance(state, dict) or state.get("status") != "running":
            return None
        return finish_as_crashed(state_dir, state, found_by)
    finally:
        lock.release()


def write_intent(state_dir: str, record: dict) -> None:
    atomic_write(os.path.join(state_dir, INTENT_FILE), json.dumps(record, ensure_ascii=False, indent=2) + "\n")


def clear_intent(state_dir: str) -> None:
    try:
        os.unlink(os.path.join(state_dir, INTENT_FILE))
    except FileNotFoundError:
        pass


def read_intent(state_dir: str) -> dict | None:
    return read_json_object(os.path.join(state_dir, INTENT_FILE))


def clean_temp_files(directories: list[str]) -> list[str]:
    """Remove `.<name>.<pid>.tmp` files whose writer is no longer running
    (a live writer, a hook mid-write, keeps its file). Walks each directory."""
    removed = []
    seen: set[str] = set()
    for top in directories:
        if not top or not os.path.isdir(top):
            continue
        for dirpath, _dirs, files in os.walk(top):
            if dirpath in seen:
                continue
            seen.add(dirpath)
            for name in files:
                match = TEMP_FILE.match(name)
                if not match:
                    continue
                pid = int(match.group(1))
                if pid == os.getpid() or pid_alive(pid):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    os.unlink(path)
                    removed.append(path)
                except OSError:
                    pass
    return removed


def committed_since(root: str, story_id: str, checkpoint: str) -> bool:
    """Is there a `feat(ID):` commit after the checkpoint (or, without a
    usable checkpoint, as HEAD)?"""
    prefix = f"feat({story_id}):"
    if checkpoint:
        code, out = git(root, "log", "--format=%s", f"{checkpoint}..HEAD")
        if code == 0:
            return any(line.startswith(prefix) for line in out.splitlines())
    code, out = git(root, "log", "-1", "--format=%s", "HEAD")
    return code == 0 and out.startswith(prefix)


def story_ids(text: str, path: str) -> set[str] | None:
    """The ids of the stories in a plan's text; None when it cannot be read."""
    try:
        return {story.id for story in parse_stories(text, path)}
    except PlanError:
        return None


def restore_cut_plan(root: str, state_dir: str, plan_path: str, checkpoint: str, run_id: object) -> str | None:
    """Put back the plan as it was at the checkpoint when it has lost a story
    it had there (an edit cut short by the kill: truncated, or written only in
    part); the plan as found goes to `<state>/recovered/`. Returns what was
    done."""
    if not plan_path or not checkpoint:
        return None
    rel = os.path.relpath(plan_path, root)
    shown = run_git(root, ["show", f"{checkpoint}:{rel}"])
    if not shown.ok:
        return None  # not in the checkpoint: nothing to compare with
    before = story_ids(shown.out.decode("utf-8", "replace"), plan_path)
    try:
        with open(plan_path, "rb") as f:
            found = f.read()
    except FileNotFoundError:
        found = b""
    now = story_ids(found.decode("utf-8", "replace"), plan_path)
    if not before or now is None or before <= now:
        return None  # an unreadable plan stops the loop with its file and line instead
    kept = ""
    if found:
        kept = os.path.join(state_dir, "recovered", f"{os.path.basename(plan_path)}.{run_id or 'killed-run'}")
        atomic_write(kept, found)
        kept = f"; the plan as found is in {os.path.relpath(kept, root)}"
    atomic_write(plan_path, shown.out)
    lost = ", ".join(sorted(before - now))
    return f"{rel} had lost {lost} (an edit cut short by the kill): put back as it was at the checkpoint{kept}"


def _resolve(root: str, path: object) -> str:
    if not isinstance(path, str) or not path:
        return ""
    return path if os.path.isabs(path) else os.path.join(root, path)


def untick_if_uncommitted(root: str, plan_path: str, story_id: str, checkpoint: str) -> bool:
    """Mark the story to do again when it is done in the plan without its commit."""
    if not plan_path or story_state(plan_path, story_id) != "done":
        return False
    if committed_since(root, story_id, checkpoint):
        return False
    try:
        return set_story_state(plan_path, story_id, "todo")
    except (OSError, PlanError):
        return False


def _truncate(path: str, size: object) -> None:
    """Undo an append to an append-only file (temp file + rename)."""
    if not isinstance(size, int) or not path or not os.path.exists(path):
        return
    if size < 0:
        os.unlink(path)
        return
    with open(path, "rb") as f:
        data = f.read()
    if len(data) > size:
        atomic_write(path, data[:size])


def recover(root: str, state_dir: str, previous: dict | None, plan_paths: list[str],
            warnings: list[str] | None = None) -> list[tuple[str | None, str]]:
    """Everything above; returns what was done, (story or None, one sentence)
    each (empty: nothing to do); what was found and left (a git lock a live
    git may hold) goes to `warnings`. Raises AnotherLoopRunning when the
    recorded loop is still alive."""
    done: list[tuple[str | None, str]] = []
    crashed = killed_run(previous)
    if crashed:
        assert previous is not None
        if is_same_process(previous.get("loop")):
            raise AnotherLoopRunning(refusal(previous["loop"], state_dir))
        killed = end_recorded_group(previous.get("child_group"))
        if killed:
            wait_for_group_end(previous["child_group"]["pid"])  # a git among them must be gone before its locks are judged
            done.append((None, f"ended {killed} process(es) the killed run {previous.get('run_id')} left running (its agent or verify command)"))
    directories = [state_dir] + [os.path.dirname(p) for p in plan_paths if p]
    removed = clean_temp_files(directories)
    if removed:
        done.append((None, f"removed {len(removed)} temp file(s) a killed writer left: "
                     + ", ".join(os.path.relpath(p, root) for p in removed[:5])))
    fixed, left = put_git_right(root)
    done.extend((None, sentence) for sentence in fixed)
    if warnings is not None:
        warnings.extend(left)
    intent = read_intent(state_dir)
    if intent is not None:
        story = intent.get("story")
        plan = _resolve(root, intent.get("plan"))
        if isinstance(story, str) and untick_if_uncommitted(root, plan, story, str(intent.get("checkpoint") or "")):
            _truncate(_resolve(root, intent.get("progress")), intent.get("progress_size"))
            done.append((story, f"{story} was verified but the loop was killed before committing it: marked to do again; "
                                "its work is still in the tree, uncommitted, and is verified again before it is committed"))
        clear_intent(state_dir)
    if crashed:
        assert previous is not None
        story = previous.get("story") if isinstance(previous.get("story"), dict) else {}
        story_id = story.get("id")
        plan = _resolve(root, story.get("source"))
        checkpoint = str(previous.get("checkpoint") or "")
        restored = restore_cut_plan(root, state_dir, plan, checkpoint, previous.get("run_id"))
        if restored:
            done.append((None, restored))
        if isinstance(story_id, str) and untick_if_uncommitted(root, plan, story_id, checkpoint):
            done.append((story_id, f"{story_id} was marked done in {story.get('source')} without being verified or committed "
                                   f"(run {previous.get('run_id')} was killed during iteration {previous.get('iteration')}): "
                                   "marked to do again; its work is still in the tree, uncommitted"))
    return done


def set_aside_left(root: str) -> list[str]:
    """A person's changes an earlier run set aside (--allow-dirty) and did
    not put back (it was killed, or the run changed the same file): said at
    every start until the person deals with them."""
    code, out = git(root, "for-each-ref", "--format=%(refname)", "refs/ralph/set-aside/")
    if code != 0:
        return []
    return [f"{ref} holds uncommitted changes of yours that an earlier run set aside (--allow-dirty) and did not put back: "
            f"see them with `git show --stat {ref}`, bring them over with `git diff {ref}^ {ref} -- . ':!.ralph' | git apply -3`, "
            f"then delete the ref: `git update-ref -d {ref}`" for ref in out.split()]


def wait_for_group_end(pgid: int, polls: int = 100) -> None:
    """SIGKILL is delivered asynchronously: wait (a bounded number of short
    polls) until no member of the killed group is left."""
    for _ in range(polls):
        if not group_members(pgid):
            return
        time.sleep(0.05)


def put_git_right(root: str) -> tuple[list[str], list[str]]:
    """Git's lock files a killed git left, and a rollback or restore killed
    half-way: cleared and finished. (What was done, what was left: a lock a
    live git process may hold, a rollback that could not be finished), one
    sentence each."""
    try:
        repo = Repo(root)
    except RollbackError:
        return [], []
    removed, kept = clear_stale_locks(repo.top, repo.git_dir, repo.common_dir)
    try:
        finished = finish_interrupted(root)
    except RollbackError as e:
        kept.append(f"an interrupted rollback could not be finished: {e}")
        finished = ""
    if finished.startswith("could not"):
        kept.append(finished)
    elif finished:
        removed.append(finished)
    return removed, kept


def clear_git_locks(run: Run, before: str) -> None:
    """Before one of the loop's own git writes (`before` names it): git's lock
    files that a git process no longer alive left (the agent's git, killed at
    the end of its iteration) are removed by the rule used at start
    (ralph.rollback.git_locks); otherwise this and every later commit of the
    run fails. Said on the terminal and in events.jsonl (`git_locks`)."""
    try:
        repo = Repo(run.root)
    except RollbackError:
        return
    removed, kept = clear_stale_locks(repo.top, repo.git_dir, repo.common_dir)
    if not removed and not kept:
        return
    for sentence in removed + kept:
        run.display.message(f"git: {sentence} (before {before})")
    try:
        records.append_event(run.state_dir, {"event": "git_locks", "run_id": run.run_id, "iteration": run.iteration,
                                             "at": utc_now(), "before": before, "removed": removed, "left": kept})
    except OSError as e:
        run.display.message(f"could not record the git locks in events.jsonl: {e}")


# ---- the run's side ----


def recover_from_crash(run: Run) -> None:
    """Before touching anything: end what a killed run left running, clean
    its temp files, and untick a story done without its commit. Then make
    sure this run's children die with it."""
    previous = records.read_run_state(run.state_dir)
    warnings: list[str] = []
    done = recover(run.root, run.state_dir, previous, [run.plan_path, run.progress_path], warnings)  # AnotherLoopRunning: the caller refuses
    previous_id = (previous or {}).get("run_id")
    crashed = killed_run(previous)
    if crashed:
        assert previous is not None
        try:
            finish_as_crashed(run.state_dir, previous, "ralph-loop", recovered_by=run.run_id)
        except OSError as e:
            run.display.message(f"warning: could not record run {previous_id} as crashed in run.json: {e}")
    for story_id, sentence in done:
        run.display.message(f"recovered: {sentence}")
        run.fail(story_id, "crash", (f"the loop was killed (run {previous_id}); on restart: " if crashed else "on start: ") + sentence)
    warnings.extend(set_aside_left(run.root))
    for sentence in warnings:
        run.display.message(f"warning: {sentence}")
    if done:
        records.append_event(run.state_dir, {"event": "crash_recovery", "run_id": run.run_id, "at": utc_now(),
                                             "previous_run": previous_id, "actions": [sentence for _, sentence in done]})
    run.interrupts.watchdog = Watchdog.start()
    run.interrupts.on_group = lambda pgid: record_child_group(run, pgid)


def record_child_group(run: Run, pgid: int) -> None:
    """run.json names the running child group, for the next run if this one is killed."""
    if run.state is None:
        return
    run.state["child_group"] = process_identity(pgid)
    try:
        records.write_run_state(run.state_dir, run.state)
    except OSError as e:
        run.display.message(f"could not record the child process group in run.json: {e}")
