"""The report's numbers at any plan size, at the finish, mid-run, after
SIGTERM and after SIGKILL: real ralph-loop runs with tests/fake_agent.py,
read back as `ralph report` reads them (ralph.report.files.load), and the
same counts in the JSON, the Markdown and the page."""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

from ralph.report import files, markdown, page
from ralph.report.formats import stories_line
from tests.conftest import RALPH
from tests.loop_support import Project

DO_STORY = [{"append": "work.txt", "text": "one more step\n"}, {"mark": "done"}]
CALM = "Nothing needs you"
POLLS = 1200  # a hang guard, not a speed check: 0.05 s each


def plan(count: int) -> str:
    return "# Plan\n\n" + "".join(f"- [ ] US-{n:03d}: Story number {n}\n" for n in range(1, count + 1))


def report_of(p: Project) -> dict:
    return files.load(os.path.join(p.root, ".ralph"))


def counts(report: dict) -> tuple[int, int, int, int]:
    glance = report["glance"]
    return glance["stories_total"], glance["stories_done"], glance["stories_blocked"], glance["stories_left"]


def assert_every_format_says(report: dict, total: int, done: int, left: int) -> None:
    """The JSON's counts, and the same line in the Markdown and on the page."""
    assert counts(report) == (total, done, 0, left)
    assert len(report["stories"]) == total
    line = stories_line(report["glance"])
    assert f"{left} left (of {total};" in line
    assert line in markdown.render(report) and line in markdown.summary(report)
    assert line in page.render(report)
    assert json.loads(json.dumps(report))["glance"]["stories_total"] == total


def wait_for_file(path: str, proc: subprocess.Popen) -> None:
    for _ in range(POLLS):
        if os.path.exists(path) or proc.poll() is not None:
            break
        time.sleep(0.05)
    assert os.path.exists(path), proc.communicate(timeout=30)


@pytest.mark.parametrize("size", [1, 50, 51, 80, 500])
def test_the_counts_hold_at_any_plan_size(tmp_path, size: int) -> None:
    p = Project(tmp_path, plan(size))
    p.script(default=DO_STORY)
    result = p.run_loop("--max-iterations", "1")
    finish = p.events("finish")[-1]
    assert len(finish["stories"]) == size  # the record is whole: no "… N more" entry
    assert len(p.events("run_start")[-1]["stories"]) == size
    report = report_of(p)
    assert_every_format_says(report, size, 1, size - 1)
    html = page.render(report)
    if size == 1:
        assert result.returncode == 0 and report["glance"]["finish_type"] == "complete"
        assert report["act_on"] == [] and CALM in html
    else:
        assert result.returncode == 3 and report["glance"]["finish_type"] == "max_iterations", result.stdout + result.stderr
        left = [item for item in report["act_on"] if item["kind"] == "stories_left"]
        assert len(left) == 1 and left[0]["text"].startswith(f"{size - 1} of {size} stories are not done")
        assert "--max-iterations" in left[0]["text"]
        assert CALM not in html
    # the command line gives the same numbers
    data = subprocess.run([RALPH, "report", "--format", "json", "-C", p.root], capture_output=True, text=True)
    assert data.returncode == 0, data.stderr
    assert counts(json.loads(data.stdout)) == counts(report)


def test_a_report_made_mid_run_counts_the_whole_plan(tmp_path) -> None:
    p = Project(tmp_path, plan(90))
    pid_file = os.path.join(p.agent_dir, "agent.pid")
    p.script(runs=[DO_STORY, DO_STORY, [{"pid_file": pid_file}, {"sleep": 120}]])
    proc = p.start_loop()
    try:
        wait_for_file(pid_file, proc)
        mid = report_of(p)
        assert_every_format_says(mid, 90, 2, 88)
        assert mid["glance"]["finish_type"] is None
        kinds = [item["kind"] for item in mid["act_on"]]
        assert kinds == ["finish", "stories_left"] and CALM not in page.render(mid)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, out + err
    stopped = report_of(p)
    assert stopped["glance"]["finish_type"] == "manual"
    assert_every_format_says(stopped, 90, 2, 88)
    left = [item for item in stopped["act_on"] if item["kind"] == "stories_left"]
    assert len(left) == 1 and "88 of 90 stories are not done (stopped by SIGTERM)" in left[0]["text"]
    assert "US-003" in left[0]["text"] and "run ralph-loop again" in left[0]["text"]
    html = page.render(stopped)
    assert CALM not in html and "88 of 90 stories are not done" in html
    assert "88 of 90 stories are not done" in markdown.summary(stopped)


