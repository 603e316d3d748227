"""The overnight run through the real client: ralph-loop runs the real
Claude Code CLI (its agent command without any output flag: the loop adds
stream-json itself) against the scripted Messages API, which refuses some
requests with 429 (with and without a reset time), 529 or a dropped
connection before answering normally. The run waits, retries, and completes
every story with max_iterations_per_story = 1; a cost budget smaller than two
iterations ends the run with `budget` after the second, with the cost the
client reported.

What the client needs for a reset time to reach the stream: a claude.ai login
(CLAUDE_CODE_OAUTH_TOKEN; client_env(login="subscription")) and the 429's
`anthropic-ratelimit-unified-status: rejected` / `-reset: <epoch>` headers;
an API key's 429 never names a reset (scripts/capture_streams.py)."""
from __future__ import annotations

import json
import time

import pytest

from . import harness
from .harness import disconnect, edit, make_repo, overloaded, rate_limited, read, run_with_server, text, write

pytestmark = pytest.mark.e2e

PLAN = "# Plan\n\n- [ ] US-001: Add greeting file\n- [ ] US-002: Add farewell file\n"
RESET_IN = 15  # seconds from the script's making to the limit's reset: the run really waits for it
MARGIN = 10  # ralph.loop.waits.RESET_MARGIN_SECONDS
REQUEST_COST = 0.0008  # what the client reckons one scripted answer costs on an API key (100 input + 20 output tokens)


def story_session(repo, story_id: str, filename: str, body: str) -> list[dict]:
    plan = f"{repo}/.ralph/plan.md"
    return [
        write(f"{repo}/{filename}", body, id=f"t_write_{story_id}"),
        read(plan, id=f"t_read_{story_id}"),
        edit(plan, f"- [ ] {story_id}:", f"- [x] {story_id}:", id=f"t_mark_{story_id}"),
        text(f"{story_id} is done."),
    ]


def prepare(tmp_path, binary: str, **loop_keys: object):
    repo = make_repo(tmp_path, gitignore=".ralph/*\n!.ralph/plan.md\n")
    (repo / ".ralph").mkdir()
    (repo / ".ralph" / "plan.md").write_text(PLAN, encoding="utf-8")
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(json.dumps(harness.hook_settings()), encoding="utf-8")
    agent = [binary, "-p", "--dangerously-skip-permissions", "--settings", str(settings_file)]
    keys = {"agent_command": agent, "timeout_seconds": 120, "max_iterations_per_story": 1, "no_progress_limit": 1,
            "retry_backoff_seconds": 1, **loop_keys}
    (repo / "ralph.toml").write_text(
        "[loop]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in keys.items())
        + "\n[sandbox]\nfail_if_unavailable = false\n", encoding="utf-8")
    harness.git(repo, "add", "-A")
    harness.git(repo, "commit", "-q", "-m", "plan and loop config")
    return repo


def loop_command() -> list[str]:
    return [f"{harness.ralph_bin_dir()}/ralph-loop"]


def events(repo) -> list[dict]:
    return [json.loads(line) for line in (repo / ".ralph" / "events.jsonl").read_text(encoding="utf-8").splitlines()]


def env_for(result_dir, login: str) -> dict:
    # the client's own retries off: a 429 without headers and a 529 reach the loop at once
    return harness.client_env(result_dir, {"CLAUDE_CODE_MAX_RETRIES": "0"}, login=login)


