"""The morning report: a pure function of a run's events.jsonl and run.json.

The recorded night (tests/fixtures/report/night/, written by
scripts/record_report_run.py from a real ralph-loop run: a story done, one
rolled back and then done, one blocked by its budget after guard denials,
one the agent blocked, one more done, a failed push hand-off) is fed to the
model, and the numbers are checked against the raw events; then the
renderers, redaction, escaping, and `ralph report`."""
from __future__ import annotations

import builtins
import json
import os
import re
import shutil
import subprocess

import pytest

from ralph.report import markdown, model, page
from tests.conftest import FIXTURES, RALPH

NIGHT = os.path.join(FIXTURES, "report", "night")
LINK = re.compile(r"(?<!\\)\]\(|(?<!\\)!\[")  # a Markdown link or image: `](` or `![` not escaped


def recorded(name: str = "night") -> tuple[list[dict], dict]:
    folder = os.path.join(FIXTURES, "report", name)
    with open(os.path.join(folder, "events.jsonl"), encoding="utf-8") as f:
        events = [json.loads(line) for line in f if line.strip()]
    with open(os.path.join(folder, "run.json"), encoding="utf-8") as f:
        return events, json.load(f)


def kind(events: list[dict], name: str) -> list[dict]:
    return [e for e in events if e.get("event") == name]


def test_the_recorded_night_adds_up() -> None:
    events, state = recorded()
    report = model.build(events, state)
    iterations = kind(events, "iteration")
    finish = kind(events, "finish")[-1]
    glance = report["glance"]
    assert report["run_id"] == kind(events, "run_start")[0]["run_id"] == state["run_id"]
    assert glance["finish_type"] == finish["type"] == "blocked"
    assert glance["iterations"] == len(iterations) == 7
    assert glance["commits"] == sum(1 for e in iterations if e.get("commit")) == 3
    states = [s["state"] for s in finish["stories"]]
    assert (glance["stories_done"], glance["stories_blocked"], glance["stories_left"]) == \
        (states.count("done"), states.count("blocked"), states.count("todo")) == (3, 2, 0)
    assert glance["wall_s"] == finish["elapsed_s"]
    assert glance["agent_s"] == pytest.approx(sum(e["agent_seconds"] for e in iterations), abs=0.01)
    assert glance["branch"] == state["branch"] == "ralph/greeter" and glance["branch_action"] == "created"
    assert glance["previous_branch"] == "main"
    assert glance["handoff"]["mode"] == "push" and glance["handoff"]["ok"] is False
    assert "no remote 'origin'" in glance["handoff"]["error"]
    assert glance["usage"] is None and report["cumulative"]["measure"] is None  # the fake agent streams no usage
    # per story: its iterations' time, in the plan's order
    for story in report["stories"]:
        mine = [e for e in iterations if e["story"] == story["id"]]
        assert story["iterations"] == [e["iteration"] for e in mine]
        assert story["seconds"] == pytest.approx(sum(e["duration_s"] for e in mine), abs=0.01)
    assert [s["id"] for s in report["stories"]] == ["US-001", "US-002", "US-003", "US-004", "US-005"]
    # the timeline: one row per story, one bar per iteration, coloured by result
    lanes = {lane["story"]: [bar["category"] for bar in lane["bars"]] for lane in report["timeline"]["lanes"]}
    assert lanes == {"US-001": ["done"], "US-002": ["rolled_back", "done"], "US-003": ["failed", "failed"],
                     "US-004": ["blocked"], "US-005": ["done"]}
    assert report["timeline"]["bars"] == len(iterations)
    bars = [bar for lane in report["timeline"]["lanes"] for bar in lane["bars"]]
    assert all(0 <= bar["start_s"] <= bar["end_s"] <= report["timeline"]["end_s"] for bar in bars)


def test_each_story_says_what_happened() -> None:
    events, state = recorded()
    report = model.build(events, state)
    rows = {r["iteration"]: r for r in report["iterations"]}
    raw = {e["iteration"]: e for e in kind(events, "iteration")}
    # the failed verify: real pytest output judged, the work saved, the exact restore command
    failed = rows[2]
    assert failed["result"] == "verify_failed" and failed["verify"]["failing_tests"] == ["tests/test_app.py::test_farewell"]
    assert failed["rollback"]["restored"] is True
    assert failed["rollback"]["command"] == f"ralph rollbacks restore {raw[2]['rollback']['id']}"
    # the guard's denials, with the guard's reasons
    pushes = rows[4]["denials"] + rows[5]["denials"]
    assert rows[4]["denial_count"] == 2 and rows[5]["denial_count"] == 1
    assert [d["command"] for d in pushes] == ["git push origin HEAD:main", "git push --force origin HEAD",
                                              "git push origin HEAD:refs/heads/release"]
    assert all(d["reason"] for d in pushes)
    # lifecycle hooks of each iteration
    assert [(h["point"], [a["action"] for a in h["actions"]]) for h in rows[1]["hooks"]] == [
        ("on_task_complete", ["changelog"]), ("post_iteration", ["lint"])]
    assert all(a["status"] == "success" for h in rows[1]["hooks"] for a in h["actions"])
    # the commit's diffstat
    first = report["stories"][0]
    assert first["commit"] == raw[1]["commit"] and first["diffstat"]["files"] == raw[1]["diffstat"]["files"]
    assert "app.py" in [p["path"] for p in first["diffstat"]["paths"]]
    # blocked: by the budget (its story_blocked event), and by the agent (its iteration)
    blocked = {s["id"]: s["blocked"] for s in report["stories"] if s["state"] == "blocked"}
    assert blocked["US-003"]["reason"] == kind(events, "story_blocked")[0]["reason"]
    assert blocked["US-004"]["by"] == "agent" and "iteration 6" in blocked["US-004"]["reason"]


