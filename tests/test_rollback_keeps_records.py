"""A rollback undoes the agent's changes since the checkpoint, nothing else
(ralph.rollback.kept): the plan and progress.md keep what the loop and the
person wrote while the iteration ran. Real git repositories; the loop's own
code for the iterations (tests/test_agent_tools.Iteration), and a real
`ralph-loop` run with the stand-in agent and the real hooks for the hooks'
rollback."""
from __future__ import annotations

import json
import os
import shlex
import sys

from ralph.loop import agent_tools, prepare, verify
from ralph.loop.runner import plan_states
from ralph.mcp.report_blocked import report_blocked
from ralph.plan import set_story_state, story_state
from ralph.report import model
from ralph.rollback.kept import KeptFiles
from ralph.rollback.restore import save_and_restore
from ralph.run import records

from .loop_support import Project, git
from .test_agent_tools import Iteration, stale_bytecode_off

QUESTION = "Should add() saturate at 2**31-1 or raise?"


def next_iteration(loop: Iteration, story_id: str) -> object:
    story = next(s for s in loop.run.stories() if s.id == story_id)
    loop.run.budget(story).iterations += 1
    loop.it = prepare.begin(loop.run, story)
    agent_tools.write_context(loop.run, loop.it)
    return loop.it


def block_first_story(loop: Iteration) -> None:
    """US-001: the agent reports it blocked, the loop saves, resets and moves on."""
    loop.project.write("calc.py", "def add(a, b):\n    raise NotImplementedError\n")
    answer = report_blocked(loop.ctx(), "US-001", "The spec does not say how add() treats overflow.", QUESTION)
    assert not answer.is_error, answer.text
    agent_tools.story_blocked(loop.run, loop.it)
    assert loop.state() == "blocked"


def fail_verify(loop: Iteration, it: object, story_id: str) -> None:
    """The agent claims the story done on code that fails the verify command:
    the loop rolls the iteration back."""
    loop.project.write("calc.py", "def add(a, b):\n    return a * b\n")
    stale_bytecode_off(loop.root)
    set_story_state(loop.project.plan_path, story_id, "done")
    assert verify.verify_story(loop.run, it) == "verify_failed"
    assert it.event["rollback"]["ref"], it.event["rollback"]


def test_a_blocked_story_and_its_question_survive_a_later_storys_rollback(tmp_path, monkeypatch) -> None:
    loop = Iteration(tmp_path, monkeypatch)
    block_first_story(loop)
    it = next_iteration(loop, "US-002")
    fail_verify(loop, it, "US-002")
    assert loop.project.read("calc.py") == "def add(a, b):\n    return a - b\n"  # the agent's change is undone
    assert loop.state("US-001") == "blocked"  # the loop's record is not
    assert loop.state("US-002") == "todo"  # the agent's done mark is undone
    assert f"Question for a person: {QUESTION}" in loop.progress()
    assert ".ralph/plan.md" in it.event["rollback"]["kept"] and not it.event["rollback"]["conflicts"]
    # the morning report asks the person the question
    records.append_event(loop.run.state_dir, {"event": "finish", "run_id": loop.run.run_id, "type": "blocked", "message": "",
                                              "exit_code": 4, "at": "2026-11-28T20:00:00Z", "iterations": 2,
                                              "stories": plan_states(loop.run)})
    report = model.build(records.read_events(loop.run.state_dir), loop.project.run_state())
    [story] = [s for s in report["stories"] if s["id"] == "US-001"]
    assert story["state"] == "blocked"
    assert QUESTION in json.dumps(report["act_on"])


def test_a_persons_plan_edit_during_an_iteration_survives_its_rollback(tmp_path, monkeypatch) -> None:
    loop = Iteration(tmp_path, monkeypatch)
    with open(loop.project.plan_path, "a", encoding="utf-8") as f:  # the person, while the agent works
        f.write("- [ ] US-003: Multiply numbers\n  - added by a person mid-iteration\n")
    fail_verify(loop, loop.it, "US-001")
    plan = loop.project.read(".ralph/plan.md")
    assert plan == PLAN_WITH_PERSONS_EDIT, plan
    ref = loop.it.event["rollback"]["ref"]
    assert "- [x] US-001" in git(loop.root, "show", f"{ref}:.ralph/plan.md")  # the agent's claim, saved with its work


PLAN_WITH_PERSONS_EDIT = ("- [ ] US-001: Add numbers\n  - add(2, 3) is 5\n- [ ] US-002: Subtract numbers\n"
                          "- [ ] US-003: Multiply numbers\n  - added by a person mid-iteration\n")