def test_usage_limits_are_waited_out_and_every_story_completes(tmp_path, claude_bin):
    repo = prepare(tmp_path, claude_bin)
    reset_at = int(time.time()) + RESET_IN
    sessions = [
        [rate_limited(reset_at=reset_at, retry_after=RESET_IN)],  # US-001: the usage limit, with its reset
        story_session(repo, "US-001", "greeting.txt", "hello\n"),
        [rate_limited()],  # US-002: a 429 without any header: no reset time, the loop backs off
        story_session(repo, "US-002", "farewell.txt", "bye\n"),
    ]
    result = run_with_server(loop_command(), repo, sessions=sessions, timeout=300,
                             env=env_for(tmp_path / "home", "subscription"))
    assert result.exit_code == 0, result.describe() + "\n" + result.stdout[-3000:]
    assert harness.git(repo, "log", "--format=%s").splitlines()[:2] == ["feat(US-002): Add farewell file", "feat(US-001): Add greeting file"]
    recorded = events(repo)
    iterations = [(e["story"], e["result"], e.get("attempt_counted", True)) for e in recorded if e["event"] == "iteration"]
    assert iterations == [("US-001", "usage_limit", False), ("US-001", "done", True),
                          ("US-002", "usage_limit", False), ("US-002", "done", True)], result.stdout[-3000:]
    assert not [e for e in recorded if e["event"] == "story_blocked"]
    first, second = [e for e in recorded if e["event"] == "wait"]
    # the reset the API sent reached the loop through the client's stream
    assert first["reason"] == "usage_limit" and first["until"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(reset_at + MARGIN))
    assert "limit" in first["detail"]
    assert second["reason"] == "usage_limit" and second["seconds"] == 1 and second["attempt"] == 1
    refused = [e for e in recorded if e["event"] == "iteration"][0]["usage"]
    assert refused["api_error_status"] == 429 and refused["is_error"] is True and refused["session_id"]
    # the live view, not raw JSON
    assert "→ Write: greeting.txt" in result.stdout and '"type":"assistant"' not in result.stdout
    assert "usage limit: " in result.stdout and "then US-001 again (not counted)" in result.stdout
    state = json.loads((repo / ".ralph" / "run.json").read_text(encoding="utf-8"))
    reported = [e["usage"]["cost_usd"] for e in recorded if e["event"] == "iteration"]
    assert reported[0] == reported[2] == 0 and reported[1] > 0  # a refused request costs nothing
    assert state["usage"]["cost_usd"] == pytest.approx(sum(reported)) and state["waiting"] is None


def test_transient_errors_and_an_api_key_429_are_retried(tmp_path, claude_bin):
    repo = prepare(tmp_path, claude_bin)
    sessions = [
        [rate_limited(retry_after=30)],  # an API key's 429: the client does not retry it and names no reset
        [overloaded()],
        [disconnect()],
        story_session(repo, "US-001", "greeting.txt", "hello\n"),
        story_session(repo, "US-002", "farewell.txt", "bye\n"),
    ]
    result = run_with_server(loop_command(), repo, sessions=sessions, timeout=300, env=env_for(tmp_path / "home", "api_key"))
    assert result.exit_code == 0, result.describe() + "\n" + result.stdout[-3000:]
    recorded = events(repo)
    assert [(e["result"], e.get("attempt_counted", True)) for e in recorded if e["event"] == "iteration"] == [
        ("usage_limit", False), ("transient_error", False), ("transient_error", False), ("done", True), ("done", True)]
    assert [(e["reason"], e["seconds"], e["attempt"]) for e in recorded if e["event"] == "wait"] == [
        ("usage_limit", 1, 1), ("transient", 1, 1), ("transient", 2, 2)]
    statuses = [e["usage"]["api_error_status"] for e in recorded if e["event"] == "iteration"]
    assert statuses[:2] == [429, 529]


def test_a_cost_budget_smaller_than_two_iterations(tmp_path, claude_bin):
    budget = 0.005  # one story costs 4 answers (0.0032); the second is capped by the client at what is left
    repo = prepare(tmp_path, claude_bin, max_cost_usd=budget)
    (repo / ".ralph" / "plan.md").write_text(PLAN + "- [ ] US-003: Add a third file\n", encoding="utf-8")
    harness.git(repo, "commit", "-q", "-am", "third story")
    sessions = [
        story_session(repo, "US-001", "greeting.txt", "hello\n"),
        story_session(repo, "US-002", "farewell.txt", "bye\n"),
        story_session(repo, "US-003", "third.txt", "3\n"),
    ]
    result = run_with_server(loop_command(), repo, sessions=sessions, timeout=300, env=env_for(tmp_path / "home", "api_key"))
    assert result.exit_code == 7, result.describe() + "\n" + result.stdout[-3000:]
    recorded = events(repo)
    iterations = [e for e in recorded if e["event"] == "iteration"]
    assert [(e["story"], e["result"]) for e in iterations] == [("US-001", "done"), ("US-002", "budget_exhausted")]
    # the client stopped the second iteration at --max-budget-usd: what was left of the budget
    assert iterations[1]["usage"]["terminal_reason"] == "budget_exhausted"
    assert iterations[0]["usage"]["cost_usd"] == pytest.approx(4 * REQUEST_COST)
    second_requests = [r for r in result.main_requests if r["conversation"] == 1]
    assert 0 < len(second_requests) < 4
    state = json.loads((repo / ".ralph" / "run.json").read_text(encoding="utf-8"))
    reported = sum(e["usage"]["cost_usd"] for e in iterations)
    assert state["usage"]["cost_usd"] == pytest.approx(reported) and reported >= budget
    assert state["finish"]["type"] == "budget" and state["finish"]["exit_code"] == 7
    assert not any(r["conversation"] == 2 for r in result.main_requests)  # US-003 never started