def test_what_to_act_on_comes_first() -> None:
    events, state = recorded()
    items = model.build(events, state)["act_on"]
    assert [(i["group"], i["kind"], i["story"]) for i in items] == [
        ("run", "handoff_failed", None), ("blocked", "blocked", "US-004"), ("stopped", "budget", "US-003")]
    budget = items[2]
    assert budget["reason"] == "used its 2 iteration(s)" and "max_iterations_per_story" in budget["raise"] and "[!]" in budget["then"]
    # a rolled-back story that never got done: its saved work is to act on, with the command
    events = [e for e in events if not (e.get("event") == "iteration" and e.get("iteration") == 3)]
    for e in events:
        if e.get("event") == "finish":
            e["stories"] = [dict(s, state="todo") if s["id"] == "US-002" else s for s in e["stories"]]
    [failed] = [i for i in model.build(events, state)["act_on"] if i["story"] == "US-002"]  # one entry per story
    assert (failed["group"], failed["kind"], failed["result"]) == ("failed", "failed", "verify_failed")
    assert failed["what"] == "the verify command failed in iteration 2 (exit 1: tests/test_app.py::test_farewell)"
    assert failed["command"].startswith("ralph rollbacks restore ")


def test_the_report_is_a_pure_function_of_the_records(monkeypatch) -> None:
    events, state = recorded()
    first = model.build(events, state)

    def no_files(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"the report model opened a file: {args}")

    monkeypatch.setattr(builtins, "open", no_files)
    again = model.build(json.loads(json.dumps(events)), json.loads(json.dumps(state)))
    html, md = page.render(again), markdown.render(again)
    monkeypatch.undo()
    assert again == first and json.loads(json.dumps(first)) == first
    assert html == page.render(first) and md == markdown.render(first)
    # another run in the same events.jsonl does not leak in
    other = [dict(e, run_id="20990101-000000-0000") for e in events]
    assert model.build(events + other, state, first["run_id"]) == first


def test_a_run_without_its_finish_says_so() -> None:
    events, state = recorded()
    cut = [e for e in events if e.get("event") not in ("finish", "handoff")]
    report = model.build(cut, {"run_id": state["run_id"], "status": "running"})
    assert report["glance"]["finish_type"] is None and report["act_on"][0]["kind"] == "finish"
    assert "still running, or it was killed" in report["act_on"][0]["text"]
    assert report["glance"]["iterations"] == 7
    page.render(report), markdown.render(report)  # renders without a finish


def test_markdown_has_the_same_content_and_no_links() -> None:
    events, state = recorded()
    report = model.build(events, state)
    full, short = markdown.render(report), markdown.summary(report)
    for story in report["stories"]:
        assert story["id"] in full and story["id"] in short
    assert report["iterations"][1]["rollback"]["command"] in full
    assert "tests/test\\_app.py::test\\_farewell" in short or "tests/test_app.py::test_farewell" in short
    assert "no remote 'origin'" in short and "Act on first" in short
    assert "US-001  ✓" in full and "US-002  ↺✓" in full  # the timeline as text
    for text in (full, short):
        assert not LINK.search(text) and "<http" not in text
    brief = markdown.brief(report)
    assert len(brief) <= markdown.BRIEF_LIMIT and brief.startswith(f"ralph-loop run {report['run_id']}: blocked")
    assert "US-004 is blocked" in brief and "US-003 was stopped by its budget" in brief