def test_progress_notes_survive_and_lost_lines_come_back_under_a_heading(tmp_path, monkeypatch) -> None:
    loop = Iteration(tmp_path, monkeypatch)
    progress = os.path.join(loop.root, ".ralph", "progress.md")
    with open(progress, "w", encoding="utf-8") as f:
        f.write("# Progress\n\n- checkpoint note\n")
    git(loop.root, "add", "-A")
    git(loop.root, "commit", "-q", "-m", "progress")
    it = next_iteration(loop, "US-001")
    with open(progress, "a", encoding="utf-8") as f:
        f.write("- tried saturating; the tests disagree\n")
    fail_verify(loop, it, "US-001")
    assert loop.progress() == "# Progress\n\n- checkpoint note\n- tried saturating; the tests disagree\n"
    # progress.md rewritten (a line of the checkpoint's gone): both kept, and said
    it = next_iteration(loop, "US-001")
    with open(progress, "w", encoding="utf-8") as f:
        f.write("# Progress\n\n- a rewritten note\n")
    fail_verify(loop, it, "US-001")
    assert loop.progress().startswith("# Progress\n\n- a rewritten note\n\n## Lines of the checkpoint's progress.md missing")
    assert loop.progress().endswith(" (kept by ralph)\n\n- checkpoint note\n")  # the checkpoint's is the base
    [conflict] = it.event["rollback"]["conflicts"]
    assert "1 line(s)" in conflict
    [event] = loop.project.events("rollback_conflict")
    assert event["story"] == "US-001" and event["conflicts"] == [conflict]


def test_a_plan_that_no_longer_reads_keeps_the_checkpoints_and_says_where_the_other_is(tmp_path) -> None:
    project = Project(tmp_path, "- [ ] US-001: One\n")
    checkpoint = git(project.root, "rev-parse", "HEAD").strip()
    project.write("work.txt", "agent's\n")
    with open(project.plan_path, "w", encoding="utf-8") as f:
        f.write("no stories here\n")
    result = save_and_restore(project.root, checkpoint, story="US-001", iteration=1, trigger="test",
                              kept=KeptFiles(project.plan_path, None, "US-001"))
    assert result.restored and not os.path.exists(os.path.join(project.root, "work.txt"))
    assert project.read(".ralph/plan.md") == "- [ ] US-001: One\n"
    [conflict] = result.conflicts
    assert "no longer reads as a plan" in conflict and f"git show {result.ref}:.ralph/plan.md" in conflict
    assert git(project.root, "show", f"{result.ref}:.ralph/plan.md") == "no stories here\n"


def test_an_uncommitted_plan_keeps_its_records_and_loses_only_the_done_mark(tmp_path) -> None:
    project = Project(tmp_path, "- [ ] US-001: One\n- [!] US-002: Two\n", commit_plan=False)
    checkpoint = git(project.root, "rev-parse", "HEAD").strip()
    set_story_state(project.plan_path, "US-001", "done")
    project.write("work.txt", "agent's\n")
    result = save_and_restore(project.root, checkpoint, story="US-001", iteration=1, trigger="test",
                              kept=KeptFiles(".ralph/plan.md", ".ralph/progress.md", "US-001"))
    assert result.restored, result.message
    assert project.read(".ralph/plan.md") == "- [ ] US-001: One\n- [!] US-002: Two\n"


# ---- the hooks' rollback: three failing test runs in a real loop run ----


PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"


def test_the_hooks_rollback_keeps_the_blocked_mark_the_question_and_the_persons_edit(tmp_path, monkeypatch) -> None:
    for name in ("RALPH_STATE_DIR", "RALPH_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    plan = "- [ ] US-001: Add numbers\n- [ ] US-002: Subtract numbers\n"
    project = Project(tmp_path, plan)
    project.write("test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    project.write("calc.py", "def add(a, b):\n    return a + b\n")
    project.commit("calc")
    question = "- US-001 question for a person: which overflow rule?\n"
    broken = {"write": "calc.py", "text": "def add(a, b):\n    return a - b\n"}
    project.script(runs=[
        [{"append": ".ralph/progress.md", "text": question}, {"mark": "blocked"}],
        [broken, {"append": ".ralph/progress.md", "text": "- US-002: tried a - b\n"},
         {"append": ".ralph/plan.md", "text": "- [ ] US-003: Added by a person\n"},  # the person, mid-iteration
         {"mark": "done"}, {"run": PYTEST}, {"run": PYTEST}, {"run": PYTEST}],
    ], hooks=["bash"])
    done = project.run_loop("--max-iterations", "2")
    assert project.read("calc.py") == "def add(a, b):\n    return a + b\n", done.stdout + done.stderr  # rolled back
    refs = git(project.root, "for-each-ref", "--format=%(refname)", "refs/ralph/rollbacks/").split()
    assert len(refs) == 1, (refs, done.stdout, done.stderr)  # the hooks' (the blocked iteration left the tree as it was)
    assert story_state(project.plan_path, "US-001") == "blocked"
    assert story_state(project.plan_path, "US-002") == "todo"
    assert story_state(project.plan_path, "US-003") == "todo"
    progress = project.read(".ralph/progress.md")
    assert question in progress and "- US-002: tried a - b\n" in progress
    [failure] = [f for f in project.failures() if f["kind"] == "rollback"]
    assert failure["story"] == "US-002" and "keep the loop's and the person's records" in failure["summary"]
    with open(os.path.join(project.agent_dir, "hooks-2.jsonl"), encoding="utf-8") as f:
        said = f.read()
    assert "which keep the loop's and the person's records" in said

