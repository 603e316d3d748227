"""The loop's reading of the agent's stream-json (ralph.loop.stream), what an
agent's exit means (ralph.loop.agent_outcome), its usage (ralph.loop.usage),
the flags added to the agent's command and the live view, on streams the real
client printed (tests/fixtures/stream/, scripts/capture_streams.py)."""
from __future__ import annotations

import io
import json
import os
import tracemalloc

import hypothesis
import hypothesis.strategies as st
import pytest

from ralph.loop.agent import stream_flags
from ralph.loop.agent_command import flag_value, with_flags
from ralph.loop.agent_outcome import BUDGET, FAILED, OK, TRANSIENT, USAGE_LIMIT, classify
from ralph.loop.display import Display
from ralph.loop.stream import MAX_LINE, AgentStream, tool_summary
from ralph.loop.usage import Totals, brief, iteration_usage

HERE = os.path.dirname(os.path.abspath(__file__))
STREAMS = os.path.join(HERE, "fixtures", "stream")
ROOT = "/home/dev/app/repo"  # where the captures ran (scripts/capture_streams.py rewrites the temp dir)


def fixture(name: str) -> tuple[bytes, dict]:
    path = os.path.join(STREAMS, name + (".jsonl" if os.path.exists(os.path.join(STREAMS, name + ".jsonl")) else ".txt"))
    with open(path, "rb") as f:
        data = f.read()
    with open(os.path.join(STREAMS, name + ".meta.json"), encoding="utf-8") as f:
        return data, json.load(f)


def read(data: bytes, chunk: int = 65536, root: str = ROOT) -> tuple[AgentStream, list]:
    items: list = []
    stream = AgentStream(lambda kind, text: items.append((kind, text)), root)
    for start in range(0, len(data), chunk):
        stream.feed(data[start:start + chunk])
    stream.close()
    return stream, items


def outcome_of(name: str):
    data, meta = fixture(name)
    stream, _ = read(data)
    return classify(meta["exit_code"], stream=stream, output=data.decode("utf-8", "replace")), stream, meta


def resets_at(data: bytes) -> float:
    for line in data.splitlines():
        message = json.loads(line)
        if message.get("type") == "rate_limit_event":
            return float(message["rate_limit_info"]["resetsAt"])
    raise AssertionError("no rate_limit_event in the capture")


def test_every_capture_was_made_by_the_real_client() -> None:
    names = sorted(n[: -len(".meta.json")] for n in os.listdir(STREAMS) if n.endswith(".meta.json"))
    assert len(names) >= 16, names
    for name in names:
        data, meta = fixture(name)
        assert meta["client_version"] and meta["captured_at"], name
        if meta["output"]:
            first = json.loads(data.splitlines()[0])
            assert first["type"] == "system" and first["subtype"] == "init" and first["claude_code_version"] == meta["client_version"]


@pytest.mark.parametrize("name, kind", [
    ("tools_success", OK), ("big_tool_output", OK), ("api_key_429_retried", OK), ("overloaded_retried", OK),
    ("subscription_warning", OK),
    ("api_key_429", USAGE_LIMIT), ("api_key_429_headers", USAGE_LIMIT), ("subscription_429_no_reset", USAGE_LIMIT),
    ("subscription_429_reset", USAGE_LIMIT),
    ("overloaded_529", TRANSIENT), ("server_500", TRANSIENT), ("connection_reset", TRANSIENT),
    ("max_budget", BUDGET),
    ("text_429", USAGE_LIMIT), ("text_usage_limit", USAGE_LIMIT), ("text_529", TRANSIENT),
])
def test_each_real_exit_is_classified(name: str, kind: str) -> None:
    outcome, stream, meta = outcome_of(name)
    assert outcome.kind == kind, (outcome, meta["scenario"])
    if meta["output"]:
        assert stream.result is not None and stream.spoke_json
    else:
        assert stream.result is None and not stream.spoke_json
    if kind != OK:
        assert outcome.detail, outcome