def test_text_from_the_records_is_redacted_and_escaped() -> None:
    events, state = recorded()
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    hostile = "<script>alert(1)</script> [click](http://evil.example) ![x](http://evil.example/i.png)"
    for e in events:
        if e.get("event") == "iteration" and e["iteration"] == 1:
            e["title"] = f"Greet {hostile} token {token}"
        if e.get("event") == "finish":
            e["stories"][0]["title"] = f"Greet {hostile} token {token}"
            e["message"] += f" (GITHUB_TOKEN={token})"
    report = model.build(events, state)
    html, md, data = page.render(report), markdown.render(report), json.dumps(report)
    for text in (html, md, data, markdown.summary(report), markdown.brief(report)):
        assert token not in text and "[REDACTED" in text
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<script>" not in md and "\\[click\\]" in md and not LINK.search(md)


def test_the_page_needs_nothing_from_outside() -> None:
    events, state = recorded()
    html = page.render(model.build(events, state))
    assert html.startswith("<!doctype html>") and "<script" not in html
    for outside in ("http://", "https://", "@import", "url(", "<link", "<img", "<iframe"):
        assert outside not in html, outside
    assert "prefers-color-scheme:dark" in html and "@media print" in html
    assert html.count('class="bar ') == 7


def project_with_records(tmp_path) -> str:
    root = str(tmp_path / "project")
    os.makedirs(os.path.join(root, ".ralph"))
    subprocess.run(["git", "init", "-q", root], check=True)
    for name in ("events.jsonl", "run.json"):
        shutil.copy(os.path.join(NIGHT, name), os.path.join(root, ".ralph", name))
    return root


def test_ralph_report_writes_prints_and_opens(tmp_path) -> None:
    root = project_with_records(tmp_path)
    run_id = recorded()[1]["run_id"]
    made = subprocess.run([RALPH, "report"], cwd=root, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    path = os.path.join(root, made.stdout.strip())
    assert path == os.path.join(root, ".ralph", "runs", run_id, "report.html")
    with open(path, encoding="utf-8") as f:
        assert f"Run {run_id}" in f.read()
    md = subprocess.run([RALPH, "report", run_id[:15], "--format", "md"], cwd=root, capture_output=True, text=True)
    assert md.returncode == 0 and md.stdout.startswith(f"## ralph-loop run {run_id}: blocked"), md.stderr
    data = subprocess.run([RALPH, "report", "--format", "json", "-C", root], capture_output=True, text=True)
    assert json.loads(data.stdout)["glance"]["iterations"] == 7
    missing = subprocess.run([RALPH, "report", "19990101"], cwd=root, capture_output=True, text=True)
    assert missing.returncode == 1 and "no run '19990101'" in missing.stderr and run_id in missing.stderr
    opened = tmp_path / "opened"
    browser = tmp_path / "browser"
    browser.write_text(f"#!/bin/sh\necho \"$1\" > {opened}\n")
    browser.chmod(0o755)
    shown = subprocess.run([RALPH, "report", "--open"], cwd=root, capture_output=True, text=True,
                           env=dict(os.environ, BROWSER=str(browser)))
    assert shown.returncode == 0, shown.stderr
    assert opened.read_text().strip() == "file://" + path


def test_a_run_id_that_is_a_path_is_refused(tmp_path) -> None:
    root = project_with_records(tmp_path)
    events, state = recorded()
    with open(os.path.join(root, ".ralph", "events.jsonl"), "a", encoding="utf-8") as f:
        f.write(json.dumps({"event": "run_start", "run_id": "../../escape", "at": "2026-01-01T00:00:00Z"}) + "\n")
    refused = subprocess.run([RALPH, "report", "../../escape"], cwd=root, capture_output=True, text=True)
    assert refused.returncode == 1 and "is not a run id" in refused.stderr
    assert not os.path.exists(os.path.join(root, "escape"))


def test_a_pipeline_run_shows_its_plan_iterations_apart_from_the_stories(tmp_path) -> None:
    from tests.loop_support import Project

    config = ('[sandbox]\nenabled = false\n[[loop.stages]]\nname = "plan"\nmode = "plan"\nmax_iterations = 2\n'
              '[[loop.stages]]\nname = "build"\nmode = "build"\n')
    p = Project(tmp_path, None, config=config)
    plan = "- [ ] US-001: A\n- [ ] US-002: B\n"
    p.script(runs=[[{"write": ".ralph/plan.md", "text": plan}], [{"print": "the plan is fine"}]],
             default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    result = p.run_loop()
    assert result.returncode == 0, result.stdout + result.stderr
    with open(os.path.join(p.root, ".ralph", "events.jsonl"), encoding="utf-8") as f:
        events = [json.loads(line) for line in f]
    report = model.build(events, p.run_state())
    assert [s["id"] for s in report["stories"]] == ["US-001", "US-002"]
    assert report["glance"]["stories_done"] == 2 and report["glance"]["stories_left"] == 0
    lanes = {lane["story"]: len(lane["bars"]) for lane in report["timeline"]["lanes"]}
    assert lanes == {"PLAN": 2, "US-001": 1, "US-002": 1}
    assert report["stages"] == ["plan", "build"] and report["glance"]["iterations"] == 4
