"""ralph-loop end to end on temp git repos, driven by tests/fake_agent.py
through the installed `ralph-loop` console script."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.loop_support import Project, git, gone

PLAN3 = "# Plan\n\n- [ ] US-001: Add greeting\n  - prints hello\n- [ ] US-002: Add farewell\n- [ ] US-003: Add docs\n"
DO_STORY = [{"append": "work.txt", "text": "one more step\n"}, {"mark": "done"}]


def test_all_stories_complete(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    p.script(default=DO_STORY)
    result = p.run_loop("--verify", "test -f work.txt")
    assert result.returncode == 0, result.stdout + result.stderr
    assert p.log() == ["feat(US-003): Add docs", "feat(US-002): Add farewell", "feat(US-001): Add greeting", "initial"]
    assert p.plan_bytes() == PLAN3.replace("[ ]", "[x]").encode()
    assert git(p.root, "status", "--porcelain") == ""  # run state is ignored, progress and plan committed
    state = p.run_state()
    assert state["status"] == "finished" and state["finish"]["type"] == "complete" and state["finish"]["exit_code"] == 0
    iterations = p.events("iteration")
    assert [(e["story"], e["result"], e["verify"]["result"]) for e in iterations] == [
        ("US-001", "done", "pass"), ("US-002", "done", "pass"), ("US-003", "done", "pass")]
    assert all(len(e["commit"]) == 40 and len(e["checkpoint"]) == 40 for e in iterations)
    assert iterations[1]["checkpoint"] == iterations[0]["commit"]
    assert "US-001: Add greeting" in p.read(".ralph/progress.md")
    assert "prints hello" in p.prompt(1) and "US-001: Add greeting" in p.prompt(2)  # progress notes reach later prompts
    assert "finished: complete" in result.stdout
    # every iteration's output is in its log
    log = os.path.join(p.root, iterations[0]["log"])
    assert "fake agent #1" in open(log, encoding="utf-8").read()
    # a later run has nothing left to do
    again = p.run_loop()
    assert again.returncode == 0 and p.invocations() == 3


def test_run_json_during_iteration_is_active_for_the_hooks(tmp_path) -> None:
    from ralph.run.state import load_active_run

    p = Project(tmp_path, PLAN3)
    snapshot = os.path.join(p.agent_dir, "run-during.json")
    p.script(runs=[[{"run": f"cp .ralph/run.json {snapshot}"}, {"mark": "done"}]])
    once = p.run_loop("--once")
    assert once.returncode == 3 and "finished: max_iterations" in once.stdout, once.stdout + once.stderr  # --once, stories left
    with open(snapshot, encoding="utf-8") as f:
        text = f.read()
    from ralph.run.state import parse_active_run

    run = parse_active_run(text)
    assert run is not None and run.story_id == "US-001" and run.source == ".ralph/plan.md"
    assert run.criteria == ["prints hello"] and run.stage == "build" and run.iteration == 1
    assert run.checkpoint == git(p.root, "rev-parse", "HEAD~1").strip()
    assert load_active_run(os.path.join(p.root, ".ralph")) is None  # finished: hooks are idle again


def test_once_runs_one_iteration(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    p.script(default=DO_STORY)
    result = p.run_loop("--once")
    assert result.returncode == 3, result.stdout  # max_iterations: stories remain
    assert p.invocations() == 1 and p.log()[0] == "feat(US-001): Add greeting"
    assert p.run_state()["finish"]["type"] == "max_iterations"


def test_verify_fails_then_passes_with_rollback(tmp_path) -> None:
    p = Project(tmp_path, "- [ ] US-001: Make check pass\n")
    p.write("check.py", "import sys\nsys.exit(0 if open('value.txt').read().strip() == 'good' else 1)\n")
    git(p.root, "add", "-A")
    git(p.root, "commit", "-q", "-m", "check")
    p.script(runs=[
        [{"write": "value.txt", "text": "bad\n"}, {"write": "scratch.txt", "text": "wip\n"}, {"mark": "done"}],
        [{"write": "value.txt", "text": "good\n"}, {"mark": "done"}],
    ])
    result = p.run_loop("--verify", f"{sys.executable} check.py")
    assert result.returncode == 0, result.stdout + result.stderr
    first, second = p.events("iteration")
    assert first["result"] == "verify_failed" and first["verify"]["exit_code"] == 1
    assert second["result"] == "done" and second["verify"]["result"] == "pass"
    # the failed work was saved to a ref, not lost, and the second iteration started clean
    ref = first["rollback"]["ref"]
    assert first["rollback"]["restored"] and ref.startswith("refs/ralph/rollbacks/")
    assert git(p.root, "show", f"{ref}:value.txt") == "bad\n"
    assert not os.path.exists(os.path.join(p.root, "scratch.txt"))
    assert second["checkpoint"] == first["checkpoint"]
    # why it failed was recorded and shown to the next attempt
    verify_failures = [f for f in p.failures() if f["kind"] == "verify"]
    assert len(verify_failures) == 1 and verify_failures[0]["story"] == "US-001"
    assert "verify exited with code 1" in p.prompt(2)
    assert p.log() == ["feat(US-001): Make check pass", "check", "initial"]
    assert git(p.root, "show", "HEAD:value.txt") == "good\n"


def test_verify_failure_without_rollback_keeps_the_work(tmp_path) -> None:
    p = Project(tmp_path, "- [ ] US-001: Something\n", config="[loop]\nrollback_on_verify_fail = false\nno_progress_limit = 1\n")
    p.script(default=[{"write": "value.txt", "text": "bad\n"}, {"mark": "done"}])
    result = p.run_loop("--verify", "false")
    assert result.returncode == 5, result.stdout  # no_changes after one unverified iteration
    assert "rollback" not in p.events("iteration")[0]
    assert p.read("value.txt") == "bad\n"
    assert p.plan_bytes() == b"- [ ] US-001: Something\n"  # the agent's [x] was taken back


def test_verify_exit_zero_with_failing_tests_fails(tmp_path) -> None:
    pytest.importorskip("ralph.rules.outcome.verdict", reason="test-outcome rules not landed yet")
    p = Project(tmp_path, "- [ ] US-001: Add math\n", config="[loop]\nno_progress_limit = 1\n")
    p.write("test_math.py", "def test_add():\n    assert 1 + 1 == 3\n")
    git(p.root, "add", "-A")
    git(p.root, "commit", "-q", "-m", "tests")
    p.script(default=[{"mark": "done"}])
    # `| tail` hides pytest's exit code: the real runner output still says it failed
    result = p.run_loop("--verify", f"{sys.executable} -m pytest -q -p no:cacheprovider test_math.py | tail -n 15")
    assert result.returncode == 5, result.stdout + result.stderr
    event = p.events("iteration")[0]
    assert event["verify"]["exit_code"] == 0 and event["verify"]["verdict"] == "fail"
    assert event["result"] == "verify_failed"
    assert p.log()[0] == "tests"


def test_agent_timeout_kills_its_process_group(tmp_path) -> None:
    p = Project(tmp_path, "- [ ] US-001: Slow\n", config="[loop]\nno_progress_limit = 2\n")
    sleepers = [os.path.join(p.agent_dir, f"sleeper-{i}") for i in (1, 2)]
    woke = os.path.join(p.agent_dir, "woke")
    p.script(runs=[[{"spawn_sleeper": s}, {"sleep": 60}, {"append": woke, "text": "x"}] for s in sleepers])
    result = p.run_loop("--timeout", "1")
    assert result.returncode == 5, result.stdout + result.stderr
    assert not os.path.exists(woke)  # two killed agents: neither lived through its 60 s sleep
    assert [e["result"] for e in p.events("iteration")] == ["timeout", "timeout"]
    assert all(e["agent_timed_out"] for e in p.events("iteration"))
    for path in sleepers:
        assert gone(int(open(path).read()))
    assert [f["kind"] for f in p.failures()] == ["timeout", "timeout"]
    assert "stopped after 1s" in p.prompt(2)
    assert p.run_state()["finish"]["type"] == "no_changes"


def test_agent_crash_then_recovery(tmp_path) -> None:
    p = Project(tmp_path, "- [ ] US-001: Fragile\n")
    p.script(runs=[[{"print": "about to crash"}, {"crash": True}], [{"write": "a.txt", "text": "a\n"}, {"mark": "done"}]])
    result = p.run_loop()
    assert result.returncode == 0, result.stdout + result.stderr
    first, second = p.events("iteration")
    assert first["result"] == "agent_failed" and first["agent_exit"] == 128 + signal.SIGKILL  # as /bin/sh reports it
    assert second["result"] == "done"
    crash = [f for f in p.failures() if f["kind"] == "agent_exit"][0]
    assert "about to crash" in crash["excerpt"]


def test_no_progress_stops_the_loop(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    p.script(default=[{"print": "thinking, but doing nothing"}])
    result = p.run_loop()
    assert result.returncode == 5, result.stdout
    assert p.invocations() == 3  # default no_progress_limit
    assert p.run_state()["finish"]["type"] == "no_changes"
    assert [f["kind"] for f in p.failures()] == ["incomplete"] * 3
    assert p.log() == ["initial"]


def test_sigterm_mid_iteration_then_resume(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    pid_file = os.path.join(p.agent_dir, "agent.pid")
    sleeper = os.path.join(p.agent_dir, "sleeper.pid")
    p.script(runs=[DO_STORY, [{"append": "work.txt", "text": "partial\n"}, {"spawn_sleeper": sleeper}, {"pid_file": pid_file}, {"sleep": 60}]])
    proc = p.start_loop()
    deadline = time.monotonic() + 30
    while not os.path.exists(pid_file) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.path.exists(pid_file), proc.communicate(timeout=5)
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 143, out + err
    assert gone(int(open(pid_file).read())) and gone(int(open(sleeper).read()))
    state = p.run_state()
    assert state["status"] == "finished" and state["finish"]["type"] == "manual" and "SIGTERM" in state["finish"]["message"]
    assert p.temp_files() == []
    assert [e["result"] for e in p.events("iteration")] == ["done", "interrupted"]
    assert p.log()[0] == "feat(US-001): Add greeting"
    # a later run resumes at the interrupted story
    p.script(default=DO_STORY)
    os.unlink(os.path.join(p.agent_dir, "invocations"))
    result = p.run_loop()
    assert result.returncode == 0, result.stdout + result.stderr
    resumed = [e for e in p.events("iteration") if e["run_id"] != state["run_id"]]
    assert [e["story"] for e in resumed] == ["US-002", "US-003"]


def test_second_ctrl_c_forces_a_hung_agent(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    pid_file = os.path.join(p.agent_dir, "agent.pid")
    p.script(runs=[[{"ignore_term": True}, {"pid_file": pid_file}, {"sleep": 60}]])
    proc = p.start_loop()
    deadline = time.monotonic() + 30
    while not os.path.exists(pid_file) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    assert proc.poll() is None  # still in the grace period: the agent ignores SIGTERM
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)  # a hang guard: the agent's own sleep is 60 s
    assert proc.returncode == 130, out + err
    # the second Ctrl-C ended the iteration, not the agent's sleep
    assert [e["result"] for e in p.events("iteration")] == ["interrupted"]
    assert gone(int(open(pid_file).read()))
    assert p.run_state()["finish"]["type"] == "manual"


def test_crlf_plan_and_unicode_titles_stay_byte_for_byte(tmp_path) -> None:
    plan = "\ufeff# Plän\r\n\r\n- [ ] US-001: Grüße ✓ — „quotes“\r\n  - zeigt 😀\r\n- [ ] US-002: 日本語のタイトル\r\n\r\nNotes: keep me\r\n"
    p = Project(tmp_path, plan)
    p.script(default=DO_STORY)
    result = p.run_loop()
    assert result.returncode == 0, result.stdout + result.stderr
    assert p.plan_bytes() == plan.replace("[ ]", "[x]").encode("utf-8")
    assert p.log()[:2] == ["feat(US-002): 日本語のタイトル", "feat(US-001): Grüße ✓ — „quotes“"]
    assert "zeigt 😀" in p.prompt(1)


def test_prd_json_in_priority_order(tmp_path) -> None:
    prd = ('{\n  "project": "demo",\n  "userStories": [\n'
           '    {"id": "US-002", "title": "Later", "priority": 2, "passes": false},\n'
           '    {\n      "id": "US-001",\n      "title": "First",\n      "priority": 1,\n      "passes": false\n    }\n  ]\n}\n')
    p = Project(tmp_path, prd, plan_name="prd.json")
    p.script(default=[{"append": "w.txt", "text": "x\n"}, {"mark": "done"}])
    result = p.run_loop()
    assert result.returncode == 0, result.stdout + result.stderr
    assert p.log()[:2] == ["feat(US-002): Later", "feat(US-001): First"]
    data = json.loads(p.read(".ralph/prd.json"))
    assert [s["passes"] for s in data["userStories"]] == [True, True]


def test_malformed_plan_names_the_line(tmp_path) -> None:
    p = Project(tmp_path, "# Plan\n\n- [ ] US-001: Good\n- [ ] no id on this story\n")
    p.script(default=DO_STORY)
    result = p.run_loop()
    assert result.returncode == 2
    assert ".ralph/plan.md:4" in result.stderr and "no id" in result.stderr
    assert p.invocations() == 0
    assert not os.path.exists(os.path.join(p.root, ".ralph", "run.json"))


def test_missing_plan_says_how_to_make_one(tmp_path) -> None:
    p = Project(tmp_path, None)
    result = p.run_loop()
    assert result.returncode == 2 and "no plan at .ralph/plan.md" in result.stderr and "--mode plan" in result.stderr


@pytest.mark.parametrize(
    "config, where, words",
    [
        ("[loop]\nagent_command = \"true\"\nmax_iterations = \"ten\"\n", "ralph.toml:3", "[loop] max_iterations: must be a whole number"),
        ("[loop]\non_story_exhausted = \"ignore\"\n", "ralph.toml:2", "'skip', 'stop'"),
        ("[loop]\nmax_iterations = 3\nmax_iteration = 4\n", "ralph.toml:3", "[loop] max_iteration: unknown key"),
        ("[loop\nmax_iterations = 3\n", "ralph.toml:1", "invalid TOML"),
        ("[loop]\n[[loop.stages]]\nname = \"plan\"\n[[loop.stages]]\nname = \"build\"\nmax_iterations = 0\n", "ralph.toml:6", "[loop.stages] max_iterations: must be >= 1"),
    ],
)
def test_bad_config_names_file_and_line(tmp_path, config: str, where: str, words: str) -> None:
    p = Project(tmp_path, PLAN3, config=config)
    result = p.run_loop()
    assert result.returncode == 2, result.stdout + result.stderr
    assert where in result.stderr and words in result.stderr
    assert p.invocations() == 0


def test_unknown_prompt_placeholder_is_a_config_error(tmp_path) -> None:
    p = Project(tmp_path, PLAN3, config='[loop]\nprompt = "my_prompt.md"\n')
    p.write("my_prompt.md", "Do {{story_id}}\nthen {{stroy_title}}\n")
    result = p.run_loop()
    assert result.returncode == 2 and "my_prompt.md:2: unknown placeholder {{stroy_title}}" in result.stderr


def test_custom_prompt_and_agent_from_config(tmp_path) -> None:
    p = Project(tmp_path, PLAN3, config='[loop]\nprompt = "my_prompt.md"\nagent_command = ["%s", "%s"]\n'
                % (sys.executable, os.path.join(os.path.dirname(__file__), "fake_agent.py")))
    p.write("my_prompt.md", "Story {{story_id}} / {{story_title}}\n{{criteria}}\n")
    p.commit()
    p.script(default=DO_STORY)
    result = p.run_loop("--once", agent=None)
    assert result.returncode == 3, result.stdout + result.stderr
    assert p.prompt(1) == "Story US-001 / Add greeting\n- prints hello\n"


def test_story_budget_marks_blocked_and_moves_on(tmp_path) -> None:
    config = "[loop]\nmax_iterations_per_story = 2\nno_progress_limit = 0\n"
    p = Project(tmp_path, "- [ ] US-001: Impossible\n- [ ] US-002: Easy\n", config=config)
    p.script(runs=[[{"print": "try"}], [{"print": "try again"}]], default=DO_STORY)
    result = p.run_loop()
    assert result.returncode == 4, result.stdout + result.stderr
    assert p.plan_bytes() == b"- [!] US-001: Impossible\n- [x] US-002: Easy\n"
    assert p.run_state()["finish"]["type"] == "blocked"
    assert [e["story"] for e in p.events("story_blocked")] == ["US-001"]
    assert any(f["kind"] == "budget" for f in p.failures())


def test_story_budget_stop(tmp_path) -> None:
    config = '[loop]\nmax_iterations_per_story = 1\non_story_exhausted = "stop"\nno_progress_limit = 0\n'
    p = Project(tmp_path, "- [ ] US-001: Impossible\n- [ ] US-002: Easy\n", config=config)
    p.script(default=[{"print": "nope"}])
    result = p.run_loop()
    assert result.returncode == 4 and p.invocations() == 1
    assert p.plan_bytes() == b"- [!] US-001: Impossible\n- [ ] US-002: Easy\n"


def test_story_wall_time_budget(tmp_path) -> None:
    config = "[loop]\nmax_minutes_per_story = 0.01\nno_progress_limit = 0\n"  # 0.6 s
    p = Project(tmp_path, "- [ ] US-001: Slow\n", config=config)
    p.script(default=[{"sleep": 0.7}])
    result = p.run_loop()
    assert result.returncode == 4 and p.invocations() == 1, result.stdout


def test_max_iterations(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    p.script(default=DO_STORY)
    result = p.run_loop("--max-iterations", "2")
    assert result.returncode == 3 and p.invocations() == 2
    assert "2/3 stories done" in p.run_state()["finish"]["message"]


def test_hook_abort(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    p.script(default=[{"write": ".ralph/abort", "text": "guard tripped three times"}])
    result = p.run_loop()
    assert result.returncode == 6, result.stdout
    finish = p.run_state()["finish"]
    assert finish["type"] == "hook_abort" and "guard tripped" in finish["message"]
    assert not os.path.exists(os.path.join(p.root, ".ralph", "abort"))


def test_agent_that_cannot_start_is_an_error(tmp_path) -> None:
    p = Project(tmp_path, PLAN3, config='[loop]\nagent_command = ["/nonexistent/agent"]\n')
    result = p.run_loop(agent=None)
    assert result.returncode == 1, result.stdout
    assert "/nonexistent/agent" in p.run_state()["finish"]["message"]


def test_commit_refused_keeps_story_open(tmp_path) -> None:
    p = Project(tmp_path, "- [ ] US-001: Guarded\n", config="[loop]\nno_progress_limit = 1\n")
    hook = os.path.join(p.root, ".git", "hooks", "pre-commit")
    with open(hook, "w") as f:
        f.write("#!/bin/sh\necho 'lint failed: trailing whitespace' >&2\nexit 1\n")
    os.chmod(hook, 0o755)
    p.script(default=[{"write": "a.txt", "text": "a \n"}, {"mark": "done"}])
    result = p.run_loop()
    assert result.returncode == 5, result.stdout
    event = p.events("iteration")[0]
    assert event["result"] == "commit_failed"
    assert p.plan_bytes() == b"- [ ] US-001: Guarded\n"
    assert not os.path.exists(os.path.join(p.root, ".ralph", "progress.md"))
    assert "lint failed" in [f for f in p.failures() if f["kind"] == "commit"][0]["excerpt"]


def test_repo_without_commits_is_refused(tmp_path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".ralph").mkdir()
    (root / ".ralph" / "plan.md").write_text("- [ ] US-001: x\n")
    from tests.loop_support import RALPH_LOOP

    result = subprocess.run([RALPH_LOOP, "--agent", "true"], cwd=root, capture_output=True, text=True)
    assert result.returncode == 1 and "no commit yet" in result.stdout


def test_prd_n_layout_is_found(tmp_path) -> None:
    p = Project(tmp_path, None)
    for n, title in ((1, "Old"), (2, "New")):
        p.write(f".ralph/PRD-{n}/plan.md", f"- [ ] US-00{n}: {title}\n")
    p.script(default=DO_STORY)
    result = p.run_loop("--once")
    assert result.returncode == 0, result.stdout + result.stderr
    assert p.log()[0] == "feat(US-002): New"
    assert "US-002: New" in p.read(".ralph/PRD-2/progress.md")


def test_dry_run_prints_story_and_prompt_and_writes_nothing(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    before = sorted(os.listdir(os.path.join(p.root, ".ralph")))
    result = p.run_loop("--dry-run", "--verify", "make test")
    assert result.returncode == 0, result.stderr
    assert "next story: US-001: Add greeting" in result.stdout
    assert "- prints hello" in result.stdout and "`make test`" in result.stdout
    assert sorted(os.listdir(os.path.join(p.root, ".ralph"))) == before
    assert p.invocations() == 0


def test_dry_run_imports_only_what_it_needs(tmp_path) -> None:
    """`ralph-loop --dry-run` has a start-up budget of about one bare Python
    start (scripts/bench.py): with the parsed ralph.toml cached, it reads no
    TOML, no JSON and no arguments beyond flags, and runs nothing."""
    from tests.loop_support import RALPH_LOOP

    p = Project(tmp_path, PLAN3, config='[loop]\nagent_command = ["true"]\nmax_iterations = 7\n')

    def imported(*argv: str) -> set[str]:
        done = subprocess.run([sys.executable, "-X", "importtime", *argv], cwd=p.root, env=p.env(),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}

    first = imported(RALPH_LOOP, "--dry-run")  # parses ralph.toml and caches it
    assert "tomllib" in first
    from ralph.run.failures import record_failure

    # an earlier iteration's failure, which the prompt shows
    record_failure(os.path.join(p.root, ".ralph"), {"story": "US-001", "iteration": 1, "kind": "verify", "summary": "tests failed"})
    start_up = imported("-c", "pass")  # what site and .pth files import, whoever runs
    warm = imported(RALPH_LOOP, "--dry-run", "-q") - start_up
    assert "ralph.commands.loop" in warm and "ralph.plan" in warm and "ralph.run.failures" in warm
    assert not warm & {"tomllib", "re", "json", "argparse", "shlex", "shutil", "secrets", "subprocess"}, sorted(warm)
    result = p.run_loop("--dry-run", agent=None)
    assert result.returncode == 0 and "next story: US-001: Add greeting" in result.stdout, result.stderr
    assert "stage: build · agent: true · verify: (none configured)" in result.stdout
    assert "- iteration 1 (verify): tests failed" in result.stdout


def test_dry_run_checks_hooks_without_re(tmp_path) -> None:
    """Lifecycle hooks with conditions, templates and a hooks-dir executable
    are all checked by the dry run, with the hand-written parsers (no re) and
    no module an action needs only to run."""
    from tests.loop_support import RALPH_LOOP

    config = ('[loop]\nagent_command = ["true"]\n\n[hooks]\ndir_timeout = 10\n\n'
              '[[ hooks.pre_iteration ]]  # spaced header\nname = "check"\ncommand = "echo {{task_id}} ${STAGE}"\n'
              'when = "${ITERATION} % 2 == 0 && ${STAGE} == \'build\'"\npipe_output = true\n\n'
              '[[hooks.session_end]]\ncommand = ["true"]\non_failure = "retry"\nretries = 2\n')
    p = Project(tmp_path, PLAN3, config=config)
    p.write(".ralph/hooks/started", "#!/bin/sh\nexit 0\n")
    os.chmod(os.path.join(p.root, ".ralph/hooks/started"), 0o755)

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-X", "importtime", *argv], cwd=p.root, env=p.env(), capture_output=True, text=True, timeout=60)

    run(RALPH_LOOP, "--dry-run")  # caches the parsed ralph.toml
    start_up = {line.rsplit("|", 1)[-1].strip() for line in run("-c", "pass").stderr.splitlines() if line.startswith("import time:")}
    done = run(RALPH_LOOP, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "hooks: session_start 1, pre_iteration 1, session_end 1 (details: ralph hooks list)" in done.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")} - start_up
    assert {"ralph.loop.lifecycle.condition", "ralph.loop.lifecycle.template"} <= imported
    assert not imported & {"tomllib", "re", "json", "argparse", "shlex", "shutil", "subprocess"}, sorted(imported)
    p.write("ralph.toml", config.replace("== 0", "= 0"))  # a syntax error: reported with its line, as before
    done = run(RALPH_LOOP, "--dry-run")
    assert done.returncode == 2 and "ralph.toml:10: [hooks.pre_iteration] when: unexpected '=' at column 18" in done.stderr, done.stderr


def test_status_command(tmp_path) -> None:
    from tests.conftest import RALPH

    p = Project(tmp_path, PLAN3)
    p.script(runs=[DO_STORY, [{"mark": "done"}]])
    p.run_loop("--verify", "test -f work.txt && ! grep -q broken work.txt", "--max-iterations", "2")
    result = subprocess.run([RALPH, "status"], cwd=p.root, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "stories: 2/3 done" in result.stdout and "next: US-003: Add docs" in result.stdout
    assert "max_iterations" in result.stdout and "#2 US-002: done" in result.stdout
    data = json.loads(subprocess.run([RALPH, "status", "--json"], cwd=p.root, capture_output=True, text=True).stdout)
    assert data["stories"]["done"] == 2 and data["run"]["finish"]["type"] == "max_iterations"


def test_plan_mode_writes_plan_without_commits(tmp_path) -> None:
    p = Project(tmp_path, None)
    plan = "- [ ] US-001: Planned story\n  - does a thing\n"
    p.script(runs=[[{"write": ".ralph/plan.md", "text": plan}], [{"print": "plan looks good"}]])
    result = p.run_loop("--mode", "plan")
    assert result.returncode == 0, result.stdout + result.stderr
    assert p.read(".ralph/plan.md") == plan and p.log() == ["initial"]
    assert [e["result"] for e in p.events("iteration")] == ["plan_changed", "plan_unchanged"]
    assert "(no plan yet: write it)" in p.prompt(1) and "US-001: Planned story" in p.prompt(2)
    assert p.run_state()["stage"] == "plan" and p.run_state()["story"] is None


def test_pipeline_plan_then_build(tmp_path) -> None:
    config = ('[loop]\nverify_command = "test -f work.txt"\n'
              '[[loop.stages]]\nname = "plan"\nmode = "plan"\nmax_iterations = 2\n'
              '[[loop.stages]]\nname = "build"\nmode = "build"\n')
    p = Project(tmp_path, None, config=config)
    plan = "- [ ] US-001: A\n- [ ] US-002: B\n"
    p.script(runs=[[{"write": ".ralph/plan.md", "text": plan}],
                   [{"write": ".ralph/plan.md", "text": plan + "- [ ] US-003: C\n"}]], default=DO_STORY)
    result = p.run_loop()
    assert result.returncode == 0, result.stdout + result.stderr
    stages = p.events("stage_complete")
    assert [s["stage"] for s in stages] == ["plan", "build"]
    assert [e["stage"] for e in p.events("iteration")] == ["plan", "plan", "build", "build", "build"]
    assert p.log()[0] == "feat(US-003): C"
    assert "Your job is to write or refine the plan" in p.prompt(1) and "Your story: US-001: A" in p.prompt(3)


def test_stop_hook_makes_the_agent_finish(tmp_path) -> None:
    """Through the real `ralph stop` and `ralph prompt`: the agent ends its turn
    without marking the story, the Stop hook blocks, the agent finishes it."""
    p = Project(tmp_path, PLAN3)
    p.script(runs=[[{"append": "work.txt", "text": "x\n"}, {"stop": [{"mark": "done"}]}]], hooks=["stop", "prompt"])
    result = p.run_loop("--once")
    assert result.returncode == 3, result.stdout + result.stderr
    with open(os.path.join(p.agent_dir, "hooks-1.jsonl")) as f:
        hooks = [json.loads(line) for line in f]
    assert [h["hook"] for h in hooks] == ["prompt", "stop", "stop"]
    assert "US-001" in hooks[0]["output"]["hookSpecificOutput"]["additionalContext"]
    assert hooks[1]["output"]["decision"] == "block" and hooks[2]["output"] == {}
    assert p.log()[0] == "feat(US-001): Add greeting"


def test_stop_hook_gives_up_records_incomplete_once(tmp_path) -> None:
    p = Project(tmp_path, "- [ ] US-001: Never done\n", config="[loop]\nno_progress_limit = 1\n")
    p.script(default=[{"stop": []}], hooks=["stop"])
    result = p.run_loop()
    assert result.returncode == 5
    kinds = [f["kind"] for f in p.failures()]
    assert kinds == ["stop_incomplete"]  # the loop does not add a second "incomplete" record
