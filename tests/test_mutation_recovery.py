"""Crash recovery cases a mutation run of ralph/loop/recovery.py found
untested (scripts/mutate.py): a loop killed in the middle of its own commit,
stories committed since the checkpoint (or without one), the records a
killed run leaves half-written, and plans put back or left alone.

Real loops (`ralph-loop`, tests/fake_agent.py), real git, real SIGKILL; the
state a kill leaves is either made by a real kill or written as the killed
loop writes it (run.json of a running loop whose process is gone)."""
from __future__ import annotations

import json
import os
import sys

from tests.loop_support import Project, git
from tests.test_loop_crash import PLAN3, crashed_run, dead_pid

DONE3 = PLAN3.replace("[ ]", "[x]").encode()
# A pre-commit hook that SIGKILLs the loop the first time the loop commits: the
# kill lands after the intent is written, the story ticked and its progress
# note appended, before the commit exists. Waits (by polls, not time) until
# the loop is gone, then refuses the commit, as a commit cut short would.
KILLING_HOOK = """#!{python}
import json, os, signal, sys, time
mark = {mark!r}
if os.path.exists(mark):
    sys.exit(0)
open(mark, "w").close()
with open(".ralph/run.json") as f:
    loop = json.load(f)["loop"]["pid"]
os.kill(loop, signal.SIGKILL)
for _ in range(3000):
    try:
        with open("/proc/%d/stat" % loop) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
    except OSError:
        break
    time.sleep(0.01)
sys.exit(1)
"""


def install_killing_hook(p: Project) -> str:
    mark = os.path.join(p.agent_dir, "killed-once")
    hook = os.path.join(p.root, ".git", "hooks", "pre-commit")
    with open(hook, "w") as f:
        f.write(KILLING_HOOK.format(python=sys.executable, mark=mark))
    os.chmod(hook, 0o755)
    return mark


