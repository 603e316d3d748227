"""The overnight run: usage limits waited out, transient errors and hangs
retried without counting, cost and token budgets, usage recorded and carried
over, `ralph status` on all of it.

The loop runs in this process (ralph.loop.runner.run_loop) with a fake clock,
so a wait of hours takes no time; its agent is tests/fake_agent.py replaying
streams the real client printed (tests/fixtures/stream/)."""
from __future__ import annotations

import io
import json
import os
import signal
import time

import pytest

from ralph.commands import status
from ralph.commands.loop import find_plan, load_settings, parse_args
from ralph.loop import runner, waits
from ralph.loop.display import Display

from .loop_support import AGENT_COMMAND, GIT_ID, Project, gone

PLAN = "- [ ] US-001: First\n- [ ] US-002: Second\n"
HERE = os.path.dirname(os.path.abspath(__file__))
STREAMS = os.path.join(HERE, "fixtures", "stream")
SUCCESS_COST = 0.0048  # tools_success.jsonl: total_cost_usd (6 turns, 600 input + 120 output tokens)


def stream_resets_at(name: str) -> float:
    with open(os.path.join(STREAMS, name + ".jsonl"), encoding="utf-8") as f:
        for line in f:
            message = json.loads(line)
            if message.get("type") == "rate_limit_event":
                return float(message["rate_limit_info"]["resetsAt"])
    raise AssertionError(name)


RESETS_AT = stream_resets_at("subscription_429_reset")


class FakeClock(waits.Clock):
    """Wall time that moves only when the loop sleeps."""

    def __init__(self, now: float, on_sleep=None) -> None:
        self.time = now
        self.slept = 0.0
        self.sleeps = 0
        self.on_sleep = on_sleep

    def now(self) -> float:
        return self.time

    def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.sleeps += 1
        self.slept += seconds
        self.time += seconds
        if self.on_sleep is not None:
            self.on_sleep(self)


def run_here(p: Project, monkeypatch, *args: str, clock: FakeClock | None = None, agent: str = AGENT_COMMAND) -> tuple[int, str]:
    """ralph-loop in this process, in the project, with the fake clock."""
    monkeypatch.chdir(p.root)
    for name in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {**GIT_ID, "FAKE_AGENT_SCRIPT": os.path.join(p.agent_dir, "script.json")}.items():
        monkeypatch.setenv(name, value)
    settings = load_settings(parse_args([*args, "--agent", agent]))
    out = io.StringIO()
    code = runner.run_loop(settings, find_plan(settings), Display(out, tty=False), clock=clock or FakeClock(time.time()))
    return code, out.getvalue()


def work(story: str) -> list[dict]:
    """A story done by an agent whose stream is a real successful run."""
    return [{"write": f"{story}.txt", "text": story}, {"mark": "done"}, {"replay": "tools_success"}]


def config(**keys: object) -> str:
    values = {"no_progress_limit": 1, "max_iterations_per_story": 1, **keys}
    lines = ["[loop]"] + [f"{key} = {json.dumps(value)}" for key, value in values.items()]
    return "\n".join(lines) + "\n\n[sandbox]\nenabled = false\n"


def project(tmp_path, **keys: object) -> Project:
    return Project(tmp_path, PLAN, config=config(**keys))


def iterations(p: Project) -> list[tuple]:
    return [(e["story"], e["result"], e.get("attempt_counted", True)) for e in p.events("iteration")]


