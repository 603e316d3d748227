"""ralph-loop killed with SIGKILL (the OOM killer, `kill -9`, a closed lid):
nothing it started outlives it, and the next run puts the plan back in step
with git before it touches anything. Real loops, real git, tests/fake_agent.py;
waits count polls of an observable event, never measure time."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

from ralph.run.proc import process_identity
from tests.loop_support import Project, git, pid_alive

PLAN3 = "# Plan\n\n- [ ] US-001: Add greeting\n- [ ] US-002: Add farewell\n- [ ] US-003: Add docs\n"
POLL = 0.05
MAX_POLLS = 1200  # a cap on waiting for an event, not a speed target
KILL_TRIALS = int(os.environ.get("RALPH_KILL_TRIALS", "5"))


def wait_for(predicate, what: str) -> None:
    for _ in range(MAX_POLLS):
        if predicate():
            return
        time.sleep(POLL)
    raise AssertionError(f"never happened: {what}")


def logged_pids(path: str) -> list[int]:
    try:
        with open(path) as f:
            return [int(pid) for line in f for pid in line.split()]
    except FileNotFoundError:
        return []


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_agent_and_its_children_die_with_a_sigkilled_loop(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    pids = os.path.join(p.agent_dir, "pids")
    p.script(default=[{"log_pids": pids}, {"sleep": 300}])
    loop = p.start_loop()
    try:
        wait_for(lambda: len(logged_pids(pids)) == 2, "the agent started")
        agent, sleeper = logged_pids(pids)
        loop.kill()  # SIGKILL: no handler runs
        loop.wait()
        wait_for(lambda: not pid_alive(agent) and not pid_alive(sleeper), "the agent and its child died with the loop")
    finally:
        if loop.poll() is None:
            loop.kill()
        loop.communicate()


def test_background_processes_are_ended_after_every_iteration(tmp_path) -> None:
    p = Project(tmp_path, "- [ ] US-001: Serve\n")
    pids = os.path.join(p.agent_dir, "pids")
    p.script(default=[{"log_pids": pids}, {"mark": "done"}])  # exits 0, leaves `sleep 300` behind
    result = p.run_loop()
    assert result.returncode == 0, result.stdout + result.stderr
    agent, sleeper = logged_pids(pids)
    assert not pid_alive(sleeper)


def crashed_run(p: Project, story: str, checkpoint: str, **extra: object) -> None:
    """run.json as a SIGKILLed loop leaves it: status running, its loop gone."""
    state = {"version": 1, "run_id": "20261122-000000-dead", "status": "running", "iteration": 2,
             "story": {"id": story, "title": "t", "criteria": [], "source": ".ralph/plan.md"},
             "checkpoint": checkpoint, "started": "2026-11-22T00:00:00Z", "pid": dead_pid(),
             "loop": {"pid": dead_pid(), "start": 1, "boot": "x"}, "stage": "build", "stage_name": "build", "finish": None}
    state.update(extra)
    with open(os.path.join(p.root, ".ralph", "run.json"), "w") as f:
        json.dump(state, f)


def test_restart_ends_the_killed_runs_group_cleans_temp_files_and_unticks(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    checkpoint = git(p.root, "rev-parse", "HEAD").strip()
    # the killed run's agent group, still running (its watchdog was killed too)
    survivor = subprocess.Popen(["sleep", "300"], process_group=0)
    stranger = subprocess.Popen(["sleep", "300"], process_group=0)  # same shape, other start time: not ours
    try:
        stranger_identity = process_identity(stranger.pid)
        stranger_identity["start"] += 1
        crashed_run(p, "US-001", checkpoint, child_group=process_identity(survivor.pid))
        p.write(".ralph/plan.md", PLAN3.replace("[ ] US-001", "[x] US-001"))  # ticked by the agent, never verified
        p.write("half-done.txt", "work of the killed iteration\n")
        stale = [os.path.join(p.root, ".ralph", f".run.json.{dead_pid()}.tmp"),
                 os.path.join(p.root, ".ralph", f".plan.md.{dead_pid()}.tmp")]
        live = os.path.join(p.root, ".ralph", f".reads_epoch.{os.getpid()}.tmp")  # a writer still at work
        for path in stale + [live]:
            with open(path, "w") as f:
                f.write("partial")
        p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
        result = p.run_loop("--once")
        assert result.returncode == 3, result.stdout + result.stderr  # one story done, two to go
        survivor.wait(30)  # killed by the restart: wait() returns
        assert survivor.returncode == -signal.SIGKILL
        assert stranger.poll() is None
        assert not any(os.path.exists(path) for path in stale) and os.path.exists(live)
        assert "recovered: US-001 was marked done" in result.stdout
        [event] = p.events("crash_recovery")
        assert event["previous_run"] == "20261122-000000-dead" and len(event["actions"]) == 3
        assert any(f["kind"] == "crash" and "US-001" in f["summary"] for f in p.failures())
        assert "was killed" in p.prompt(1)  # the agent is told
        # US-001 was worked on again, verified and committed once, with the killed run's work
        assert p.log() == ["feat(US-001): Add greeting", "initial"]
        assert git(p.root, "show", "HEAD:half-done.txt") == "work of the killed iteration\n"
    finally:
        for proc in (survivor, stranger):
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def test_verified_but_uncommitted_story_is_unticked_and_its_progress_note_taken_back(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    checkpoint = git(p.root, "rev-parse", "HEAD").strip()
    p.write(".ralph/progress.md", "# Progress\n")
    git(p.root, "add", "-A")
    git(p.root, "commit", "-q", "-m", "progress")
    checkpoint = git(p.root, "rev-parse", "HEAD").strip()
    # killed between the tick and the commit: intent written, plan ticked, note appended
    intent = {"run_id": "r0", "iteration": 1, "story": "US-001", "plan": ".ralph/plan.md", "progress": ".ralph/progress.md",
              "progress_size": len("# Progress\n"), "checkpoint": checkpoint, "at": "2026-11-22T00:00:00Z"}
    with open(os.path.join(p.root, ".ralph", "commit_intent.json"), "w") as f:
        json.dump(intent, f)
    p.write(".ralph/plan.md", PLAN3.replace("[ ] US-001", "[x] US-001"))
    p.write(".ralph/progress.md", "# Progress\n\n## 2026 US-001: Add greeting\nDone in iteration 1 of run r0.\n")
    p.script(default=[{"mark": "done"}])
    result = p.run_loop("--once")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "verified but the loop was killed before committing it" in result.stdout
    assert not os.path.exists(os.path.join(p.root, ".ralph", "commit_intent.json"))
    assert p.log()[0] == "feat(US-001): Add greeting"
    assert p.read(".ralph/progress.md").count("US-001") == 1


def test_intent_whose_commit_was_made_is_simply_removed(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    checkpoint = git(p.root, "rev-parse", "HEAD").strip()
    p.write(".ralph/plan.md", PLAN3.replace("[ ] US-001", "[x] US-001"))
    git(p.root, "commit", "-q", "-am", "feat(US-001): Add greeting")
    intent = {"story": "US-001", "plan": ".ralph/plan.md", "progress": ".ralph/progress.md", "progress_size": -1,
              "checkpoint": checkpoint}
    with open(os.path.join(p.root, ".ralph", "commit_intent.json"), "w") as f:
        json.dump(intent, f)
    p.script(default=[{"mark": "done"}])
    result = p.run_loop("--once")
    assert "recovered" not in result.stdout and p.events("crash_recovery") == []
    assert not os.path.exists(os.path.join(p.root, ".ralph", "commit_intent.json"))
    assert p.log()[:2] == ["feat(US-002): Add farewell", "feat(US-001): Add greeting"]


def test_a_live_loop_is_not_disturbed(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    checkpoint = git(p.root, "rev-parse", "HEAD").strip()
    crashed_run(p, "US-001", checkpoint, loop=process_identity(os.getpid()))  # "running", and its loop is alive
    p.script(default=[{"mark": "done"}])
    result = p.run_loop()
    assert result.returncode == 1 and "another ralph-loop" in result.stdout
    assert p.invocations() == 0 and p.log() == ["initial"]


def test_kill_trials(tmp_path) -> None:
    """SIGKILL at random moments of a run, restart, check the invariants.
    RALPH_KILL_TRIALS sets how many (RALPH_KILL_SEED replays one sequence)."""
    seed = int(os.environ.get("RALPH_KILL_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    recoveries: dict[str, int] = {}
    for trial in range(KILL_TRIALS):
        base = tmp_path / f"trial-{trial}"
        base.mkdir()
        p = Project(base, PLAN3)
        pids = os.path.join(p.agent_dir, "pids")
        p.script(default=[{"log_pids": pids}, {"append": "work.txt", "text": "step\n"}, {"sleep": 0.1},
                          {"mark": "done"}, {"sleep": 0.05}])
        loop = p.start_loop("--verify", "test -f work.txt")
        # the kill moment: after a random number of agent starts, then a random short pause
        starts = rng.randrange(0, 4)
        wait_for(lambda: len(logged_pids(pids)) >= 2 * starts or loop.poll() is not None, "agent starts")
        time.sleep(rng.random() * 0.4)
        loop.kill()
        loop.communicate()
        result = p.run_loop("--verify", "test -f work.txt")
        where = f"trial {trial} (after {starts} agent start(s)): {result.stdout[-2000:]}{result.stderr[-1000:]}"
        assert result.returncode == 0, where
        log = p.log()
        for story in ("US-001", "US-002", "US-003"):
            assert sum(line.startswith(f"feat({story}):") for line in log) == 1, (where, log)
        assert p.plan_bytes() == PLAN3.replace("[ ]", "[x]").encode(), where
        assert git(p.root, "status", "--porcelain") == "", where
        assert p.temp_files() == [] and not os.path.exists(os.path.join(p.root, ".ralph", "commit_intent.json")), where
        alive = [pid for pid in logged_pids(pids) if pid_alive(pid)]
        assert alive == [], (where, alive)
        for event in p.events("crash_recovery"):
            for action in event["actions"]:
                kind = " ".join(action.split()[1:4]) if action.startswith("US-") else " ".join(action.split()[:2])
                recoveries[kind] = recoveries.get(kind, 0) + 1
    print(f"\nkill trials: {KILL_TRIALS} (seed {seed}); recovery actions taken: {recoveries or 'none'}")


def test_a_plan_cut_short_by_the_kill_is_put_back(tmp_path) -> None:
    # The agent was rewriting plan.md in place when the killed run's group was
    # ended: truncated, or only partly written. That must not read as "no
    # stories left" (or as fewer): the plan comes back as at the checkpoint,
    # and what was found is kept. One cut mid-line cannot be read at all: the
    # loop stops and names it, touching nothing.
    lost_a_line = PLAN3[:PLAN3.index("- [ ] US-003")]  # readable, but US-003 is gone
    for case, found in enumerate(("", lost_a_line)):
        base = tmp_path / f"case-{case}"
        base.mkdir()
        p = Project(base, PLAN3)
        checkpoint = git(p.root, "rev-parse", "HEAD").strip()
        crashed_run(p, "US-002", checkpoint)
        p.write(".ralph/plan.md", found)
        p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
        result = p.run_loop("--verify", "test -f work.txt")
        assert result.returncode == 0, result.stdout + result.stderr
        said = [line.split("recovered: ", 1)[1] for line in result.stdout.splitlines() if "recovered: " in line]
        lost = "US-001, US-002, US-003" if not found else "US-003"
        assert said == [f".ralph/plan.md had lost {lost} (an edit cut short by the kill): put back as it was at the checkpoint"
                        + ("; the plan as found is in .ralph/recovered/plan.md.20261122-000000-dead" if found else "")], said
        assert p.log() == ["feat(US-003): Add docs", "feat(US-002): Add farewell", "feat(US-001): Add greeting", "initial"]
        assert p.plan_bytes() == PLAN3.replace("[ ]", "[x]").encode()
        kept = os.path.join(p.root, ".ralph", "recovered", "plan.md.20261122-000000-dead")
        assert os.path.exists(kept) == bool(found)
        if found:
            with open(kept) as f:
                assert f.read() == found
    (tmp_path / "cut-mid-line").mkdir()
    p = Project(tmp_path / "cut-mid-line", PLAN3)
    crashed_run(p, "US-002", git(p.root, "rev-parse", "HEAD").strip())
    cut_mid_line = PLAN3[:PLAN3.index("US-003") + 3]  # "- [ ] US-": a story line with no id
    p.write(".ralph/plan.md", cut_mid_line)
    result = p.run_loop("--verify", "test -f work.txt")
    assert result.returncode == 2 and "plan.md:5: story line has no id" in result.stdout + result.stderr
    assert p.plan_bytes() == cut_mid_line.encode() and p.log() == ["initial"]


# ---- company: a second ralph-loop on the same project ----


def state_files(p: Project) -> dict[str, bytes]:
    """Every file under .ralph/ with its bytes."""
    found = {}
    for path in files_under(os.path.join(p.root, ".ralph")):
        with open(path, "rb") as f:
            found[os.path.relpath(path, p.root)] = f.read()
    return found


def files_under(top: str) -> list[str]:
    return [os.path.join(dirpath, name) for dirpath, _dirs, files in os.walk(top) for name in files]


def test_a_refused_second_loop_touches_nothing_of_the_running_one(tmp_path) -> None:
    # Two real loops. The second is refused, and leaves the first one's state
    # as it was to the byte: run.json still says running (so the hooks still
    # treat its agent as the loop's: Stop gate, rollback, story in the prompt),
    # no finish event, no agent started.
    p = Project(tmp_path, PLAN3)
    pids = os.path.join(p.agent_dir, "pids")
    p.script(default=[{"log_pids": pids}, {"sleep": 300}])
    first = p.start_loop()
    try:
        wait_for(lambda: len(logged_pids(pids)) == 2, "the first loop's agent started")
        before = state_files(p)
        assert p.run_state()["status"] == "running"
        second = p.run_loop()
        assert second.returncode == 1, second.stdout + second.stderr
        assert f"another ralph-loop (pid {first.pid}, run {p.run_state()['run_id']}) is running" in second.stdout
        assert state_files(p) == before
        assert p.invocations() == 1 and first.poll() is None
    finally:
        first.kill()
        first.communicate()


def test_a_second_loop_is_refused_while_the_first_is_still_starting(tmp_path) -> None:
    # The first loop is in its session_start hook: run.json does not say
    # "running" yet, but the loop lock does. The second is refused all the same.
    hook_pid = os.path.join(str(tmp_path), "hook.pid")
    config = ('[[hooks.session_start]]\ncommand = ["sh", "-c", "echo $$ > ' + hook_pid + '; exec sleep 300"]\n'
              'timeout = 600\n')
    p = Project(tmp_path, PLAN3, config=config)
    p.script(default=[{"mark": "done"}])
    first = p.start_loop()
    try:
        wait_for(lambda: os.path.exists(hook_pid) and os.path.getsize(hook_pid) > 0, "the first loop's session_start hook runs")
        before = state_files(p)
        second = p.run_loop()
        assert second.returncode == 1 and "another ralph-loop" in second.stdout, second.stdout + second.stderr
        assert state_files(p) == before and p.invocations() == 0
    finally:
        first.kill()
        first.communicate()
        with open(hook_pid) as f:
            os.kill(int(f.read()), signal.SIGKILL)


# ---- git's own locks, and a rollback, left half-done by a kill ----


def test_a_stale_index_lock_left_by_a_killed_git_is_cleared_on_restart(tmp_path) -> None:
    # `git commit -a` killed with its group while its pre-commit hook ran (as
    # git dies with a killed loop): .git/index.lock stays, and every commit
    # would fail. The restart removes it (no git of this repository is alive),
    # says so, and the story is committed.
    p = Project(tmp_path, PLAN3)
    hooks = tmp_path / "git-hooks"
    hooks.mkdir()
    marker = tmp_path / "in-hook"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\ntouch {marker}\nexec sleep 300\n")
    os.chmod(hooks / "pre-commit", 0o755)
    committing = subprocess.Popen(["git", "-c", f"core.hooksPath={hooks}", "commit", "-q", "-a", "--allow-empty", "-m", "x"],
                                  cwd=p.root, env=p.env(), start_new_session=True)
    wait_for(marker.exists, "git commit reached its pre-commit hook")
    os.killpg(committing.pid, signal.SIGKILL)
    committing.wait()
    lock = os.path.join(p.root, ".git", "index.lock")
    assert os.path.exists(lock)
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    result = p.run_loop("--once", "--verify", "test -f work.txt")
    assert result.returncode == 3, result.stdout + result.stderr  # one story done, two to go
    assert "recovered: removed .git/index.lock, left by a git process that is no longer running" in result.stdout
    assert p.log() == ["feat(US-001): Add greeting", "initial"] and not os.path.exists(lock)
    [event] = p.events("crash_recovery")
    assert any(action.startswith("removed .git/index.lock") for action in event["actions"])


def test_the_restart_finishes_a_rollback_the_kill_left_half_done(tmp_path) -> None:
    # The killed run's verify failed and its rollback was resetting the tree
    # when the kill came (git too): the tree is half reset, git's index.lock
    # left. The restart finishes the rollback before the next iteration.
    p = Project(tmp_path, PLAN3)
    marker = tmp_path / "paused"
    p.write(".gitattributes", "slow.txt filter=pause\n")
    p.write("slow.txt", "checkpoint\n")
    git(p.root, "config", "filter.pause.clean", "cat")
    git(p.root, "config", "filter.pause.smudge", f"sh -c 'if [ -e {marker} ]; then cat; else touch {marker}; exec sleep 300; fi'")
    git(p.root, "add", "-A")
    git(p.root, "commit", "-q", "-m", "a filtered file")
    checkpoint = git(p.root, "rev-parse", "HEAD").strip()
    crashed_run(p, "US-001", checkpoint)
    p.write("slow.txt", "the killed iteration's work\n")
    p.write("stray.txt", "untracked work of the killed iteration\n")
    code = ("import sys\nfrom ralph.rollback.restore import save_and_restore\n"
            "save_and_restore(sys.argv[1], sys.argv[2], story='US-001', iteration=2, trigger='verify failed')\n")
    rollback = subprocess.Popen([sys.executable, "-c", code, p.root, checkpoint], env=p.env(), start_new_session=True)
    try:
        wait_for(marker.exists, "the reset reached slow.txt")
    finally:
        os.killpg(rollback.pid, signal.SIGKILL)
        rollback.wait()
    assert os.path.exists(os.path.join(p.root, ".git", "index.lock"))
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    result = p.run_loop("--once", "--verify", "test -f work.txt")
    assert result.returncode == 3, result.stdout + result.stderr
    out = result.stdout
    assert "recovered: removed .git/index.lock" in out and "recovered: finished a rollback interrupted at" in out
    assert p.log()[:2] == ["feat(US-001): Add greeting", "a filtered file"]
    committed = git(p.root, "show", "--stat", "--format=", "HEAD")
    assert "stray.txt" not in committed and "slow.txt" not in committed  # the rolled-back work is not in the commit
    first_snapshot = git(p.root, "for-each-ref", "--sort=refname", "--format=%(refname)", "refs/ralph/rollbacks/").split()[0]
    assert "the killed iteration's work" in git(p.root, "show", f"{first_snapshot}:slow.txt")
