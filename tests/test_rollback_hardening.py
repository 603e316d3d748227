"""Rollbacks under crashes and time limits, on real repositories: a rollback
killed half-way is finished by the next call; git's own locks a killed git
left are removed only when no git process of the repository is alive; a
hook's rollback that takes longer than the hook may wait goes on in a
detached process and records itself. Waits count polls of an observable
event, never measure time."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from ralph.rollback.git import Repo
from ralph.rollback.git_locks import clear_stale_locks
from ralph.rollback.journal import JOURNAL_NAME
from ralph.rollback.lock import LOCK_NAME, wait_until_free
from ralph.rollback.restore import finish_interrupted, restore_snapshot, save_and_restore
from ralph.rollback.snapshots import list_snapshots
from tests.conftest import hold_loop_lock, load_payload, run_hook
from tests.test_rollback import LOCK_HOLDER, ROLLBACK_IN_A_PROCESS, full_state, git, head, make_repo, write

POLL = 0.05
MAX_POLLS = 1200  # a cap on waiting for an event, not a speed target


def wait_for(predicate, what: str) -> None:
    for _ in range(MAX_POLLS):
        if predicate():
            return
        time.sleep(POLL)
    raise AssertionError(f"never happened: {what}")


def pausing_filter(repo, marker) -> None:
    """slow.txt goes through a smudge filter that, the first time, says so
    (creates `marker`) and hangs: git is caught in the middle of writing the
    tree. Every later time it passes the content through."""
    write(repo, ".gitattributes", "slow.txt filter=pause\n")
    git(repo, "config", "filter.pause.clean", "cat")
    git(repo, "config", "filter.pause.smudge", f"sh -c 'if [ -e {marker} ]; then cat; else touch {marker}; exec sleep 300; fi'")


def killed_half_way(tmp_path):
    """A rollback killed (with its git) while the reset is writing files:
    a.txt already back at the checkpoint or not, slow.txt half-way,
    new.txt (untracked work) still there, git's index.lock left behind."""
    repo = make_repo(tmp_path)
    marker = tmp_path / "paused"
    pausing_filter(repo, marker)
    write(repo, "slow.txt", "checkpoint\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "checkpoint with a filtered file")
    checkpoint = head(repo)
    write(repo, "a.txt", "work\n")
    write(repo, "slow.txt", "work\n")
    write(repo, "new.txt", "untracked work\n")
    before = full_state(repo)
    rollback = subprocess.Popen([sys.executable, "-c", ROLLBACK_IN_A_PROCESS, str(repo), checkpoint], start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=git_env())
    try:
        wait_for(marker.exists, "the reset reached slow.txt")
    finally:
        os.killpg(rollback.pid, signal.SIGKILL)  # the rollback, its git and the filter
        rollback.wait()
    assert (repo / ".git" / "index.lock").exists() and (repo / ".git" / JOURNAL_NAME).exists()
    return repo, checkpoint, before


def git_env() -> dict:
    from tests.test_rollback import GIT_ENV
    return GIT_ENV


def test_a_rollback_killed_half_way_is_finished_by_the_next_call(tmp_path):
    repo, checkpoint, before = killed_half_way(tmp_path)
    [saved] = list_snapshots(str(repo))
    # the next call (here a restore of the saved work) first finishes the
    # rollback: git's stale lock goes, the tree is put at the checkpoint
    restored = restore_snapshot(str(repo), saved.id)
    assert "removed .git/index.lock, left by a git process that is no longer running" in restored.message
    assert "finished a rollback interrupted at" in restored.message
    assert full_state(repo) == before  # and the work is back, byte for byte
    assert not (repo / ".git" / JOURNAL_NAME).exists() and not (repo / ".git" / "index.lock").exists()


def test_the_loops_recovery_finishes_a_rollback_killed_half_way(tmp_path):
    repo, checkpoint, before = killed_half_way(tmp_path)
    said = finish_interrupted(str(repo))
    assert "finished a rollback interrupted at" in said, said
    assert head(repo) == checkpoint and git(repo, "status", "--porcelain") == b""
    assert (repo / "slow.txt").read_text() == "checkpoint\n" and not (repo / "new.txt").exists()
    assert finish_interrupted(str(repo)) == ""  # done once


def test_an_interrupted_rollback_is_not_finished_once_head_moved_on(tmp_path):
    # Someone committed since: resetting to the old checkpoint would undo it.
    repo, checkpoint, before = killed_half_way(tmp_path)
    os.unlink(repo / ".git" / "index.lock")
    write(repo, "later.txt", "newer work\n")
    git(repo, "add", "later.txt")
    git(repo, "commit", "-q", "-m", "newer work")
    newer = head(repo)
    said = finish_interrupted(str(repo))
    assert "was not finished: HEAD has moved on" in said
    assert head(repo) == newer and (repo / "later.txt").exists()
    assert not (repo / ".git" / JOURNAL_NAME).exists()


# ---- git's own lock files ----


def git_commit_holding_the_index_lock(repo, tmp_path) -> subprocess.Popen:
    """`git commit -a` stopped in its pre-commit hook: it holds .git/index.lock."""
    hooks = tmp_path / "hooks"
    hooks.mkdir(exist_ok=True)
    marker = tmp_path / "in-hook"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\ntouch {marker}\nexec sleep 300\n")
    os.chmod(hooks / "pre-commit", 0o755)
    proc = subprocess.Popen(["git", "-c", f"core.hooksPath={hooks}", "commit", "-q", "-a", "--allow-empty", "-m", "x"],
                            cwd=repo, env=git_env(), start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(marker.exists, "git commit reached its pre-commit hook")
    assert (repo / ".git" / "index.lock").exists()
    return proc


def test_a_git_lock_is_removed_only_when_no_git_of_the_repository_runs(tmp_path):
    repo = make_repo(tmp_path)
    r = Repo(str(repo))
    committing = git_commit_holding_the_index_lock(repo, tmp_path)
    try:
        removed, kept = clear_stale_locks(r.top, r.git_dir, r.common_dir)
        assert removed == [] and (repo / ".git" / "index.lock").exists()
        assert f"pid {committing.pid}" in kept[0] and "may hold it" in kept[0]
        # a git process of another repository is no reason to keep it
        other = make_repo(tmp_path, "other")
        elsewhere = git_commit_holding_the_index_lock(other, tmp_path / "other")
        os.killpg(committing.pid, signal.SIGKILL)  # killed with its hook: the lock stays behind
        committing.wait()
        assert (repo / ".git" / "index.lock").exists()
        removed, kept = clear_stale_locks(r.top, r.git_dir, r.common_dir)
        assert removed and removed[0].startswith("removed .git/index.lock, left by a git process that is no longer running"), (removed, kept)
        assert not (repo / ".git" / "index.lock").exists() and (other / ".git" / "index.lock").exists()
        os.killpg(elsewhere.pid, signal.SIGKILL)
        elsewhere.wait()
    finally:
        if committing.poll() is None:
            os.killpg(committing.pid, signal.SIGKILL)
            committing.wait()


def test_stale_ref_and_head_locks_are_removed_too(tmp_path):
    repo = make_repo(tmp_path)
    r = Repo(str(repo))
    for rel in ("HEAD.lock", "refs/heads/main.lock", "packed-refs.lock"):
        (repo / ".git" / rel).write_text("")
    old = time.time() - 60
    for rel in ("HEAD.lock", "refs/heads/main.lock", "packed-refs.lock"):
        os.utime(repo / ".git" / rel, (old, old))
    removed, kept = clear_stale_locks(r.top, r.git_dir, r.common_dir)
    assert sorted(line.split(",")[0] for line in removed) == [
        "removed .git/HEAD.lock", "removed .git/packed-refs.lock", "removed .git/refs/heads/main.lock"], (removed, kept)
    write(repo, "work.txt", "work\n")
    assert save_and_restore(str(repo), head(repo), story="S", iteration=1, trigger="t").restored


# ---- a hook's rollback within the hook's time ----


def test_a_hooks_rollback_longer_than_it_may_wait_goes_on_in_the_background(tmp_path):
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    write(repo, "ralph.toml", '[rollback]\npolicy = "immediate"\n')
    git(repo, "add", "ralph.toml")
    git(repo, "commit", "-q", "-m", "immediate rollbacks")
    checkpoint = head(repo)
    run = {"version": 1, "run_id": "run-7", "status": "running", "iteration": 3, "stage": "build", "finish": None,
           "story": {"id": "US-042", "title": "t", "criteria": [], "source": ".ralph/plan.md"},
           "checkpoint": checkpoint, "started": "2026-11-21T00:00:00Z", "pid": 1}
    write(repo, ".ralph/run.json", json.dumps(run))
    hold_loop_lock(str(repo / ".ralph"))  # its loop is alive
    write(repo, "src/app.py", "def f():\n    return 2  # broken\n")
    write(repo, "src/new_module.py", "x = 1\n")
    payload = load_payload("PostToolUseFailure_Bash_exit3", str(repo))
    payload["tool_input"]["command"] = "python -m pytest -q"
    payload["error"] = "Exit code 1\nFAILED tests/test_app.py::test_f - assert 2 == 1\n1 failed in 0.01s\n"
    # waiting 0 s: the hook answers at once, whatever the rollback costs
    answer = run_hook("post-tool-failure", payload, str(repo), env={"RALPH_ROLLBACK_WAIT_SECONDS": "0"})
    assert answer.output["decision"] == "block"
    assert "goes on in the background" in answer.reason and "Do not edit any file until it is done" in answer.reason
    failures = os.path.join(str(repo), ".ralph", "failures.jsonl")
    wait_for(lambda: os.path.exists(failures) and '"rollback"' in open(failures).read(), "the detached rollback recorded itself")
    assert wait_until_free(str(repo / ".git")) == ""
    assert head(repo) == checkpoint and not (repo / "src" / "new_module.py").exists()
    assert (repo / "src" / "app.py").read_text() == "def f():\n    return 1\n"
    [record] = [json.loads(line) for line in open(failures) if '"rollback"' in line]
    assert record["story"] == "US-042" and record["ref"].startswith("refs/ralph/rollbacks/")


def test_the_loop_waits_for_a_rollback_still_running(tmp_path):
    repo = make_repo(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(repo)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        assert f"pid {holder.pid}, a test holding the lock" in wait_until_free(str(repo / ".git"), seconds=0)
        holder.stdin.close()
        assert wait_until_free(str(repo / ".git")) == ""  # returns once the holder is gone
        assert not (repo / ".git" / LOCK_NAME).exists()
    finally:
        holder.kill()
        holder.wait()