def test_a_usage_limit_is_waited_out_and_the_same_story_runs_again(tmp_path, monkeypatch) -> None:
    p = project(tmp_path)
    p.script(runs=[[{"replay": "subscription_429_reset"}], work("US-001"), work("US-002")])
    clock = FakeClock(RESETS_AT - 3600)
    code, out = run_here(p, monkeypatch, clock=clock)
    assert code == 0, out
    # not an attempt, not "no progress": max_iterations_per_story = 1 and no_progress_limit = 1 still complete
    assert iterations(p) == [("US-001", "usage_limit", False), ("US-001", "done", True), ("US-002", "done", True)]
    assert not p.events("story_blocked")
    [wait] = p.events("wait")
    assert wait["reason"] == "usage_limit" and wait["story"] == "US-001" and wait["iteration"] == 1 and wait["attempt"] == 1
    assert wait["seconds"] == 3600 + waits.RESET_MARGIN_SECONDS == clock.slept
    assert wait["until"] == waits.iso(RESETS_AT + waits.RESET_MARGIN_SECONDS) and wait["started"] == waits.iso(RESETS_AT - 3600)
    assert "5-hour limit" in wait["detail"]
    assert "usage limit: You've hit your 5-hour limit" in out and "then US-001 again (not counted)" in out
    # the first prompt of the story again: attempt 1, as if the limit had not been hit
    assert "US-001" in p.prompt(2)
    first = p.events("iteration")[0]
    assert first["usage"]["api_error_status"] == 429 and first["usage"]["is_error"] is True
    state = p.run_state()
    assert state["waiting"] is None and state["finish"]["type"] == "complete"
    assert state["usage"]["cost_usd"] == pytest.approx(2 * SUCCESS_COST)
    assert state["usage"]["stories"]["US-001"]["iterations"] == 2 and state["usage"]["turns"] == 13


@pytest.fixture
def kolkata(monkeypatch):
    """A local time zone that is not UTC (and has no daylight saving time)."""
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_the_wait_says_every_time_one_way_local_with_its_zone(tmp_path, monkeypatch, kolkata) -> None:
    p = project(tmp_path)
    p.script(runs=[[{"replay": "subscription_429_reset"}], work("US-001"), work("US-002")])
    code, out = run_here(p, monkeypatch, clock=FakeClock(RESETS_AT - 3600))
    assert code == 0, out
    [wait] = p.events("wait")
    assert "resets 3:59pm (UTC)" in wait["detail"]  # the record keeps the client's words
    assert wait["until"] == waits.iso(RESETS_AT + waits.RESET_MARGIN_SECONDS) and wait["until"].endswith("Z")
    resets = time.strftime("%H:%M", time.localtime(RESETS_AT))
    until = time.strftime("%H:%M", time.localtime(RESETS_AT + waits.RESET_MARGIN_SECONDS))
    assert time.localtime(RESETS_AT).tm_zone == "IST" and resets != time.strftime("%H:%M", time.gmtime(RESETS_AT))
    line = next(line for line in out.splitlines() if "usage limit:" in line)
    assert f"resets {resets} IST; waiting 1h00m until {until} IST, then US-001 again" in line, line
    assert "pm" not in line and "(UTC)" not in line


def test_without_a_reset_time_the_wait_doubles_until_max_wait_then_rate_limited(tmp_path, monkeypatch) -> None:
    p = project(tmp_path, retry_backoff_seconds=60, max_wait_minutes=5)
    p.script(default=[{"replay": "api_key_429"}])
    clock = FakeClock(time.time())
    code, out = run_here(p, monkeypatch, clock=clock)
    assert code == 8, out
    assert [w["seconds"] for w in p.events("wait")] == [60, 120, 120]  # 300 s in all, then no more
    assert [w["attempt"] for w in p.events("wait")] == [1, 2, 3]
    assert all(w["until"] is not None for w in p.events("wait"))
    assert clock.slept == 300 and p.invocations() == 4
    assert all(counted is False for _story, _result, counted in iterations(p))
    assert not p.events("story_blocked")
    finish = p.run_state()["finish"]
    assert finish["type"] == "rate_limited" and finish["exit_code"] == 8
    assert "max_wait_minutes = 5" in finish["message"] and "429" in finish["message"]
    assert p.read(".ralph/plan.md") == PLAN  # nothing blocked: the next run starts where this one stopped


def test_a_reset_past_max_wait_finishes_at_once(tmp_path, monkeypatch) -> None:
    p = project(tmp_path)  # max_wait_minutes = 360
    p.script(default=[{"replay": "subscription_429_reset"}])
    clock = FakeClock(RESETS_AT - 7 * 3600)
    code, out = run_here(p, monkeypatch, clock=clock)
    assert code == 8, out
    assert p.invocations() == 1 and clock.slept == 0 and not p.events("wait")
    message = p.run_state()["finish"]["message"]
    assert f"resets at {time.strftime('%H:%M %Z', time.localtime(RESETS_AT))} (7h00m from now)" in message, message
    assert "(UTC)" not in message


