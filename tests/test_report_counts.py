"""The report's numbers at any plan size, at the finish, mid-run, after
SIGTERM and after SIGKILL: real ralph-loop runs with tests/fake_agent.py,
read back as `ralph report` reads them (ralph.report.files.load), and the
same counts in the JSON, the Markdown and the page."""
from __future__ import annotations

import json
import os
import signal
import subprocess
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