def test_a_sigkilled_run_still_counts_the_whole_plan(tmp_path) -> None:
    p = Project(tmp_path, plan(62))
    pid_file = os.path.join(p.agent_dir, "agent.pid")
    p.script(runs=[DO_STORY, [{"pid_file": pid_file}, {"sleep": 120}]])
    proc = p.start_loop()
    try:
        wait_for_file(pid_file, proc)
        proc.kill()  # SIGKILL: no finish is recorded
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        try:
            with open(pid_file) as f:
                os.kill(int(f.read()), signal.SIGKILL)  # the orphaned agent, when it outlived the loop
        except (OSError, ValueError):
            pass
    assert p.events("finish") == []
    killed = report_of(p)
    assert killed["glance"]["finish_type"] is None
    assert_every_format_says(killed, 62, 1, 61)
    assert [item["kind"] for item in killed["act_on"]] == ["finish", "stories_left"]
    assert CALM not in page.render(killed)


# ---- "Act on first": one entry per story that needs the person ----

ACT_PLAN = ("# Plan\n\n- [ ] US-001: Pick a locale\n- [ ] US-002: Greet\n- [ ] US-003: Say goodbye\n"
            "- [ ] US-004: Docs\n- [ ] US-005: Release\n")
CHECK = 'echo "checking ok.txt"\ntest -f ok.txt || { echo "FAILED: ok.txt is missing"; exit 1; }\n'
# longer than the records' cut of a plain string (2,000 characters): the question is kept whole
QUESTION = "Should the greetings be in French or German?\nThe spec says both.\n" + ("Notes: both locales were asked for. " * 80).rstrip()