def test_transient_errors_are_retried_with_backoff_uncounted(tmp_path, monkeypatch) -> None:
    p = project(tmp_path, retry_backoff_seconds=30)
    p.script(runs=[[{"replay": "overloaded_529"}], [{"replay": "connection_reset"}], work("US-001"), work("US-002")])
    clock = FakeClock(time.time())
    code, out = run_here(p, monkeypatch, clock=clock)
    assert code == 0, out
    assert iterations(p)[:3] == [("US-001", "transient_error", False), ("US-001", "transient_error", False), ("US-001", "done", True)]
    assert [(w["reason"], w["seconds"], w["attempt"]) for w in p.events("wait")] == [("transient", 30, 1), ("transient", 60, 2)]
    assert "transient API error, retry 1/5" in out


def test_transient_errors_past_the_limit_count_as_failures(tmp_path, monkeypatch) -> None:
    p = project(tmp_path, retry_backoff_seconds=1, max_transient_retries=1, no_progress_limit=0)
    p.script(default=[{"replay": "server_500"}])
    code, out = run_here(p, monkeypatch)
    assert code == 4, out  # both stories blocked after one counted failure each
    assert iterations(p) == [("US-001", "transient_error", False), ("US-001", "transient_error", True),
                             ("US-002", "transient_error", False), ("US-002", "transient_error", True)]
    assert [e["by"] for e in p.events("story_blocked")] == ["budget", "budget"]
    assert [f["kind"] for f in p.failures() if f["story"] == "US-001"] == ["transient", "transient", "budget"]


def test_a_hung_agent_is_ended_and_retried_once(tmp_path, monkeypatch) -> None:
    p = project(tmp_path, idle_timeout_seconds=5)
    pid_file = os.path.join(p.agent_dir, "hung.pid")
    p.script(runs=[[{"pid_file": pid_file}, {"sleep": 600}], work("US-001"), work("US-002")])
    code, out = run_here(p, monkeypatch)
    assert code == 0, out
    assert iterations(p)[:2] == [("US-001", "hung", False), ("US-001", "done", True)]
    [wait] = p.events("wait")
    assert wait["reason"] == "hung" and wait["seconds"] == 0 and wait["until"] is None
    assert p.events("iteration")[0]["agent_idle_timed_out"] is True
    with open(pid_file) as f:
        assert gone(int(f.read()))
    assert "the agent printed nothing for 5s" in out
    assert [f["kind"] for f in p.failures()] == ["hung"]


def test_a_second_hang_in_a_row_counts(tmp_path, monkeypatch) -> None:
    p = project(tmp_path, idle_timeout_seconds=5, on_story_exhausted="stop", no_progress_limit=0)
    p.script(default=[{"sleep": 600}])
    code, out = run_here(p, monkeypatch)
    assert code == 4, out
    assert iterations(p) == [("US-001", "hung", False), ("US-001", "hung", True)]


def test_ctrl_c_during_a_wait_stops_cleanly(tmp_path, monkeypatch) -> None:
    p = project(tmp_path)
    p.script(default=[{"replay": "subscription_429_reset"}])

    def interrupt(clock: FakeClock) -> None:
        if clock.sleeps == 5:
            os.kill(os.getpid(), signal.SIGINT)

    clock = FakeClock(RESETS_AT - 3600, on_sleep=interrupt)
    code, out = run_here(p, monkeypatch, clock=clock)
    assert code == 130, out
    assert clock.sleeps == 5 and p.invocations() == 1
    state = p.run_state()
    assert state["waiting"] is None and state["finish"]["type"] == "manual"
    assert [e["event"] for e in p.events()][-2:] == ["wait", "finish"]


def test_run_json_says_what_the_run_waits_for(tmp_path, monkeypatch) -> None:
    p = project(tmp_path)
    p.script(runs=[[{"replay": "subscription_429_reset"}], work("US-001"), work("US-002")])
    seen = []

    def look(clock: FakeClock) -> None:
        if clock.sleeps == 1:
            seen.append(p.run_state())
            seen.append(status.render(status.collect(p.root, None, 5)))

    run_here(p, monkeypatch, clock=FakeClock(RESETS_AT - 3600, on_sleep=look))
    state, text = seen
    until = waits.iso(RESETS_AT + waits.RESET_MARGIN_SECONDS)
    assert state["waiting"] == {"reason": "usage_limit", "until": until, "since": waits.iso(RESETS_AT - 3600)}
    clock = time.strftime("%H:%M", time.localtime(RESETS_AT + waits.RESET_MARGIN_SECONDS))
    assert "waiting for the usage limit until " in text and clock in text, text
    assert "#1 US-001: usage_limit" in text and "(not counted)" in text


