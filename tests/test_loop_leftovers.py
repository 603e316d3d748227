"""What an agent's iteration leaves must not outlive it or wedge the run: a
git lock file left by a git that is no longer alive is removed before the
loop's own commit, and every process the agent started is gone (SIGTERM,
SIGKILL after a grace) before the iteration ends. Real loops, real git,
tests/fake_agent.py."""
from __future__ import annotations

import os
import shlex
import sys

from tests.loop_support import Project
from tests.test_process import SLOW_TO_END, live

ONE = "# Plan\n\n- [ ] US-001: Add greeting\n"
LEAVE_LOCKS = ('touch .git/index.lock .git/HEAD.lock '
               '"$(git rev-parse --git-path "refs/heads/$(git symbolic-ref --short HEAD)").lock"')


def test_git_locks_a_dead_git_left_do_not_fail_the_loops_commit(tmp_path) -> None:
    p = Project(tmp_path, ONE)
    p.script(default=[{"write": "greeting.txt", "text": "hello\n"}, {"run": LEAVE_LOCKS}, {"mark": "done"}])
    result = p.run_loop()
    assert result.returncode == 0, result.stdout + result.stderr
    assert p.log() == ["feat(US-001): Add greeting", "initial"]
    [event] = p.events("git_locks")
    assert event["before"] == "the commit of US-001" and event["left"] == []
    assert sorted(s.split()[1].rstrip(",") for s in event["removed"]) == sorted(
        [".git/index.lock", ".git/HEAD.lock", f".git/refs/heads/{p.run_state()['branch']}.lock"])
    assert "removed .git/index.lock, left by a git process that is no longer running" in result.stdout


def test_a_lock_a_live_git_of_the_repository_may_hold_is_left(tmp_path) -> None:
    # the rule of the start: a git process of this repository alive (here one
    # the agent left that ignores SIGTERM is killed at the iteration's end, so
    # the one alive is the person's, started in the project beside the loop)
    import subprocess

    p = Project(tmp_path, ONE)
    person = subprocess.Popen(["git", "cat-file", "--batch"], cwd=p.root, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        p.script(default=[{"write": "greeting.txt", "text": "hello\n"}, {"run": "touch .git/index.lock"}, {"mark": "done"}])
        result = p.run_loop("--once")
    finally:
        person.stdin.close()  # type: ignore[union-attr]
        person.wait()
    assert result.returncode != 0 and p.log() == ["initial"]
    [event] = p.events("git_locks")
    assert event["removed"] == [] and "a git process of this repository is running" in event["left"][0]
    assert os.path.exists(os.path.join(p.root, ".git", "index.lock"))


def test_no_process_the_agent_started_outlives_its_iteration(tmp_path) -> None:
    p = Project(tmp_path, "- [ ] US-001: Serve\n- [ ] US-002: Serve again\n")
    script = os.path.join(p.agent_dir, "slow.py")
    with open(script, "w") as f:
        f.write(SLOW_TO_END)
    out = os.path.join(p.agent_dir, "left")
    start = (f"{shlex.quote(sys.executable)} {shlex.quote(script)} {shlex.quote(out)} >/dev/null 2>&1 & "
             f"while [ ! -s {shlex.quote(out)}.pid ]; do sleep 0.02; done")
    # the next iteration's agent looks whether the first one's leftover is still running
    look = f"cat /proc/$(cat {shlex.quote(out)}.pid)/stat > {shlex.quote(out)}.seen 2>/dev/null || echo gone > {shlex.quote(out)}.seen"
    p.script(runs=[[{"run": start}, {"mark": "done"}], [{"run": look}, {"mark": "done"}]])
    result = p.run_loop()
    assert result.returncode == 0, result.stdout + result.stderr
    with open(out + ".cleaned") as f:
        assert f.read() == "cleaned\n"  # SIGTERM, and the time to finish its work
    with open(out + ".seen") as f:
        seen = f.read()
    assert seen == "gone\n" or seen.rsplit(")", 1)[1].split()[0] == "Z", seen
    with open(out + ".pid") as f:
        assert not live(int(f.read()))