def report_blocked_step() -> dict:
    """The agent calls its report_blocked tool (ralph.mcp), as the client's MCP server would run it."""
    code = ("from ralph.mcp.context import find; from ralph.mcp.report_blocked import report_blocked; "
            f"print(report_blocked(find(), 'US-001', 'The spec names two locales.', {QUESTION!r}).text)")
    return {"run": f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"}


def loop_with_check(tmp_path, plan_text: str, config: str = "") -> tuple[Project, str]:
    p = Project(tmp_path, plan_text, config=config + "\n[sandbox]\nenabled = false\n")
    p.write("check.sh", CHECK)
    p.commit("the check")
    return p, f"{p.claude_stand_in()} -p"


def section_of(html: str) -> str:
    return html[html.index('<section id="act">'):html.index("</section>", html.index('<section id="act">'))]


def article(section: str, story: str) -> str:
    return section.split(f'data-story="{story}">')[1].split("</article>")[0]


def test_act_on_first_has_one_entry_per_story_grouped_blocked_failed_stopped(tmp_path) -> None:
    p, agent = loop_with_check(tmp_path, ACT_PLAN)
    # 1: US-001 blocked with a question; 2: US-002 done (its commit keeps US-001's [!]);
    # 3: US-003 fails verify; then the run's iteration cap: US-004 and US-005 left
    passing = [{"write": "ok.txt", "text": "ok\n"}, {"mark": "done"}]
    failing = [{"run": "rm ok.txt"}, {"mark": "done"}]
    p.script(runs=[[{"write": "locale.txt", "text": "fr?"}, report_blocked_step()], passing, failing])
    result = p.run_loop("--verify", "sh check.sh", "--max-iterations", "3", agent=agent)
    assert result.returncode == 3, result.stdout + result.stderr
    report = report_of(p)
    items = report["act_on"]
    assert [(i["group"], i["kind"], i["story"]) for i in items] == [
        ("blocked", "blocked", "US-001"), ("failed", "failed", "US-003"), ("stopped", "stories_left", None)]
    blocked, failed, left = items
    # blocked: the agent's question as it wrote it, how to answer, its saved work
    assert blocked["question"] == QUESTION and blocked["reason"] == "The spec names two locales." and blocked["by"] == "agent"
    assert "[!] back to [ ]" in blocked["answer"] and ".ralph/plan.md" in blocked["answer"]
    assert blocked["command"].startswith("ralph rollbacks restore ")
    # failed: what failed, the end of the verify output, one restore command
    assert failed["what"] == "the verify command failed in iteration 3 (exit 1)"
    assert failed["excerpt"] == "checking ok.txt\nFAILED: ok.txt is missing"
    [rollback] = [e["rollback"]["id"] for e in p.events("iteration") if e["story"] == "US-003" and e.get("rollback")]
    assert failed["command"] == f"ralph rollbacks restore {rollback}"
    assert left["stories"] == ["US-004", "US-005"] and left["text"].startswith("2 more of 5 stories are not done")
    assert "--max-iterations" in left["text"]
    # the page: blocked and failed differ in words and shape, not colour alone
    html = page.render(report)
    section = section_of(html)
    asks, broke = article(section, "US-001"), article(section, "US-003")
    assert "needs your answer" in asks and '<blockquote class="question">' in asks and "How to answer:" in asks
    assert "The spec says both." in asks and "<pre" not in asks and "What failed:" not in asks
    assert ">failed<" in broke and '<pre class="excerpt">' in broke and "What failed:" in broke
    assert "<blockquote" not in broke and "How to answer:" not in broke
    assert section.count("ralph rollbacks restore") == 2  # one per story with saved work
    assert CALM not in html
    # the Markdown: the question quoted line by line, the output as code
    text = markdown.summary(report)
    assert "> Should the greetings be in French or German?\n  > The spec says both." in text
    assert "```text\n  checking ok.txt\n  FAILED: ok.txt is missing\n  ```" in text
    assert "#### Blocked: the agent asks you (1)" in text and "#### Failed: see what broke (1)" in text
    assert "#### Stopped by a budget or a limit (1)" in text


def test_a_story_stopped_by_its_budget_says_what_to_raise_and_what_failed_last(tmp_path) -> None:
    p, agent = loop_with_check(tmp_path, "# Plan\n\n- [ ] US-001: Greet\n- [ ] US-002: Say goodbye\n",
                               "[loop]\nmax_iterations_per_story = 1\n")
    p.script(runs=[DO_STORY, [{"write": "ok.txt", "text": "ok\n"}, {"mark": "done"}]])
    result = p.run_loop("--verify", "sh check.sh", agent=agent)
    assert result.returncode == 4, result.stdout + result.stderr  # finish blocked: US-001 used its budget
    report = report_of(p)
    [budget] = report["act_on"]
    assert (budget["group"], budget["kind"], budget["story"]) == ("stopped", "budget", "US-001")
    assert budget["reason"] == "used its 1 iteration(s)" and budget["raise"] == "[loop] max_iterations_per_story in ralph.toml"
    assert "[!] back to [ ]" in budget["then"]
    assert budget["what"] == "the verify command failed in iteration 1 (exit 1)" and "ok.txt is missing" in budget["excerpt"]
    assert budget["command"].startswith("ralph rollbacks restore ")
    stopped = article(section_of(page.render(report)), "US-001")
    assert ">stopped<" in stopped and "What to raise:" in stopped and "max_iterations_per_story" in stopped
    assert '<pre class="excerpt">' in stopped
    assert "- ⏸ **US-001** (Greet) was stopped by its budget: it used its 1 iteration(s)." in markdown.summary(report)