def test_the_usage_limit_hook_point_gets_the_reset_time(tmp_path, monkeypatch) -> None:
    p = project(tmp_path)
    out_file = os.path.join(p.agent_dir, "hook.txt")
    p.write("ralph.toml", config() + f'\n[[hooks.usage_limit]]\ncommand = "echo $RALPH_RESET_AT $RALPH_WAIT_SECONDS $RALPH_REASON > {out_file}"\n')
    p.commit("a usage_limit hook")
    p.script(runs=[[{"replay": "subscription_429_reset"}], work("US-001"), work("US-002")])
    code, out = run_here(p, monkeypatch, clock=FakeClock(RESETS_AT - 3600))
    assert code == 0, out
    with open(out_file, encoding="utf-8") as f:
        reset, seconds, reason = f.read().strip().split(" ", 2)
    assert reset == waits.iso(RESETS_AT) and float(seconds) == 3610 and "5-hour limit" in reason


def test_a_cost_budget_ends_the_run_after_the_iteration_that_spent_it(tmp_path, monkeypatch) -> None:
    p = Project(tmp_path, PLAN + "- [ ] US-003: Third\n", config=config(max_cost_usd=0.006))
    claude = p.claude_stand_in()
    p.script(runs=[work("US-001"), work("US-002"), work("US-003")])
    code, out = run_here(p, monkeypatch, agent=f"{claude} -p --dangerously-skip-permissions")
    assert code == 7, out
    assert iterations(p) == [("US-001", "done", True), ("US-002", "done", True)]
    state = p.run_state()
    assert state["finish"]["type"] == "budget" and "max_cost_usd is $0.0060" in state["finish"]["message"]
    assert state["usage"]["cost_usd"] == pytest.approx(2 * SUCCESS_COST)
    # Claude Code gets its stream flags and what is left of the budget, each iteration
    # (and the agent tools' --mcp-config, tested in test_agent_tools; the --settings that turns
    # skills' shell lines off, tested in test_skill_shell)
    argv = p.argv(1)
    settings = argv.index("--settings")
    flags = [word for word in argv[:settings] + argv[settings + 2:] if not word.startswith("--mcp-config=")]
    assert flags == ["--max-budget-usd", "0.006", "--output-format", "stream-json", "--verbose", "-p", "--dangerously-skip-permissions"]
    assert p.argv(2)[p.argv(2).index("--max-budget-usd") + 1] == "0.0012"
    assert "iteration 1: US-001: done" in out and "6 turn(s) · 720 tokens · $0.0048" in out


def test_a_run_started_again_after_a_budget_stop_says_what_was_spent_before_and_what_is_left(tmp_path, monkeypatch) -> None:
    p = Project(tmp_path, PLAN + "- [ ] US-003: Third\n", config=config(max_cost_usd=0.006))
    p.script(runs=[work("US-001"), work("US-002"), work("US-003")])
    code, out = run_here(p, monkeypatch)
    assert code == 7 and "earlier runs" not in out, out
    # again, the same budget: it stops before any agent runs, and says why
    code, out = run_here(p, monkeypatch)
    assert code == 7 and p.invocations() == 2, out
    assert ("budget: earlier runs that did not complete spent $0.0096, 1.4k tokens; it counts toward this run's budgets "
            "until a run completes; left: $0.0000 of max_cost_usd $0.0060; nothing left, so the run stops at once: "
            "raise --max-cost-usd to go on") in out, out
    message = p.run_state()["finish"]["message"]
    assert message == ("the agents cost $0.0096 (the client's estimate from list prices: $0.0096 in earlier runs, which count "
                       "until a run completes, $0.0000 in this one), max_cost_usd is $0.0060; raise it (--max-cost-usd) to go on")
    # a raised budget: what is left of it, and the run goes on
    code, out = run_here(p, monkeypatch, "--max-cost-usd", "0.02")
    assert code == 0 and p.invocations() == 3, out
    assert "spent $0.0096, 1.4k tokens; it counts toward this run's budgets until a run completes; left: $0.0104 of max_cost_usd $0.0200\n" in out, out