def test_the_reset_time_comes_from_a_subscription_limit_only() -> None:
    outcome, stream, _ = outcome_of("subscription_429_reset")
    data, _ = fixture("subscription_429_reset")
    assert outcome.reset_at == resets_at(data)
    assert stream.rate_limit["rateLimitType"] == "five_hour"
    assert "5-hour limit" in outcome.detail
    # an API key's 429 says nothing about a reset, whatever headers the API sent
    for name in ("api_key_429", "api_key_429_headers", "subscription_429_no_reset", "text_usage_limit"):
        assert outcome_of(name)[0].reset_at is None, name


def test_an_allowed_rate_limit_status_is_no_limit() -> None:
    outcome, stream, _ = outcome_of("subscription_warning")
    assert outcome.kind == OK and stream.rate_limit is None


def test_a_test_log_mentioning_429_or_overloaded_is_an_ordinary_failure() -> None:
    log = "FAILED tests/test_api.py::test_rate_limit - assert 429 == 200\nE   server overloaded (503)\n1 failed\n"
    assert classify(1, output=log).kind == FAILED
    assert classify(0, output=log).kind == OK


def test_hangs_and_timeouts() -> None:
    assert classify(-15, idle_timed_out=True).kind == "hung"
    assert classify(-15, timed_out=True).kind == FAILED


def test_usage_of_a_successful_run() -> None:
    data, _ = fixture("tools_success")
    stream, _ = read(data)
    usage = iteration_usage(stream)
    result = json.loads(data.splitlines()[-1])
    assert usage["cost_usd"] == result["total_cost_usd"] > 0
    assert usage["turns"] == result["num_turns"] == 6
    assert usage["input_tokens"] == result["usage"]["input_tokens"] and usage["output_tokens"] == result["usage"]["output_tokens"]
    assert usage["session_id"] == result["session_id"] and usage["model"]
    assert usage["is_error"] is False and usage["terminal_reason"] == "completed"
    assert usage["api_error_status"] is None and usage["api_error_type"] is None
    assert usage["duration_ms"] == result["duration_ms"] and usage["api_ms"] == result["duration_api_ms"]
    assert brief(usage).startswith("6 turn(s) · ")


def test_usage_of_a_refused_run_has_its_error_fields() -> None:
    data, _ = fixture("subscription_429_reset")
    usage = iteration_usage(read(data)[0])
    assert usage["is_error"] is True and usage["api_error_status"] == 429 and usage["api_error_type"] == "rate_limit_error"
    assert usage["cost_usd"] == 0 and usage["terminal_reason"] == "api_error"


def test_usage_without_a_result_line_is_what_the_stream_showed() -> None:
    data, _ = fixture("tools_success")
    cut = data[: data.rstrip(b"\n").rindex(b"\n") + 1]  # all but the result line
    usage = iteration_usage(read(cut)[0])
    assert usage["cost_usd"] is None and usage["is_error"] is None
    assert usage["turns"] == 6 and usage["input_tokens"] > 0 and usage["session_id"]


def test_run_totals_carry_over_unless_the_run_completed() -> None:
    data, _ = fixture("tools_success")
    usage = iteration_usage(read(data)[0])
    totals = Totals()
    totals.add("US-001", usage)
    totals.add("US-001", usage)
    totals.add(None, usage)  # planning: the run's totals only
    recorded = json.loads(json.dumps(totals.to_json()))
    assert recorded["stories"]["US-001"]["iterations"] == 2
    assert recorded["cost_usd"] == pytest.approx(3 * usage["cost_usd"])
    stopped = Totals.carried_over({"usage": recorded, "finish": {"type": "manual"}})
    crashed = Totals.carried_over({"usage": recorded, "finish": None})
    for carried in (stopped, crashed):
        assert carried.to_json() == recorded
    assert Totals.carried_over({"usage": recorded, "finish": {"type": "complete"}}).to_json()["cost_usd"] == 0
    torn = Totals.carried_over({"usage": {"cost_usd": "x", "stories": {"US-1": "y"}}, "finish": None})
    assert torn.cost_usd == 0 and torn.stories == {}


