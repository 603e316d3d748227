"""The harness itself: the scripted server speaks the Messages API the way the
client needs, and a real client run with a trivial recorder hook (not ralph)
fires every event, records every request and stays inside its bounds."""
from __future__ import annotations

import json
import shlex
import sys
import urllib.error
import urllib.request

import pytest

from . import harness
from .api_server import EXHAUSTED_TEXT, SIDE_TEXT, ScriptedServer, bash, edit, read, text, write

RECORDER = harness.E2E_DIR / "recorder_hook.py"
TOOLS = [{"name": "Bash", "input_schema": {}}, {"name": "Read", "input_schema": {}}]


def post(url: str, body: dict, path: str = "/v1/messages?beta=true", session: str = "s1") -> tuple[int, str, bytes]:
    request = urllib.request.Request(
        url + path, data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json", "x-claude-code-session-id": session}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["content-type"], response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["content-type"], e.read()


def sse_events(raw: bytes) -> list[tuple[str, dict]]:
    events = []
    for chunk in raw.decode().strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def rebuild_message(events: list[tuple[str, dict]]) -> tuple[list[dict], str]:
    """What a client reassembles from the stream: content blocks and stop_reason."""
    blocks: dict[int, dict] = {}
    partial: dict[int, str] = {}
    stop_reason = None
    for name, data in events:
        if name == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"])
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[data["index"]]["text"] += delta["text"]
            else:
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
        elif name == "content_block_stop" and data["index"] in partial:
            blocks[data["index"]]["input"] = json.loads(partial[data["index"]])
        elif name == "message_delta":
            stop_reason = data["delta"]["stop_reason"]
    return [blocks[i] for i in sorted(blocks)], stop_reason


def test_server_streams_turns_in_order_and_records_requests():
    turns = [bash("echo hi", id="t1"), {"text": "Let me read.", "tool_uses": [read("/a")["tool_use"], read("/b")["tool_use"]]}, text("Done.")]
    with ScriptedServer(turns, lifetime=30) as server:
        answers = [post(server.url, {"stream": True, "tools": TOOLS, "messages": [{"role": "user", "content": f"req {i}"}]}) for i in range(4)]
    names = [name for name, _ in sse_events(answers[0][2])]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert answers[0][1] == "text/event-stream"
    blocks, stop = rebuild_message(sse_events(answers[0][2]))
    assert stop == "tool_use" and blocks == [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "echo hi", "description": "run a command"}}]
    blocks, stop = rebuild_message(sse_events(answers[1][2]))
    assert stop == "tool_use" and [b["type"] for b in blocks] == ["text", "tool_use", "tool_use"]
    assert blocks[0]["text"] == "Let me read." and [b["input"]["file_path"] for b in blocks[1:]] == ["/a", "/b"]
    assert len({b["id"] for b in blocks[1:]}) == 2
    assert rebuild_message(sse_events(answers[2][2])) == ([{"type": "text", "text": "Done."}], "end_turn")
    assert rebuild_message(sse_events(answers[3][2]))[0][0]["text"] == EXHAUSTED_TEXT
    assert [r["turn"] for r in server.requests] == [0, 1, 2, 3] and server.requests[3]["exhausted"]
    assert server.requests[1]["body"]["messages"][0]["content"] == "req 1"


def test_side_requests_and_other_endpoints_do_not_consume_turns():
    with ScriptedServer([text("main answer")], lifetime=30) as server:
        side = post(server.url, {"stream": False, "max_tokens": 512, "system": "Generate a title", "messages": [{"role": "user", "content": "x"}]})
        count = post(server.url, {"messages": []}, path="/v1/messages/count_tokens?beta=true")
        unknown = post(server.url, {}, path="/v1/something/else")
        main = post(server.url, {"stream": False, "tools": TOOLS, "messages": [{"role": "user", "content": "x"}]})
    assert json.loads(side[2])["content"][0]["text"] == SIDE_TEXT
    assert json.loads(count[2]) == {"input_tokens": 100}
    assert unknown[0] == 404 and "no route" in json.loads(unknown[2])["error"]["message"]
    assert json.loads(main[2])["content"] == [{"type": "text", "text": "main answer"}]
    assert [r["kind"] for r in server.requests] == ["side", "count_tokens", "unknown", "main"]
    assert server.unknown_paths == ["POST /v1/something/else"]


def test_sessions_each_play_their_own_script_and_errors_are_scripted():
    sessions = [[text("first session")], [{"error": {"status": 529, "type": "overloaded_error"}}, text("second session")]]
    with ScriptedServer(sessions=sessions, lifetime=30) as server:
        a = post(server.url, {"tools": TOOLS, "messages": []}, session="A")
        b1 = post(server.url, {"tools": TOOLS, "messages": []}, session="B")
        b2 = post(server.url, {"tools": TOOLS, "messages": []}, session="B")
    assert json.loads(a[2])["content"][0]["text"] == "first session"
    assert b1[0] == 529 and json.loads(b1[2])["error"]["type"] == "overloaded_error"
    assert json.loads(b2[2])["content"][0]["text"] == "second session"
    assert [(r["conversation"], r["turn"]) for r in server.requests] == [(0, 0), (1, 0), (1, 1)]


def test_server_shuts_itself_down_after_its_lifetime():
    server = ScriptedServer([text("x")], lifetime=0.5).start()
    url = server.url
    server._thread.join(5)
    assert not server._thread.is_alive() and server.timed_out
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "/", timeout=2)


