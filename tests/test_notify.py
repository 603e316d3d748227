"""`ralph init --notify slack|discord|ntfy`: the preset it adds to ralph.toml
posts the run's report in a few lines when a real ralph-loop run ends, here
to a loopback server standing in for the service."""
from __future__ import annotations

import os
import subprocess

import pytest

from ralph.report.markdown import BRIEF_LIMIT
from tests.conftest import RALPH
from tests.loop_support import Project
from tests.test_webhook import endpoint  # noqa: F401 - fixture

PLAN = "# Plan\n\n- [ ] US-001: Add a task\n- [ ] US-002: List tasks\n"
DO_STORY = [{"append": "work.txt", "text": "one more step\n"}, {"mark": "done"}]


@pytest.mark.parametrize("service", ["slack", "discord", "ntfy"])
def test_the_preset_posts_the_report_when_the_run_ends(tmp_path, endpoint, service) -> None:  # noqa: F811
    p = Project(tmp_path, PLAN)
    made = subprocess.run([RALPH, "init", "--notify", service], cwd=p.root, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert f"added    the {service} notification to ralph.toml" in made.stdout
    again = subprocess.run([RALPH, "init", "--notify", service], cwd=p.root, capture_output=True, text=True)
    assert f"kept     ralph.toml (it has the {service} notification already)" in again.stdout
    config = p.read("ralph.toml")
    assert config.count(f'name = "notify-{service}"') == 1
    server = endpoint()
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    if service == "ntfy":  # one's own ntfy server: its root URL, the topic from the environment
        p.write("ralph.toml", config.replace('url = "https://ntfy.sh"', f'url = "{server.url}"'))
        env["NTFY_TOPIC"] = "ralph-test-topic"
    else:
        env[f"{service.upper()}_WEBHOOK_URL"] = server.url + "/hook/T000/B000"
    p.write("ralph.toml", p.read("ralph.toml") + "\n[sandbox]\nenabled = false\n")
    p.commit("ralph init")
    p.script(default=DO_STORY)
    done = p.run_loop(env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(server.requests) == 1, done.stdout
    body = server.bodies()[0]
    run_id = p.events("run_start")[0]["run_id"]
    report = os.path.join(p.root, ".ralph", "runs", run_id, "report.html")
    text = {"slack": lambda b: b["text"], "discord": lambda b: b["content"], "ntfy": lambda b: b["message"]}[service](body)
    assert text.startswith(f"ralph-loop run {run_id}: complete (every story is done: 2/2 stories done)")
    assert "• Stories: 2 done, 0 blocked, 0 left" in text and "• Branch: ralph/plan (new, from main)" in text
    if service == "slack":
        assert text.endswith(f"Report: {report}")
    if service == "discord":
        assert body["username"] == "ralph-loop" and len(text) <= BRIEF_LIMIT
    if service == "ntfy":
        assert (body["topic"], body["title"], body["tags"]) == ("ralph-test-topic", "ralph-loop: complete", ["robot"])
