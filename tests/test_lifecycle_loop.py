"""Lifecycle hooks in real ralph-loop runs (the installed console script and
tests/fake_agent.py): every point fires at its moment with the loop's context,
output piped into the next prompt (also across a restart and a crash), hook
aborts, skips, fire-and-forget, Ctrl-C, and the whole story told from
`ralph init` on. Ordering is checked against the loop's own events.jsonl."""
from __future__ import annotations

import json
import os
import shlex
import signal
import stat
import subprocess
import sys
import time

from tests.lifecycle_support import RECORDER
from tests.loop_support import Project, gone

RALPH = os.path.join(os.path.dirname(sys.executable), "ralph")
PLAN2 = "# Plan\n\n- [ ] US-001: Add greeting\n- [ ] US-002: Add farewell\n"
DO_STORY = [{"append": "work.txt", "text": "one more step\n"}, {"mark": "done"}]
POINTS = ("session_start", "pre_iteration", "post_iteration", "on_task_complete", "stage_complete", "on_error", "session_end")


class Recorded:
    """A project whose hooks record what they saw into record.jsonl."""

    def __init__(self, tmp_path: object, plan: str | None, config: str = "") -> None:
        self.tmp = str(tmp_path)
        self.recorder = os.path.join(self.tmp, "recorder.py")
        with open(self.recorder, "w") as f:
            f.write(RECORDER)
        self.record_file = os.path.join(self.tmp, "record.jsonl")
        self.command = f"{shlex.quote(sys.executable)} {shlex.quote(self.recorder)}"
        self.p = Project(tmp_path, plan, config=config.replace("@RECORD@", self.command))
        self.env = {"XDG_CONFIG_HOME": os.path.join(self.tmp, "xdg"), "RECORD_FILE": self.record_file}

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return self.p.run_loop(*args, env=self.env)

    def records(self) -> list[dict]:
        if not os.path.exists(self.record_file):
            return []
        with open(self.record_file, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    def dir_hook(self, name: str, body: str) -> None:
        path = os.path.join(self.p.root, ".ralph", "hooks", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def every_point(extra: str = "") -> str:
    return "".join(f'[[hooks.{point}]]\ncommand = "@RECORD@ {point}"\n{extra}\n' for point in POINTS)


def test_every_point_fires_at_its_moment_with_the_loops_context(tmp_path) -> None:
    r = Recorded(tmp_path, PLAN2, "[loop]\nverify_command = \"test -f work.txt\"\n\n" + every_point())
    r.p.script(runs=[DO_STORY, [{"print": "oops"}, {"exit": 3}], DO_STORY])
    result = r.run()
    assert result.returncode == 0, result.stdout + result.stderr
    seen = [(rec["argv"][0], rec["env"]["RALPH_ITERATION"]) for rec in r.records()]
    assert seen == [
        ("session_start", "0"),
        ("pre_iteration", "1"), ("on_task_complete", "1"), ("post_iteration", "1"),
        ("pre_iteration", "2"), ("on_error", "2"), ("post_iteration", "2"),
        ("pre_iteration", "3"), ("on_task_complete", "3"), ("post_iteration", "3"),
        ("stage_complete", "3"), ("session_end", "3"),
    ]
    events = r.p.events()
    # the loop's own record, in the same order: hooks around each iteration
    order = [(e["event"], e.get("point") or e.get("iteration")) for e in events if e["event"] in ("hooks", "iteration", "finish", "stage_complete", "run_start")]
    assert order == [
        ("run_start", None), ("hooks", "session_start"),
        ("hooks", "pre_iteration"), ("iteration", 1), ("hooks", "on_task_complete"), ("hooks", "post_iteration"),
        ("hooks", "pre_iteration"), ("iteration", 2), ("hooks", "on_error"), ("hooks", "post_iteration"),
        ("hooks", "pre_iteration"), ("iteration", 3), ("hooks", "on_task_complete"), ("hooks", "post_iteration"),
        ("stage_complete", None), ("hooks", "stage_complete"), ("finish", None), ("hooks", "session_end"),
    ]
    iterations = r.p.events("iteration")
    run_id = iterations[0]["run_id"]
    by_point: dict[str, list[dict]] = {}
    for rec in r.records():
        by_point.setdefault(rec["argv"][0], []).append(rec["env"])
    for env in (e for envs in by_point.values() for e in envs):
        assert env["RALPH_SESSION"] == run_id and env["RALPH_PROJECT_DIR"] == r.p.root
        assert env["RALPH_STAGE"] == "build" and env["RALPH_MODE"] == "build" and env["RALPH_MAX_ITERATIONS"] == "10"
        assert env["RALPH_PLAN_FILE"] == r.p.plan_path and env["RALPH_LOG_DIR"].endswith(f".ralph/logs/{run_id}")
    # the story each iteration worked on, as the loop recorded it
    assert [e["RALPH_STORY_ID"] for e in by_point["pre_iteration"]] == [it["story"] for it in iterations] == ["US-001", "US-002", "US-002"]
    assert [e["RALPH_STORY_ID"] for e in by_point["on_task_complete"]] == [it["story"] for it in iterations if it["result"] == "done"]
    from tests.loop_support import git

    changed = git(r.p.root, "diff", "--name-only", iterations[0]["checkpoint"], iterations[0]["commit"]).splitlines()
    assert by_point["on_task_complete"][0]["RALPH_CHANGED_FILES"].splitlines() == changed and "work.txt" in changed
    [error] = by_point["on_error"]
    assert iterations[1]["result"] == "agent_failed" and "exited with code 3" in error["RALPH_ERROR"]
    assert error["RALPH_LAST_EXIT_CODE"] == "3" and error["RALPH_LAST_RESULT"] == "agent_failed"
    second = by_point["pre_iteration"][1]
    assert second["RALPH_LAST_RESULT"] == "done" and second["RALPH_LAST_EXIT_CODE"] == "0" and second["RALPH_COMMITS_MADE"] == "1"
    assert float(second["RALPH_LAST_DURATION"]) == iterations[0]["duration_s"]
    [end] = by_point["session_end"]
    finish = r.p.run_state()["finish"]
    assert end["RALPH_FINISH_TYPE"] == finish["type"] == "complete"
    assert end["RALPH_TOTAL_ITERATIONS"] == "3" and end["RALPH_TOTAL_COMMITS"] == "2" and float(end["RALPH_DURATION"]) >= 0
    assert by_point["stage_complete"][0]["RALPH_NEXT_STAGE"] == ""
    # and the same context as JSON on stdin
    stdin = [rec["stdin"] for rec in r.records() if rec["argv"][0] == "session_end"][0]
    assert stdin["finish_type"] == "complete" and stdin["total_iterations"] == 3 and stdin["session"] == run_id


def test_plan_then_build_pipeline_fires_stage_complete_per_stage(tmp_path) -> None:
    config = ('[[loop.stages]]\nname = "plan"\nmode = "plan"\nmax_iterations = 1\n'
              '[[loop.stages]]\nname = "build"\nmode = "build"\n\n' + every_point())
    r = Recorded(tmp_path, None, config)
    r.p.script(runs=[[{"write": ".ralph/plan.md", "text": "- [ ] US-001: A\n"}]], default=DO_STORY)
    result = r.run()
    assert result.returncode == 0, result.stdout + result.stderr
    seen = [(rec["argv"][0], rec["env"]["RALPH_STAGE"], rec["env"]["RALPH_NEXT_STAGE"]) for rec in r.records()]
    assert seen == [
        ("session_start", "plan", "build"), ("pre_iteration", "plan", "build"), ("post_iteration", "plan", "build"),
        ("stage_complete", "plan", "build"),
        ("pre_iteration", "build", ""), ("on_task_complete", "build", ""), ("post_iteration", "build", ""),
        ("stage_complete", "build", ""), ("session_end", "build", ""),
    ]


def test_done_when_init_lint_output_reaches_the_next_prompt_and_next_iteration_aborts(tmp_path) -> None:
    """From `ralph init` on: its hook templates, a post_iteration
    lint hook whose output the next agent prompt shows, next_iteration exit 2
    aborting, and `finished` running with RALPH_FINISH_TYPE=hook_abort."""
    p = Project(tmp_path, None)
    init = subprocess.run([RALPH, "init"], cwd=p.root, capture_output=True, text=True)
    assert init.returncode == 0, init.stderr
    with open(os.path.join(p.root, "ralph.toml"), "a") as f:
        f.write('\n[[hooks.post_iteration]]\nname = "lint"\ncommand = "echo \\"lint: E501 line too long in {{task_id}}\\"; exit 1"\npipe_output = true\n')
    hook = os.path.join(p.root, ".ralph", "hooks", "next_iteration")
    with open(hook) as f:
        text = f.read()
    with open(hook, "w") as f:
        f.write(text.replace("\nexit 0\n", '\nif [ "$RALPH_ITERATION" -ge 3 ]; then echo "enough for tonight"; exit 2; fi\nexit 0\n'))
    finished = os.path.join(p.root, ".ralph", "hooks", "finished")
    with open(finished) as f:
        text = f.read()
    with open(finished, "w") as f:
        f.write(text.replace("\nexit 0\n", f'\necho "$RALPH_FINISH_TYPE" > {shlex.quote(os.path.join(p.agent_dir, "finish-type"))}\nexit 0\n'))
    with open(os.path.join(p.root, ".ralph", "plan.md"), "w") as f:
        f.write("- [ ] US-001: Add greeting\n- [ ] US-002: Add farewell\n- [ ] US-003: Add docs\n")
    p.commit("ralph init")
    p.script(default=DO_STORY)
    result = p.run_loop(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert result.returncode == 6, result.stdout + result.stderr
    assert p.invocations() == 2
    assert "lint: E501" not in p.prompt(1)
    assert "lint: E501 line too long in US-001" in p.prompt(2) and "### post_iteration · lint · iteration 1 · failed (exit 1)" in p.prompt(2)
    assert p.prompt(2).index("Your story: US-002") < p.prompt(2).index("lint: E501")
    state = p.run_state()
    assert state["finish"]["type"] == "hook_abort" and "next_iteration exited 2: enough for tonight" in state["finish"]["message"]
    assert open(os.path.join(p.agent_dir, "finish-type")).read().strip() == "hook_abort"
    assert "ralph-loop finished: hook_abort after 3 iteration(s), 2 commit(s)" in result.stdout  # the template's own line
    # iteration 2's lint output was never seen by an agent: shown in the summary, kept on disk
    assert "hook output not yet seen by the agent" in result.stdout and "in US-002" in result.stdout
    assert os.path.exists(os.path.join(p.root, ".ralph", "hook_output.json"))


def test_pre_iteration_output_reaches_the_same_prompt_in_fifo_order(tmp_path) -> None:
    config = ('[[hooks.post_iteration]]\ncommand = "echo post-{{iteration}}-a"\npipe_output = true\n\n'
              '[[hooks.post_iteration]]\ncommand = "echo post-{{iteration}}-b"\npipe_output = true\n\n'
              '[[hooks.pre_iteration]]\ncommand = "echo pre-{{iteration}}"\npipe_output = true\n')
    p = Project(tmp_path, PLAN2, config=config)
    p.script(default=DO_STORY)
    result = p.run_loop(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert result.returncode == 0, result.stdout + result.stderr
    first, second = p.prompt(1), p.prompt(2)
    assert "pre-1" in first and "post-" not in first
    assert second.index("post-1-a") < second.index("post-1-b") < second.index("pre-2")
    assert "pre-1" not in second  # drained: each output reaches exactly one prompt
    assert "post-2-a" in result.stdout and "not yet seen by the agent" in result.stdout


def test_pending_output_survives_a_restart_and_a_crash(tmp_path) -> None:
    config = ('[[hooks.post_iteration]]\ncommand = "echo note-from-{{session}}-{{iteration}}"\npipe_output = true\n\n'
              '[[hooks.post_iteration]]\ncommand = "[ -f .ralph/crash-now ] && kill -9 $PPID; true"\n')
    p = Project(tmp_path, "- [ ] US-001: A\n- [ ] US-002: B\n- [ ] US-003: C\n", config=config)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    p.script(default=DO_STORY)
    first = p.run_loop("--once", env=env)
    assert first.returncode == 3, first.stdout + first.stderr
    run1 = p.events("iteration")[0]["run_id"]
    assert f"note-from-{run1}-1" in first.stdout and "not yet seen by the agent" in first.stdout
    # the next run's first prompt delivers it; then the loop is killed (SIGKILL)
    # after its post_iteration hook buffered more
    open(os.path.join(p.root, ".ralph", "crash-now"), "w").close()
    crashed = p.run_loop(env=env)
    assert crashed.returncode == -signal.SIGKILL, crashed.stdout + crashed.stderr
    assert f"note-from-{run1}-1" in p.prompt(2)
    run2 = [e for e in p.events("iteration") if e["run_id"] != run1][0]["run_id"]
    os.unlink(os.path.join(p.root, ".ralph", "crash-now"))
    third = p.run_loop(env=env)
    assert third.returncode == 0, third.stdout + third.stderr
    prompt = p.prompt(3)
    assert f"note-from-{run2}-1" in prompt and f"note-from-{run1}-1" not in prompt


def test_fire_and_forget_never_holds_up_the_loop_and_is_killed_at_the_end(tmp_path) -> None:
    pid_file = tmp_path / "bg.pid"
    never = tmp_path / "never-created"
    # blocks until a file nobody creates: the loop can only finish if it does not wait
    config = (f'[[hooks.session_start]]\nname = "watcher"\ncommand = "echo $$ > {pid_file}; while [ ! -f {never} ]; do sleep 0.1; done"\n'
              'await = false\ntimeout = 600\n')
    p = Project(tmp_path, PLAN2, config=config)
    p.script(default=DO_STORY)
    result = p.run_loop(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert result.returncode == 0, result.stdout + result.stderr
    assert p.invocations() == 2
    assert gone(int(pid_file.read_text()))
    traces = [json.loads(line) for line in open(os.path.join(p.root, ".ralph", "logs", "lifecycle.jsonl"))]
    assert [(t["point"], t["status"], t.get("background", False)) for t in traces] == [
        ("session_start", "success", False), ("session_start", "failed", True)]
    assert "killed" in traces[1]["message"]


def test_on_failure_abort_ends_the_run_and_session_end_still_runs(tmp_path) -> None:
    config = ('[[hooks.post_iteration]]\nname = "tests"\ncommand = "echo 2 failed; exit 1"\non_failure = "abort"\n\n'
              '[[hooks.session_end]]\ncommand = "@RECORD@ end"\n')
    r = Recorded(tmp_path, PLAN2, config)
    r.p.script(default=DO_STORY)
    result = r.run()
    assert result.returncode == 6, result.stdout + result.stderr
    finish = r.p.run_state()["finish"]
    assert finish["type"] == "hook_abort" and "post_iteration hook 'tests' failed: exit 1" in finish["message"]
    assert r.p.invocations() == 1
    [end] = r.records()
    assert end["env"]["RALPH_FINISH_TYPE"] == "hook_abort"


def test_next_iteration_exit_1_skips_the_agent_run(tmp_path) -> None:
    r = Recorded(tmp_path, PLAN2, every_point())
    r.dir_hook("next_iteration", "exit 1")
    r.p.script(default=DO_STORY)
    result = r.run("--max-iterations", "2")
    assert result.returncode == 3, result.stdout + result.stderr
    assert r.p.invocations() == 0
    assert [e["result"] for e in r.p.events("iteration")] == ["skipped_by_hook", "skipped_by_hook"]
    assert [rec["argv"][0] for rec in r.records()] == ["session_start", "pre_iteration", "pre_iteration", "session_end"]


def test_session_start_abort_from_the_hooks_dir(tmp_path) -> None:
    r = Recorded(tmp_path, PLAN2, every_point())
    r.dir_hook("started", "echo dirty tree; exit 2")
    r.dir_hook("finished", f"{r.command} finished")
    result = r.run()
    assert result.returncode == 6 and r.p.invocations() == 0
    assert [(rec["argv"][0], rec["env"]["RALPH_FINISH_TYPE"]) for rec in r.records()] == [
        ("finished", "hook_abort"), ("session_end", "hook_abort")]


def test_ctrl_c_still_runs_session_end(tmp_path) -> None:
    r = Recorded(tmp_path, PLAN2, every_point())
    started = os.path.join(r.p.agent_dir, "agent.pid")
    r.p.script(runs=[[{"pid_file": started}, {"sleep": 60}]])
    proc = subprocess.Popen(r.p.loop_argv(), cwd=r.p.root, env=r.p.env(r.env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60  # hang guard
    while not os.path.exists(started) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    points = [rec["argv"][0] for rec in r.records()]
    assert points == ["session_start", "pre_iteration", "session_end"]  # nothing between the interrupt and the end
    assert r.records()[-1]["env"]["RALPH_FINISH_TYPE"] == "manual"


def test_hook_config_errors_stop_the_loop_before_it_starts(tmp_path) -> None:
    p = Project(tmp_path, PLAN2, config='[[hooks.post_iteration]]\ncommand = "echo {{oops}}"\nwhen = "${ITERATION} >"\n')
    result = p.run_loop(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert result.returncode == 2 and p.invocations() == 0
    assert "2 hook configuration error(s)" in result.stderr and "ralph.toml:2:" in result.stderr and "ralph.toml:3:" in result.stderr


def test_dry_run_with_hooks_shows_warnings_and_pending_output(tmp_path) -> None:
    r = Recorded(tmp_path, PLAN2, every_point())
    path = os.path.join(r.p.root, ".ralph", "hooks", "finished")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write("#!/bin/sh\n")
    from ralph.loop.lifecycle import pending, pipe_output

    pipe_output.add(os.path.join(r.p.root, ".ralph"), {"point": "post_iteration", "label": "lint", "text": "E1 from last night"})
    result = r.run("--dry-run")
    assert result.returncode == 0, result.stderr
    assert "hooks: warning:" in result.stdout and "not executable" in result.stdout
    assert "hooks: session_start 1, pre_iteration 1, post_iteration 1, on_task_complete 1, stage_complete 1, on_error 1, session_end 1 (details: ralph hooks list)" in result.stdout
    assert "E1 from last night" in result.stdout  # the prompt the next iteration would get
    assert r.records() == [] and pending.read(os.path.join(r.p.root, ".ralph"))  # nothing ran, nothing drained