def recorder_settings(log: str, events: list[str]) -> dict:
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(RECORDER))} {shlex.quote(log)}"
    return {"hooks": {event: [{"hooks": [{"type": "command", "command": command, "timeout": 30}]}] for event in events}}


EGRESS_PROBE = (
    "python3 -c \"import socket\ntry:\n socket.create_connection(('192.0.2.1', 80), timeout=3); print('EGRESS-OPEN')\n"
    "except OSError as e:\n print('EGRESS-BLOCKED', e.errno)\""
)


@pytest.mark.e2e
def test_real_client_fires_every_hook_and_the_server_sees_every_turn(repo, tmp_path):
    log = str(tmp_path / "recorded_hooks.jsonl")
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop"]
    readme = f"{repo}/README.md"
    turns = [
        read(readme, id="t_read"),
        edit(readme, "hello", "hello world", id="t_edit"),
        write(f"{repo}/notes.txt", "some notes\n", id="t_write"),
        bash("echo partial; exit 3", id="t_fail"),
        bash(EGRESS_PROBE, id="t_egress"),
        text("All done."),
    ]
    result = harness.run_scenario(repo, turns, prompt="Update the readme.", settings=recorder_settings(log, events))
    assert result.exit_code == 0 and not result.timed_out, result.describe()
    assert len(result.main_requests) == len(turns) and not result.exhausted, result.describe()
    assert result.final["result"] == "All done.", result.describe()
    # what the model was told, request by request
    assert "Update the readme." in result.request_text(0)
    assert result.tool_result("t_read")["content"] == "1\thello\n2\t"
    assert result.tool_result("t_fail") == {"content": "Exit code 3\npartial", "is_error": True, "request": 4}
    assert [m["content"][0]["tool_use_id"] for m in result.new_messages(2) if m["role"] == "user"] == ["t_edit"]
    # the tools really ran, in the temp repo
    assert result.read("README.md") == "hello world\n" and result.read("notes.txt") == "some notes\n"
    status = result.git("status", "--porcelain").splitlines()
    assert sorted(line.strip() for line in status) == ["?? notes.txt", "M README.md"], status
    # the hooks saw real payloads, in the repo, with an isolated HOME
    recorded = [json.loads(line) for line in open(log, encoding="utf-8")]
    fired = [(r["payload"]["hook_event_name"], r["payload"].get("tool_name")) for r in recorded]
    assert fired == [
        ("SessionStart", None),
        ("UserPromptSubmit", None),
        ("PreToolUse", "Read"),
        ("PostToolUse", "Read"),
        ("PreToolUse", "Edit"),
        ("PostToolUse", "Edit"),
        ("PreToolUse", "Write"),
        ("PostToolUse", "Write"),
        ("PreToolUse", "Bash"),
        ("PostToolUseFailure", "Bash"),
        ("PreToolUse", "Bash"),
        ("PostToolUse", "Bash"),
        ("Stop", None),
    ]
    assert all(r["payload"]["cwd"] == str(repo) and r["env"]["CLAUDE_PROJECT_DIR"] == str(repo) for r in recorded)
    assert all(r["env"]["HOME"] == str(result.run_dir / "home") for r in recorded)
    # the stream-json view agrees, and every hook answered with one JSON object
    assert [(h["hook_event"]) for h in result.hook_responses()] == [event for event, _ in fired]
    harness.assert_hooks_answered_cleanly(result)
    # nothing leaves the machine when the run is in a network namespace
    egress = result.tool_result("t_egress")["content"]
    if result.sandbox.startswith("unshare"):
        assert "EGRESS-BLOCKED" in egress, egress
    else:
        print(f"\nE2E WARNING: {result.sandbox}; egress probe said {egress!r}")


@pytest.mark.e2e
def test_an_external_process_spawning_the_client_gets_one_script_per_session(repo):
    """How a ralph-loop test uses the harness: the command finds `claude` on
    PATH (and in $RALPH_CLAUDE_BIN), each `claude -p` it spawns is a new
    client session and plays the next list of turns."""
    flags = " ".join(harness.CLIENT_FLAGS)
    loop = f'claude -p "first iteration" {flags} && "$RALPH_CLAUDE_BIN" -p "second iteration" {flags}'
    sessions = [[bash("echo one > one.txt", id="t_one"), text("iteration one done")], [text("iteration two done")]]
    result = harness.run_with_server(["sh", "-c", loop], repo, sessions=sessions, timeout=60)
    assert result.exit_code == 0 and not result.exhausted, result.describe()
    assert [(r["conversation"], r["turn"]) for r in result.main_requests] == [(0, 0), (0, 1), (1, 0)], result.describe()
    assert len({r["session"] for r in result.main_requests}) == 2
    finals = [json.loads(line)["result"] for line in result.stdout.splitlines() if '"type":"result"' in line.replace(" ", "")]
    assert finals == ["iteration one done", "iteration two done"], result.stdout[-2000:]
    assert result.read("one.txt") == "one\n"


@pytest.mark.e2e
def test_a_run_is_cut_at_its_wall_clock_bound(repo):
    slow = bash("python3 -c 'import time; time.sleep(60)'; echo late", id="t_slow")
    result = harness.run_scenario(repo, [slow, text("never")], settings={}, timeout=4)
    assert result.timed_out, result.describe()
    # cut during the tool call: no tool result ever reached the model, and it
    # was never asked for the next turn
    assert len(result.main_requests) == 1 and result.tool_results() == {}, result.describe()
    assert result.exit_code != 0