def test_a_loop_killed_inside_its_commit_is_put_right_on_restart(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    p.write(".ralph/progress.md", "# Progress\n")
    git(p.root, "add", "-A")
    git(p.root, "commit", "-q", "-m", "progress")
    mark = install_killing_hook(p)
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    killed = p.run_loop("--verify", "test -f work.txt")
    assert killed.returncode == -9 and os.path.exists(mark), killed.stdout + killed.stderr
    # what the kill left: the intent, the tick and the note, no commit
    assert os.path.exists(os.path.join(p.root, ".ralph", "commit_intent.json"))
    assert "[x] US-001" in p.read(".ralph/plan.md") and "US-001" in p.read(".ralph/progress.md")
    assert p.log() == ["progress", "initial"]

    result = p.run_loop("--verify", "test -f work.txt")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "recovered: US-001 was verified but the loop was killed before committing it" in result.stdout
    assert "without being verified or committed" not in result.stdout  # the intent said what happened
    [event] = p.events("crash_recovery")
    assert len(event["actions"]) == 1 and event["actions"][0].startswith("US-001 was verified")
    assert p.log() == ["feat(US-003): Add docs", "feat(US-002): Add farewell", "feat(US-001): Add greeting", "progress", "initial"]
    assert p.read(".ralph/progress.md").count("US-001") == 1  # the interrupted commit's note was taken back
    assert p.plan_bytes() == DONE3 and not os.path.exists(os.path.join(p.root, ".ralph", "commit_intent.json"))


def test_a_story_committed_since_the_checkpoint_is_not_run_again(tmp_path) -> None:
    # killed after its story's commit and one more commit of the agent's own:
    # the feat commit is not HEAD, but it is there
    p = Project(tmp_path, PLAN3)
    checkpoint = git(p.root, "rev-parse", "HEAD").strip()
    p.write(".ralph/plan.md", PLAN3.replace("[ ] US-001", "[x] US-001"))
    p.write("greeting.txt", "hello\n")
    git(p.root, "add", "-A")
    git(p.root, "commit", "-q", "-m", "feat(US-001): Add greeting")
    p.write("notes.txt", "notes\n")
    git(p.root, "add", "-A")
    git(p.root, "commit", "-q", "-m", "docs: notes on the greeting")
    crashed_run(p, "US-001", checkpoint)
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    result = p.run_loop("--once")
    assert result.returncode == 3, result.stdout + result.stderr  # one more story done, one to go
    assert "recovered" not in result.stdout and p.events("crash_recovery") == []
    assert p.log() == ["feat(US-002): Add farewell", "docs: notes on the greeting", "feat(US-001): Add greeting", "initial"]


def test_a_story_committed_as_head_counts_without_a_checkpoint(tmp_path) -> None:
    p = Project(tmp_path, PLAN3)
    p.write(".ralph/plan.md", PLAN3.replace("[ ] US-001", "[x] US-001"))
    git(p.root, "commit", "-q", "-am", "feat(US-001): Add greeting")
    crashed_run(p, "US-001", "")
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    result = p.run_loop("--once")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "recovered" not in result.stdout
    assert p.log() == ["feat(US-002): Add farewell", "feat(US-001): Add greeting", "initial"]


def test_only_the_storys_own_commit_counts(tmp_path) -> None:
    # a commit of another story (or one that only mentions the id) since the
    # checkpoint does not make a ticked story committed
    p = Project(tmp_path, PLAN3)
    checkpoint = git(p.root, "rev-parse", "HEAD").strip()
    p.write("other.txt", "x\n")
    git(p.root, "add", "-A")
    git(p.root, "commit", "-q", "-m", "feat(US-0011): another story")
    git(p.root, "commit", "-q", "--allow-empty", "-m", "chore: prepare feat(US-001): Add greeting")
    p.write(".ralph/plan.md", PLAN3.replace("[ ] US-001", "[x] US-001"))
    crashed_run(p, "US-001", checkpoint)
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    result = p.run_loop("--once")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "recovered: US-001 was marked done in .ralph/plan.md without being verified or committed" in result.stdout
    assert "(run 20261122-000000-dead was killed during iteration 2)" in result.stdout
    assert p.log()[0] == "feat(US-001): Add greeting"


def test_an_intent_without_a_checkpoint_or_progress_record(tmp_path) -> None:
    # a killed run's intent as an older loop wrote it: no checkpoint (HEAD
    # decides), the note appended to a progress file that did not exist before
    p = Project(tmp_path, PLAN3)
    p.write(".ralph/plan.md", PLAN3.replace("[ ] US-002", "[x] US-002"))
    p.write(".ralph/progress.md", "## US-002: Add farewell\nDone.\n")
    with open(os.path.join(p.root, ".ralph", "commit_intent.json"), "w") as f:
        json.dump({"story": "US-002", "plan": os.path.join(p.root, ".ralph", "plan.md"), "progress": ".ralph/progress.md",
                   "progress_size": -1}, f)
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    result = p.run_loop("--verify", "test -f work.txt")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "recovered: US-002 was verified but the loop was killed" in result.stdout
    assert p.log().count("feat(US-002): Add farewell") == 1 and p.plan_bytes() == DONE3
    assert p.read(".ralph/progress.md").count("US-002") == 1  # the old note went with its file


def test_a_torn_or_foreign_intent_is_dropped_without_harm(tmp_path) -> None:
    for case, intent in enumerate(('{"story": "US-001", "plan": ".ralph/pl', '{"story": 7, "plan": ".ralph/plan.md"}',
                                   '{"story": "US-001"}', '{"story": "US-001", "plan": 7, "progress": ["x"], "progress_size": 3}',
                                   '{"story": "US-001", "plan": "", "progress": "", "progress_size": 0}',
                                   '{"story": "US-001", "plan": ".ralph/plan.md", "progress": ".ralph/progress.md", "progress_size": "3"}')):
        base = tmp_path / f"case-{case}"
        base.mkdir()
        p = Project(base, PLAN3)
        p.write(".ralph/progress.md", "# Progress\nkept\n")
        with open(os.path.join(p.root, ".ralph", "commit_intent.json"), "w") as f:
            f.write(intent)
        p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
        result = p.run_loop("--once")
        assert result.returncode == 3, (intent, result.stdout + result.stderr)
        assert not os.path.exists(os.path.join(p.root, ".ralph", "commit_intent.json"))
        assert p.read(".ralph/progress.md").startswith("# Progress\nkept\n"), intent
        assert p.log() == ["feat(US-001): Add greeting", "initial"], intent


def test_stale_temp_files_go_wherever_the_plan_lives(tmp_path) -> None:
    # temp files of a killed writer beside a plan outside .ralph/, and in a
    # subdirectory of the state dir; a file that only looks similar stays
    p = Project(tmp_path, None)
    p.write("docs/plan.md", PLAN3)
    git(p.root, "add", "-A")
    git(p.root, "commit", "-q", "-m", "plan")
    stale = [os.path.join(p.root, "docs", f".plan.md.{dead_pid()}.tmp"),
             os.path.join(p.root, ".ralph", "logs", f".hooks.jsonl.{dead_pid()}.tmp")]
    kept = [os.path.join(p.root, "docs", f"plan.md.{dead_pid()}.tmp"), os.path.join(p.root, "docs", ".plan.md.tmp")]
    for path in stale + kept:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("partial")
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    result = p.run_loop("--once", "--plan", "docs/plan.md", "--allow-dirty")  # the look-alikes are untracked files
    assert result.returncode == 3, result.stdout + result.stderr
    assert not any(os.path.exists(path) for path in stale) and all(os.path.exists(path) for path in kept)
    said = [line.split("recovered: ", 1)[1] for line in result.stdout.splitlines() if "recovered: " in line]
    assert len(said) == 1 and said[0].startswith("removed 2 temp file(s) a killed writer left: "), said
    assert sorted(said[0].split(": ", 1)[1].split(", ")) == sorted(os.path.relpath(path, p.root) for path in stale), said


def test_a_plan_that_gained_stories_or_is_not_in_the_checkpoint_is_left_alone(tmp_path) -> None:
    # the killed run's agent added a story (a plan with more stories is not a
    # cut edit), and a plan the checkpoint does not have has nothing to be compared with
    for case in ("gained a story", "not in the checkpoint"):
        base = tmp_path / case.replace(" ", "-")
        base.mkdir()
        p = Project(base, PLAN3, commit_plan=case != "not in the checkpoint")
        checkpoint = git(p.root, "rev-parse", "HEAD").strip()
        crashed_run(p, "US-002", checkpoint)
        plan = PLAN3 + "- [ ] US-004: Add tests\n" if case == "gained a story" else PLAN3[:PLAN3.index("- [ ] US-003")]
        p.write(".ralph/plan.md", plan)
        p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
        result = p.run_loop("--once")
        assert result.returncode == 3, (case, result.stdout + result.stderr)
        assert "put back" not in result.stdout and not os.path.exists(os.path.join(p.root, ".ralph", "recovered")), case
        assert p.read(".ralph/plan.md").startswith(plan.replace("[ ] US-001", "[x] US-001")), case


def test_a_plan_cut_short_in_a_crashed_run_without_its_id(tmp_path) -> None:
    # run.json without a run id still names where the found plan was kept
    p = Project(tmp_path, PLAN3)
    crashed_run(p, "US-002", git(p.root, "rev-parse", "HEAD").strip(), run_id=None)
    p.write(".ralph/plan.md", PLAN3[:PLAN3.index("- [ ] US-002")])
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    result = p.run_loop("--once")
    assert result.returncode == 3, result.stdout + result.stderr
    assert ".ralph/plan.md had lost US-002, US-003 (an edit cut short by the kill)" in result.stdout
    assert "the plan as found is in .ralph/recovered/plan.md.killed-run" in result.stdout
    assert os.path.exists(os.path.join(p.root, ".ralph", "recovered", "plan.md.killed-run"))


def test_run_json_names_the_running_agents_group(tmp_path) -> None:
    # for the next run, should this one be killed together with its watchdog
    # (test_loop_crash: the restart ends the group it names)
    from tests.loop_support import gone
    from tests.test_loop_crash import wait_for

    p = Project(tmp_path, PLAN3)
    pids = os.path.join(p.agent_dir, "pids")
    p.script(runs=[[{"pid_file": pids}, {"sleep": 300}]], default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    loop = p.start_loop("--once")
    try:
        wait_for(lambda: os.path.exists(pids) and p.run_state().get("child_group"), "the agent started and was recorded")
        group = p.run_state()["child_group"]
        with open(pids) as f:
            agent = int(f.read().split()[0])
        assert group["pid"] == os.getpgid(agent) and group["start"] > 0
    finally:
        loop.kill()
        loop.communicate()
    assert gone(agent)
    result = p.run_loop("--once")
    assert result.returncode == 3, result.stdout + result.stderr
    assert p.log() == ["feat(US-001): Add greeting", "initial"]


def test_without_a_checkpoint_a_shorter_plan_is_not_second_guessed(tmp_path):
    # nothing to compare with: the plan as found is the plan (the index or
    # HEAD are not the killed run's checkpoint)
    p = Project(tmp_path, PLAN3)
    crashed_run(p, "US-003", "")
    shorter = PLAN3[:PLAN3.index("- [ ] US-003")]
    p.write(".ralph/plan.md", shorter)
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    result = p.run_loop("--once")
    assert "put back" not in result.stdout, result.stdout
    assert p.read(".ralph/plan.md").startswith(shorter.replace("[ ] US-001", "[x] US-001"))
    assert "US-003" not in p.read(".ralph/plan.md")


def test_a_crashed_run_whose_story_names_no_plan_file(tmp_path) -> None:
    # run.json of a killed run whose story record has no source (or not a
    # string): nothing to put back or untick, and the loop goes on
    for case, source in enumerate((None, 7, "")):
        base = tmp_path / f"case-{case}"
        base.mkdir()
        p = Project(base, PLAN3)
        crashed_run(p, "US-001", git(p.root, "rev-parse", "HEAD").strip())
        state = p.run_state()
        state["story"]["source"] = source
        p.write(".ralph/run.json", json.dumps(state))
        p.write(".ralph/plan.md", PLAN3.replace("[ ] US-001", "[x] US-001"))
        p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
        result = p.run_loop("--once")
        assert result.returncode == 3, (source, result.stdout + result.stderr)
        assert "recovered" not in result.stdout, source
        assert p.log() == ["feat(US-002): Add farewell", "initial"], source
