"""A run is live only while its loop lives. A ralph-loop killed with SIGKILL
(the OOM killer, a full disk at its finish) leaves run.json "running"; the
hooks of a later interactive session must act as interactive (no story in the
prompt, no Stop gate, no rollback of the person's work), and the next
`ralph status` or `ralph-loop` finishes the dead run as `crashed`. Real loops,
real git, tests/fake_agent.py; waits count polls, never measure time."""
from __future__ import annotations

import json
import os
import subprocess

from ralph.run.state import load_active_run
from tests.conftest import RALPH, hold_loop_lock, load_payload, run_hook
from tests.loop_support import Project, git, pid_alive
from tests.test_loop_crash import PLAN3, crashed_run, logged_pids, wait_for

FAILING_RUN = "Exit code 1\nFAILED tests/test_app.py::test_f - assert 2 == 1\n1 failed in 0.01s\n"


def killed_loop(tmp_path) -> tuple[Project, dict]:
    """A real loop SIGKILLed mid-iteration, its agent gone with it; run.json as it left it."""
    p = Project(tmp_path, PLAN3)
    pids = os.path.join(p.agent_dir, "pids")
    p.script(default=[{"log_pids": pids}, {"sleep": 300}])
    loop = p.start_loop()
    try:
        wait_for(lambda: len(logged_pids(pids)) == 2, "the agent started")
        alive = run_hook("prompt", load_payload("UserPromptSubmit", p.root), p.root)
        assert "US-001" in alive.context  # while the loop lives, its agent gets its story
        loop.kill()
        loop.wait()
        agent, sleeper = logged_pids(pids)
        wait_for(lambda: not pid_alive(agent) and not pid_alive(sleeper), "the agent died with the loop")
    finally:
        if loop.poll() is None:
            loop.kill()
        loop.communicate()
    state = p.run_state()
    assert state["status"] == "running"  # what the dead loop left
    return p, state


def rollback_refs(root: str) -> list[str]:
    return git(root, "for-each-ref", "--format=%(refname)", "refs/ralph/rollbacks/").split()


def failing_test_run(root: str) -> dict:
    payload = load_payload("PostToolUseFailure_Bash_exit3", root)
    payload["tool_input"]["command"] = "python -m pytest -q"
    payload["error"] = FAILING_RUN
    return run_hook("post-tool-failure", payload, root).output


def test_a_dead_loops_run_is_not_acted_for_by_the_hooks(tmp_path) -> None:
    p, state = killed_loop(tmp_path)
    # a person's interactive session in the project, later: their own work, uncommitted
    p.write("README.md", "hello\nthe person's edit\n")
    p.write("person.txt", "the person's new file\n")
    prompt = run_hook("prompt", load_payload("UserPromptSubmit", p.root), p.root)
    assert "US-001" not in prompt.context and "ralph-loop run" not in prompt.context
    stop = run_hook("stop", load_payload("Stop", p.root), p.root)
    assert stop.output.get("decision") != "block", stop.output
    answers = [failing_test_run(p.root) for _ in range(4)]
    assert all(answer.get("decision") != "block" for answer in answers), answers
    assert rollback_refs(p.root) == []
    assert p.read("README.md") == "hello\nthe person's edit\n" and p.read("person.txt") == "the person's new file\n"
    assert p.run_state() == state  # the hooks write no finish: `ralph status` and the next loop do


def test_ralph_status_finishes_a_dead_loops_run_as_crashed(tmp_path) -> None:
    p, state = killed_loop(tmp_path)
    shown = subprocess.run([RALPH, "status"], cwd=p.root, capture_output=True, text=True, env=p.env())
    assert f"last run {state['run_id']}: crashed at" in shown.stdout, shown.stdout + shown.stderr
    after = p.run_state()
    assert after["status"] == "finished" and after["finish"]["type"] == "crashed"
    assert after["finish"]["found_by"] == "ralph status" and "recovered_by" not in after["finish"]
    assert after["story"] == state["story"] and after["checkpoint"] == state["checkpoint"]  # the rest as the loop left it
    [finish] = p.events("finish")
    assert finish["run_id"] == state["run_id"] and finish["type"] == "crashed"
    as_json = json.loads(subprocess.run([RALPH, "status", "--json"], cwd=p.root, capture_output=True, text=True, env=p.env()).stdout)
    assert as_json["run"]["live"] is False and as_json["run"]["finish"]["type"] == "crashed"
    assert len(p.events("finish")) == 1  # once


def test_the_next_loop_finishes_a_dead_loops_run_as_crashed(tmp_path) -> None:
    p, state = killed_loop(tmp_path)
    p.script(default=[{"write": "work.txt", "text": "w\n"}, {"mark": "done"}])
    result = p.run_loop("--once")
    assert result.returncode == 3, result.stdout + result.stderr
    finishes = p.events("finish")
    assert [(f["run_id"], f["type"], f.get("found_by")) for f in finishes[:1]] == [(state["run_id"], "crashed", "ralph-loop")]
    assert finishes[-1]["run_id"] != state["run_id"]


def test_a_crash_ralph_status_recorded_is_still_put_right_by_the_next_loop(tmp_path) -> None:
    # `ralph status` finished the dead run as crashed; the next loop must
    # still untick the story the killed run ticked without its commit.
    p = Project(tmp_path, PLAN3)
    checkpoint = git(p.root, "rev-parse", "HEAD").strip()
    crashed_run(p, "US-001", checkpoint)
    p.write(".ralph/plan.md", PLAN3.replace("- [ ] US-001", "- [x] US-001"))
    subprocess.run([RALPH, "status"], cwd=p.root, capture_output=True, text=True, env=p.env(), check=False)
    assert p.run_state()["finish"]["type"] == "crashed"
    p.script(default=[{"exit": 1}])
    result = p.run_loop("--once")
    assert "US-001 was marked done in .ralph/plan.md without being verified or committed" in result.stdout, result.stdout
    [finish, *_] = p.events("finish")
    assert finish["run_id"] == "20261122-000000-dead" and finish["found_by"] == "ralph status"


def test_the_hooks_check_the_loop_lock_only_for_a_running_run(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    state_dir = os.path.join(p.root, ".ralph")
    crashed_run(p, "US-001", git(p.root, "rev-parse", "HEAD").strip())
    assert load_active_run(state_dir) is None  # "running", its lock free: a dead loop
    hold_loop_lock(state_dir)
    run = load_active_run(state_dir)
    assert run is not None and run.story_id == "US-001"