def test_a_story_cost_budget_blocks_the_story(tmp_path, monkeypatch) -> None:
    p = project(tmp_path, max_cost_usd_per_story=0.004, max_iterations_per_story=0, no_progress_limit=0)
    claude = p.claude_stand_in()
    p.script(runs=[[{"replay": "tools_success"}], work("US-002")])
    code, out = run_here(p, monkeypatch, agent=f"{claude} -p")
    assert code == 4, out  # US-002 done, US-001 blocked
    [blocked] = p.events("story_blocked")
    assert blocked["story"] == "US-001" and blocked["by"] == "budget" and "cost budget" in blocked["reason"]
    assert p.read(".ralph/plan.md") == "- [!] US-001: First\n- [x] US-002: Second\n"
    assert p.argv(1)[p.argv(1).index("--max-budget-usd") + 1] == "0.004"


def test_the_client_stopping_at_its_budget_is_an_iteration_result(tmp_path, monkeypatch) -> None:
    p = project(tmp_path, max_cost_usd=0.0005)
    p.script(default=[{"replay": "max_budget"}])
    code, out = run_here(p, monkeypatch)
    assert code == 7, out
    assert iterations(p) == [("US-001", "budget_exhausted", True)]
    assert p.run_state()["usage"]["cost_usd"] == pytest.approx(0.0008)


def test_a_token_budget(tmp_path, monkeypatch) -> None:
    p = project(tmp_path)
    p.script(default=work("US-001"))
    code, out = run_here(p, monkeypatch, "--max-tokens", "700")
    assert code == 7, out
    assert len(iterations(p)) == 1 and "max_tokens is 700" in p.run_state()["finish"]["message"]


def test_usage_is_carried_over_until_a_run_completes(tmp_path) -> None:
    p = project(tmp_path)
    p.script(runs=[work("US-001"), work("US-002"), work("US-001")])
    first = p.run_loop("--once")
    assert first.returncode == 3, first.stdout + first.stderr
    assert p.run_state()["usage"]["cost_usd"] == pytest.approx(SUCCESS_COST)
    second = p.run_loop()
    assert second.returncode == 0, second.stdout + second.stderr
    usage = p.run_state()["usage"]
    assert usage["cost_usd"] == pytest.approx(2 * SUCCESS_COST) and set(usage["stories"]) == {"US-001", "US-002"}
    shown = status.render(status.collect(p.root, None, 5))
    assert "usage: $0.0096 (the client's estimate from list prices)" in shown
    assert "  US-001: $0.0048, 720 tokens, 1 iteration(s)" in shown
    p.write(".ralph/plan.md", "- [ ] US-003: Third\n")
    third = p.run_loop("--once")
    assert third.returncode == 3 or third.returncode == 0, third.stdout + third.stderr
    assert p.run_state()["usage"]["cost_usd"] == pytest.approx(SUCCESS_COST)  # a completed run starts the count again


def test_a_plain_text_agent_is_shown_as_it_is_and_has_no_usage(tmp_path) -> None:
    p = project(tmp_path)
    p.script(default=[{"print": "working on it"}, {"mark": "done"}])
    result = p.run_loop()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "working on it\n" in result.stdout
    assert all("usage" not in e for e in p.events("iteration"))


def test_a_planning_iteration_waits_too(tmp_path, monkeypatch) -> None:
    p = Project(tmp_path, None, config=config(max_iterations=1))
    p.script(runs=[[{"replay": "subscription_429_reset"}],
                   [{"write": ".ralph/plan.md", "text": PLAN}, {"replay": "tools_success"}]])
    clock = FakeClock(RESETS_AT - 60)
    code, out = run_here(p, monkeypatch, "--mode", "plan", clock=clock)
    assert code == 0, out
    assert [(e["result"], e.get("attempt_counted", True)) for e in p.events("iteration")] == [
        ("usage_limit", False), ("plan_changed", True)]
    assert [w["reason"] for w in p.events("wait")] == ["usage_limit"] and clock.slept == 60 + waits.RESET_MARGIN_SECONDS
    assert p.read(".ralph/plan.md") == PLAN
    assert p.run_state()["usage"]["cost_usd"] == pytest.approx(SUCCESS_COST) and p.run_state()["usage"]["stories"] == {}