# ---- reading: chunks, bad lines, cut lines, size ----


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(st.lists(st.integers(min_value=1, max_value=5000), min_size=1, max_size=30))
def test_chunking_never_changes_what_is_read(cuts: list[int]) -> None:
    data, _ = fixture("tools_success")
    whole, whole_items = read(data, chunk=len(data))
    stream = AgentStream(lambda kind, text: items.append((kind, text)), ROOT)
    items: list = []
    position = 0
    for size in cuts * (len(data) // max(1, sum(cuts)) + 1):
        stream.feed(data[position:position + size])
        position += size
        if position >= len(data):
            break
    stream.feed(data[position:])
    stream.close()
    assert items == whole_items
    assert stream.result == whole.result and stream.turns == whole.turns and stream.lines == whole.lines


def test_malformed_lines_are_passed_through_as_text() -> None:
    data, _ = fixture("tools_success")
    lines = data.splitlines(keepends=True)
    noise = [b"plain warning from the client\n", b"{not json\n", b"[1, 2]\n", b"\xff\xfe broken utf-8\n", b"\n", b"  \r\n"]
    mixed = b"".join(lines[:3] + noise + lines[3:])
    stream, items = read(mixed, chunk=7)
    raw = [text for kind, text in items if kind == "raw"]
    assert raw == ["plain warning from the client", "{not json", "[1, 2]", "\ufffd\ufffd broken utf-8", "  "]
    assert stream.result is not None and stream.json_lines == len(lines)


def test_a_stream_cut_mid_line() -> None:
    data, _ = fixture("tools_success")
    last = data.rstrip(b"\n").rindex(b"\n") + 1
    cut = data[: last + (len(data) - last) // 2]  # killed while writing the result line
    stream, items = read(cut)
    assert stream.result is None
    assert items[-1] == ("raw", cut[last:].decode())
    assert [t for k, t in items if k == "tool"] == [t for k, t in read(data)[1] if k == "tool"]
    assert classify(-9, stream=stream).kind == FAILED
    assert classify(0, stream=stream).kind == OK


def stream_of_size(size: int) -> tuple[bytes, int]:
    """Real lines (a successful run without its result, and a long tool
    result) repeated to `size` bytes, then a real result line."""
    data, _ = fixture("tools_success")
    big, _ = fixture("big_tool_output")
    lines = data.splitlines(keepends=True)
    body = b"".join(lines[1:-1]) + b"".join(big.splitlines(keepends=True)[1:-1])
    count = max(1, size // len(body))
    return lines[0] + body * count + lines[-1], count


def test_a_50_mb_stream_in_bounded_memory() -> None:
    data, copies = stream_of_size(50 * 1024 * 1024)
    tools = 0

    def on_item(kind: str, text: str) -> None:
        nonlocal tools
        tools += kind == "tool"

    stream = AgentStream(on_item, ROOT)
    tracemalloc.start()
    try:
        for start in range(0, len(data), 65536):
            stream.feed(data[start:start + 65536])
        stream.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert stream.result is not None and stream.bytes == len(data)
    assert tools == copies * 6  # 5 tool calls of the run, 1 of the long one, in every copy
    assert peak < 4 * 1024 * 1024, peak  # a line at a time, whatever the stream's size


def test_a_line_longer_than_the_limit_is_skipped_not_held() -> None:
    data, _ = fixture("tools_success")
    lines = data.splitlines(keepends=True)
    giant = b'{"type":"user","message":{"content":"' + b"x" * (MAX_LINE + 5 * 65536) + b'"}}\n'
    stream = AgentStream(None, ROOT)
    tracemalloc.start()
    try:
        for part in (b"".join(lines[:-1]), giant, lines[-1]):
            for start in range(0, len(part), 65536):
                stream.feed(part[start:start + 65536])
        stream.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert stream.skipped_lines == 1 and stream.result is not None
    assert peak < MAX_LINE + 4 * 1024 * 1024, peak


# ---- what the terminal shows ----


def test_tool_lines() -> None:
    assert tool_summary("Bash", {"command": "pytest -q", "description": "run the tests"}) == "Bash: pytest -q"
    assert tool_summary("Edit", {"file_path": "/p/src/app.py", "old_string": "a"}, "/p") == "Edit: src/app.py"
    assert tool_summary("Edit", {"file_path": "/elsewhere/app.py"}, "/p") == "Edit: /elsewhere/app.py"
    assert tool_summary("Bash", {"command": "echo one\necho two"}) == "Bash: echo one…"
    assert tool_summary("Grep", {"pattern": "TODO", "path": "src"}) == "Grep: TODO"
    assert tool_summary("mcp__ralph__request_merge", {"summary": "ready"}) == "mcp__ralph__request_merge: ready"
    assert tool_summary("TodoWrite", {"todos": [{}, {}]}) == "TodoWrite: 2 item(s)"
    assert tool_summary("Bash", "not a dict") == "Bash"


def test_live_view_on_a_pipe() -> None:
    data, _ = fixture("tools_success")
    out = io.StringIO()
    display = Display(out)
    read(data)  # the same items, shown:
    stream = AgentStream(display.agent_item, ROOT)
    stream.feed(data)
    stream.close()
    assert out.getvalue() == (
        "  I will look at the project first.\n"
        "  → Bash: ls -la && git status --short\n"
        "  → Write: notes.txt\n"
        "  → Read: README.md\n"
        "  → Edit: README.md\n"
        "  → Bash: python3 -c \"print('ok')\"\n"
        "  Done: README.md updated and notes.txt created.\n"
    )
    quiet = io.StringIO()
    stream = AgentStream(Display(quiet, quiet=True).agent_item, ROOT)
    stream.feed(data)
    assert quiet.getvalue() == ""


def test_live_view_notes_a_retry_and_a_limit() -> None:
    out = io.StringIO()
    for name in ("overloaded_retried", "subscription_429_reset"):
        data, _ = fixture(name)
        stream = AgentStream(Display(out).agent_item, ROOT)
        stream.feed(data)
    text = out.getvalue()
    assert "  · the client retries a failed request (529), attempt 1/10 in " in text
    assert "  · rate limit: rejected (five_hour)\n" in text
    assert "  You've hit your 5-hour limit" in text


def test_status_line_shows_turns_tokens_and_cost() -> None:
    class TTY(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = TTY()
    display = Display(out)
    display.status("ralph-loop build · iteration 1/3 · US-001 · {elapsed} · last: done")
    display.live = lambda: "6 turn(s) · 600 tokens · run $0.0048"
    display.agent_item("tool", "Bash: pytest -q")
    assert "US-001 · 0s · 6 turn(s) · 600 tokens · run $0.0048 · last: done" in out.getvalue()


def test_the_live_view_redacts() -> None:
    out = io.StringIO()
    Display(out).agent_item("tool", "Bash: curl -H 'Authorization: Bearer sk-ant-api03-" + "a" * 40 + "' x")
    assert "sk-ant-api03-" + "a" * 40 not in out.getvalue()


# ---- the agent's command line ----


@pytest.mark.parametrize("command, expected", [
    ("claude -p --dangerously-skip-permissions",
     "claude --output-format stream-json --verbose -p --dangerously-skip-permissions"),
    ("claude -p --output-format stream-json", "claude --verbose -p --output-format stream-json"),
    ("claude -p --output-format=stream-json --verbose", "claude -p --output-format=stream-json --verbose"),
    ("claude -p --output-format json", "claude -p --output-format json"),  # the person's choice stands
    ("timeout 600 /opt/bin/claude -p", "timeout 600 /opt/bin/claude --output-format stream-json --verbose -p"),
    ("python fake_agent.py", "python fake_agent.py"),
    (["/x/claude", "-p", "--verbose"], ["/x/claude", "--output-format", "stream-json", "-p", "--verbose"]),
    (["python", "agent.py"], ["python", "agent.py"]),
])
def test_stream_flags_added_when_absent(command, expected) -> None:
    assert stream_flags(command) == expected


def test_flags_are_quoted_for_the_shell() -> None:
    assert with_flags("claude -p", "--mcp-config", "/tmp/a b.json") == "claude '--mcp-config' '/tmp/a b.json' -p".replace("'--mcp-config'", "--mcp-config")
    assert flag_value("claude -p --max-budget-usd 2.5", "--max-budget-usd") == "2.5"
    assert flag_value(["claude", "--max-budget-usd=3"], "--max-budget-usd") == "3"
    assert flag_value("claude -p", "--max-budget-usd") is None
