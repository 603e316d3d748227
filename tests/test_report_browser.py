"""The report as a person sees it: the recorded night's report.html, written
by `ralph report`, opened in Debian's headless chromium (tests/browser_support.py)
with JavaScript off, in a light and a dark browser: no console error, no
request but the page itself, the charts laid out with a bar per iteration
and per story, a screenshot, a printable PDF."""
from __future__ import annotations

import os
import subprocess

from tests.browser_support import Browser
from tests.conftest import RALPH
from tests.test_report import project_with_records, recorded

PNG = b"\x89PNG\r\n\x1a\n"


def test_the_report_in_a_real_browser(tmp_path) -> None:
    events, state = recorded()
    root = project_with_records(tmp_path)
    made = subprocess.run([RALPH, "report"], cwd=root, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    url = "file://" + os.path.join(root, made.stdout.strip())
    iterations = [e for e in events if e.get("event") == "iteration"]
    stories = {e["story"] for e in iterations}
    backgrounds = {}
    with Browser() as browser:
        for scheme in ("light", "dark"):
            tab = browser.open(url, width=1100, dark=scheme == "dark", scripts=False)
            assert tab.console_errors() == []
            assert tab.requests() == [url]  # self-contained: no CDN, font, script or image
            # the timeline: a bar per iteration, each laid out with a width, in its story's row
            assert tab.count("#timeline-chart rect.bar") == len(iterations) == 7
            assert all(width >= 3 and height > 10 for width, height in tab.boxes("#timeline-chart rect.bar"))
            assert sorted(tab.attribute("#timeline-chart g.lane-row", "data-story")) == sorted(stories)
            assert tab.count('#timeline-chart g.lane-row[data-story="US-002"] rect.bar') == 2
            assert tab.attribute('#timeline-chart g.lane-row[data-story="US-002"] rect.bar', "data-category") == ["rolled_back", "done"]
            # time per story: one bar per story that ran
            assert tab.count("#story-time-chart rect.story-bar") == len(stories)
            assert all(width > 0 for width, _ in tab.boxes("#story-time-chart rect.story-bar"))
            # what to act on is the first section, and names the failed hand-off and the blocked stories
            act = tab.text("#act")
            assert "hand-off (push) failed" in act and "Blocked by the agent" in act and "Stopped by its budget" in act
            backgrounds[scheme] = tab.computed("body", "background-color")
            shot = tab.screenshot(str(tmp_path / f"report-{scheme}.png"))
            assert shot.startswith(PNG) and int.from_bytes(shot[16:20], "big") == 1100
            assert int.from_bytes(shot[20:24], "big") > 1500  # the whole page, not the window
        assert tab.pdf().startswith(b"%PDF")
    assert backgrounds["light"] == "rgb(255, 255, 255)" and backgrounds["dark"] != backgrounds["light"]
