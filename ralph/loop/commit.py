"""The end of an iteration in git: a verified story is marked done, noted in
progress.md and committed as `feat(<id>): <title>`; a failed one is rolled
back to its checkpoint (its work saved first, ralph.rollback).

The plan is never ahead of git: `.ralph/commit_intent.json` is written before
the story is marked done and removed once the commit is made or undone, so a
run killed in between is put right by the next one (ralph.loop.recovery).
"""
from __future__ import annotations

import os

from ralph.loop import recovery
from ralph.loop.branch import diffstat
from ralph.loop.run import Iteration, Run
from ralph.plan import set_story_state
from ralph.rollback.kept import KeptFiles
from ralph.rollback.restore import save_and_restore
from ralph.run import paths
from ralph.run import records
from ralph.run.clock import utc_now
from ralph.run.proc import git, head_sha
from ralph.state.files import atomic_write
from ralph.state.reads import invalidate_all


def commit_story(run: Run, it: Iteration) -> str:
    """Mark done, note progress, commit everything; undo the marks if git
    refuses. The iteration's result: done or commit_failed."""
    story = it.story
    assert story is not None
    recovery.clear_git_locks(run, f"the commit of {story.id}")
    progress_before = None
    try:
        with open(run.progress_path, "rb") as f:
            progress_before = f.read()
    except OSError:
        pass
    recovery.write_intent(run.state_dir, {
        "run_id": run.run_id, "iteration": run.iteration, "story": story.id, "plan": run.plan_rel,
        "progress": paths.relative(run.root, run.progress_path),
        "progress_size": -1 if progress_before is None else len(progress_before), "checkpoint": head_sha(run.root),
        "at": utc_now(),
    })
    set_story_state(run.plan_path, story.id, "done")
    records.append_progress(run.progress_path, story.id, story.title, run.iteration, run.run_id)
    message = f"feat({story.id}): {story.title}".rstrip()
    code, out = git(run.root, "add", "-A")
    if code == 0:
        code, out = git(run.root, "commit", "-q", "--allow-empty", "-m", message)
    if code != 0:
        set_story_state(run.plan_path, story.id, "todo")
        if progress_before is None:
            try:
                os.unlink(run.progress_path)
            except OSError:
                pass
        else:
            atomic_write(run.progress_path, progress_before)
        recovery.clear_intent(run.state_dir)
        run.fail(story.id, "commit", f"git refused the commit (exit {code}); the story stays open", out[-3000:])
        it.event["commit_error"] = out[-500:]
        return "commit_failed"
    recovery.clear_intent(run.state_dir)
    it.event["commit"] = head_sha(run.root)
    it.event["diffstat"] = diffstat(run.root)  # for the report
    run.done_this_run.append(story.id)
    return "done"


def roll_back(run: Run, it: Iteration, trigger: str) -> None:
    """Save the iteration's work under refs/ralph/rollbacks/ and reset to its
    checkpoint; the plan and progress.md keep the loop's and the person's
    records (ralph.rollback.kept: only the story's done mark is undone)."""
    result = save_and_restore(run.root, it.checkpoint, story=it.story_id, iteration=run.iteration,
                              trigger=trigger, run_id=run.run_id, kept=KeptFiles(run.plan_path, run.progress_path, it.story_id))
    it.event["rollback"] = {"id": result.id, "ref": result.ref, "restored": result.restored, "message": result.message,
                            "kept": result.kept, "conflicts": result.conflicts}
    if result.restored:
        invalidate_all(run.state_dir)
    run.display.message(f"rollback: {result.message}")
    if result.conflicts:
        records.append_event(run.state_dir, {"event": "rollback_conflict", "run_id": run.run_id, "iteration": run.iteration,
                                             "story": it.story_id, "ref": result.ref, "conflicts": result.conflicts, "at": utc_now()})
