"""The webhook action through the lifecycle engine, against an HTTP server the
test starts on 127.0.0.1 (scripted answers, every request recorded)."""
from __future__ import annotations

import json
import os
import textwrap
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ralph.loop.lifecycle import webhook_config
from ralph.loop.lifecycle import webhook_run
from ralph.loop.lifecycle.config import load_hooks, require_valid
from ralph.loop.lifecycle.engine import Engine


class Endpoint:
    """A webhook receiver: answers with `statuses` in turn (then 200), records
    each request, and can press a button in the posted body (as a chat user would)."""

    def __init__(self, statuses: list[int] | None = None, press: str | None = None) -> None:
        self.statuses = list(statuses or [])
        self.requests: list[dict] = []
        self.press = press  # "approve" / "reject&message=..." : GET the body's callback URL with this action
        self.pressed: list[int] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                endpoint.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
                status = endpoint.statuses.pop(0) if endpoint.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
                if status == 200 and endpoint.press:
                    threading.Thread(target=endpoint.click, args=(body,), daemon=True).start()

            do_POST = do_GET = do_PUT = _handle  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def click(self, body: bytes) -> None:
        url = json.loads(body)["callback"]
        with urllib.request.urlopen(f"{url}?action={self.press}", timeout=30) as response:
            self.pressed.append(response.status)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def bodies(self) -> list[object]:
        return [json.loads(r["body"]) for r in self.requests]


@pytest.fixture
def endpoint():
    servers: list[Endpoint] = []

    def make(statuses: list[int] | None = None, press: str | None = None) -> Endpoint:
        servers.append(Endpoint(statuses, press))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def engine_for(tmp_path, config: str, environ: dict | None = None) -> Engine:
    root = str(tmp_path / "project")
    os.makedirs(os.path.join(root, ".ralph"), exist_ok=True)
    path = os.path.join(root, "ralph.toml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(config))
    env = dict(os.environ, **(environ or {}))
    env.pop("RALPH_HOOKS_ENABLED", None)
    hooks = require_valid(load_hooks(root, None, path, env, include_global=False))
    state = os.path.join(root, ".ralph")
    return Engine(hooks, root=root, state_dir=state, run_id="run-1", log_dir=os.path.join(state, "logs", "run-1"),
                  environ=env, sleep=lambda s: None)


def traces(engine: Engine) -> str:
    text = ""
    for name in (os.path.join(engine.state_dir, "logs", "lifecycle.jsonl"), os.path.join(engine.log_dir, "hooks.log"),
                 os.path.join(engine.state_dir, "events.jsonl")):
        if os.path.exists(name):
            with open(name, encoding="utf-8") as f:
                text += f.read()
    return text


def test_send_failures_are_retried_with_backoff(tmp_path, endpoint) -> None:
    server = endpoint([503, 502, 200])
    engine = engine_for(tmp_path, f"""\
        [[hooks.post_iteration]]
        type = "webhook"
        url = "{server.url}/notify"
        backoff = 0.01
        body = {{ text = "iteration ${{ITERATION}} done" }}
        """)
    fired = engine.fire("post_iteration", {"iteration": 4})
    ((_, result),) = fired.results
    assert result.ok and result.exit == 200 and fired.abort is None
    assert [r["path"] for r in server.requests] == ["/notify"] * 3
    assert server.bodies() == [{"text": "iteration 4 done"}] * 3


def test_delays_double_between_attempts() -> None:
    delays: list[float] = []
    sent = webhook_run.send("POST", "http://127.0.0.1:9/x", {}, b"{}", 5, 3, 0.5, sleep=delays.append)
    assert not sent.ok and sent.attempts == 4 and "ConnectionRefusedError" in sent.error
    assert delays == [0.5, 1.0, 2.0]


def test_retries_exhausted_fail_and_on_failure_abort_ends_the_loop(tmp_path, endpoint) -> None:
    server = endpoint([500] * 10)
    engine = engine_for(tmp_path, f"""\
        [[hooks.on_error]]
        type = "webhook"
        url = "{server.url}/page"
        retries = 2
        backoff = 0.01
        on_failure = "abort"
        """)
    fired = engine.fire("on_error", {"error": "verify failed"})
    ((_, result),) = fired.results
    assert result.status == "failed" and "HTTP 500; 3 attempt(s)" in result.message
    assert len(server.requests) == 3 and fired.abort


def test_client_errors_are_not_retried(tmp_path, endpoint) -> None:
    server = endpoint([404])
    engine = engine_for(tmp_path, f"""\
        [[hooks.post_iteration]]
        type = "webhook"
        url = "{server.url}/gone"
        backoff = 0.01
        """)
    ((_, result),) = engine.fire("post_iteration", {}).results
    assert result.status == "failed" and len(server.requests) == 1


def test_body_values_are_json_escaped_never_pasted(tmp_path, endpoint) -> None:
    server = endpoint()
    engine = engine_for(tmp_path, f"""\
        [[hooks.on_task_complete]]
        type = "webhook"
        url = "{server.url}/done"
        headers = {{ X-Story = "{{{{task_id}}}}" }}
        [hooks.on_task_complete.body]
        text = "Story ${{STORY_ID}}: {{{{task_content}}}}"
        count = 3
        nested = {{ list = ["${{ITERATION}}", true] }}
        """)
    title = 'Quote " backslash \\ newline \n $(rm -rf ~) `id` \'; DROP'
    engine.fire("on_task_complete", {"story_id": "US-7", "story_title": title, "iteration": 2})
    (request,) = server.requests
    assert json.loads(request["body"]) == {"text": f"Story US-7: {title}", "count": 3, "nested": {"list": ["2", True]}}
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["headers"]["X-Story"] == "US-7"


def test_without_a_body_the_hook_context_is_sent(tmp_path, endpoint) -> None:
    server = endpoint()
    engine = engine_for(tmp_path, f"""\
        [[hooks.session_end]]
        type = "webhook"
        url = "{server.url}/end"
        """)
    engine.fire("session_end", {"finish_type": "complete", "total_iterations": 3})
    body = server.bodies()[0]
    assert body["hook_point"] == "session_end" and body["finish_type"] == "complete" and body["total_iterations"] == 3


@pytest.mark.parametrize(
    "url, ok",
    [
        ("https://hooks.slack.com/services/T000/B000/XXXX", True),
        ("http://127.0.0.1:8080/hook", True),
        ("http://localhost/hook", True),
        ("http://[::1]:9000/hook", True),
        ("http://example.com/hook", False),
        ("http://10.0.0.5/hook", False),
        ("ftp://example.com/x", False),
        ("https:///nohost", False),
    ],
)
def test_https_is_required_except_for_loopback(url: str, ok: bool) -> None:
    assert (webhook_config.url_problem(url) is None) is ok


def test_plain_http_to_another_host_is_a_config_error(tmp_path) -> None:
    with pytest.raises(Exception) as info:
        engine_for(tmp_path, """\
            [[hooks.post_iteration]]
            type = "webhook"
            url = "http://hooks.example.com/x"
            """)
    assert "ralph.toml:3: [hooks] url: must use https://" in str(info.value)


def test_a_url_from_the_environment_is_checked_before_sending(tmp_path, endpoint) -> None:
    engine = engine_for(tmp_path, """\
        [[hooks.post_iteration]]
        type = "webhook"
        url = "${NOTIFY_URL}"
        """, {"NOTIFY_URL": "http://example.com/hook?token=abc"})
    ((_, result),) = engine.fire("post_iteration", {}).results
    assert result.status == "failed" and "must use https://" in result.message
    assert "abc" not in result.message


def test_secrets_in_url_and_headers_never_reach_the_logs(tmp_path, endpoint) -> None:
    server = endpoint([500, 200])
    secret_path = "T0AB12CD3/B0XYZ98765/aZ9qWertyUiop0987LkjH"
    engine = engine_for(tmp_path, f"""\
        [[hooks.post_iteration]]
        type = "webhook"
        name = "notify"
        url = "${{HOOK_BASE}}/services/{secret_path}?sig=${{HOOK_SIG}}&v=1"
        headers = {{ Authorization = "Bearer ${{HOOK_TOKEN}}", X-Api-Key = "plainkeyvalue42" }}
        backoff = 0.01
        """, {"HOOK_BASE": server.url.replace("127.0.0.1", "user:hunter2pass@127.0.0.1"), "HOOK_SIG": "s1gn4tur3value",
              "HOOK_TOKEN": "tok_live_abcdef"})
    ((_, result),) = engine.fire("post_iteration", {}).results
    assert result.ok
    request = server.requests[-1]
    assert request["headers"]["Authorization"] == "Bearer tok_live_abcdef"
    assert request["headers"]["X-Api-Key"] == "plainkeyvalue42"
    assert request["path"] == f"/services/{secret_path}?sig=s1gn4tur3value&v=1"
    logged = traces(engine) + result.command + result.message
    assert "/services/[redacted]/[redacted]/[redacted]?sig=[redacted]&v=[redacted]" in logged
    for secret in ("hunter2pass", "s1gn4tur3value", "tok_live_abcdef", "plainkeyvalue42", "aZ9qWertyUiop0987LkjH", "T0AB12CD3"):
        assert secret not in logged


def test_redact_url_keeps_what_helps_and_hides_the_rest() -> None:
    assert webhook_config.redact_url("https://u:p@api.example.com:8443/v1/hooks/abcDEF123456789xyz?key=1") == \
        "https://api.example.com:8443/v1/hooks/[redacted]?key=[redacted]"
    assert webhook_config.shown_headers({"Content-Type": "application/json", "Authorization": "Bearer x"}) == \
        "Content-Type: application/json, Authorization: [redacted]"


# ---------------------------------------------------------------- the approval gate


GATE = """\
    [[hooks.stage_complete]]
    type = "webhook"
    name = "plan approval"
    url = "{url}/chat"
    await = true
    timeout = {timeout}
    {extra}
    [hooks.stage_complete.body]
    text = "Plan ready for ${{SESSION}}"
    callback = "${{CALLBACK_URL}}"

    [[hooks.stage_complete]]
    command = 'printf "%s|%s|%s|%s" "$RALPH_HOOK_ACTION" "$RALPH_HOOK_MESSAGE" "$RALPH_HOOK_RESPONSE" ${{HOOK_RESPONSE}} > {seen}'
    """


def test_approval_lets_the_loop_go_on_and_later_actions_see_the_answer(tmp_path, endpoint) -> None:
    server = endpoint(press="approve&message=go%20ahead")
    seen = tmp_path / "seen"
    engine = engine_for(tmp_path, GATE.format(url=server.url, timeout=120, extra="", seen=seen))
    fired = engine.fire("stage_complete", {"stage": "plan", "session": "run-1"})
    assert fired.abort is None and server.pressed == [200]
    action, message, response, templated = seen.read_text().split("|")
    assert (action, message) == ("approve", "go ahead")
    assert json.loads(response) == json.loads(templated) == {"action": "approve", "message": "go ahead"}
    body = server.bodies()[0]
    assert body["text"] == "Plan ready for run-1" and body["callback"].startswith("http://127.0.0.1:")
    token = body["callback"].rsplit("/", 1)[1]
    assert token not in traces(engine)  # the token is never logged
    assert not os.path.exists(os.path.join(engine.state_dir, "waiting.json"))


def test_reject_ends_the_loop_with_the_persons_message(tmp_path, endpoint) -> None:
    server = endpoint(press="reject&message=the%20plan%20skips%20the%20migration")
    engine = engine_for(tmp_path, GATE.format(url=server.url, timeout=120, extra="", seen=tmp_path / "seen"))
    fired = engine.fire("stage_complete", {"stage": "plan"})
    assert fired.abort == "the plan skips the migration"
    assert len(fired.results) == 1  # nothing after an abort


def test_timeout_aborts_by_default(tmp_path, endpoint) -> None:
    server = endpoint()
    engine = engine_for(tmp_path, GATE.format(url=server.url, timeout=0.3, extra="", seen=tmp_path / "seen"))
    fired = engine.fire("stage_complete", {})
    result = fired.results[0][1]
    assert result.status == "timeout" and fired.abort.startswith("plan approval: no answer within 0.3s")


def test_timeout_with_on_timeout_continue_goes_on(tmp_path, endpoint) -> None:
    server = endpoint()
    seen = tmp_path / "seen"
    engine = engine_for(tmp_path, GATE.format(url=server.url, timeout=0.3, extra='on_timeout = "continue"', seen=seen))
    fired = engine.fire("stage_complete", {})
    assert fired.abort is None and fired.results[0][1].status == "timeout"
    assert seen.read_text().startswith("timeout||")  # RALPH_HOOK_ACTION, then an empty message


def test_an_undeliverable_message_still_waits_for_an_answer(tmp_path) -> None:
    engine = engine_for(tmp_path, GATE.format(url="http://127.0.0.1:9", timeout=0.3, extra="retries = 0",
                                              seen=tmp_path / "seen"))
    fired = engine.fire("stage_complete", {})
    result = fired.results[0][1]
    assert result.status == "timeout" and "not sent" in result.message and fired.abort


class Screen:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.status_text = "ralph-loop plan · iteration 1/3"
        self.statuses: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)

    def status(self, text: str) -> None:
        self.statuses.append(text)
        self.status_text = text

    def output(self, chunk: bytes) -> None:
        pass

    def tick(self) -> None:
        pass


def test_the_status_line_and_ralph_status_show_the_open_gate(tmp_path, endpoint) -> None:
    server = endpoint()
    engine = engine_for(tmp_path, GATE.format(url=server.url, timeout=60, extra="", seen=tmp_path / "seen"))
    screen = Screen()
    engine.display = screen
    seen_status: list[str] = []

    def answer_when_listed() -> None:
        from ralph.commands.status import collect, render

        for _ in range(600):
            report = collect(engine.root, None, 5)
            if report.get("waiting"):
                seen_status.append(render(report))
                with urllib.request.urlopen(report["waiting"]["url"] + "?action=approve", timeout=30):
                    return
            threading.Event().wait(0.05)

    helper = threading.Thread(target=answer_when_listed)
    helper.start()
    fired = engine.fire("stage_complete", {})
    helper.join(60)
    assert fired.abort is None
    assert any("waiting for approval at stage_complete (plan approval)" in s and "/ralph/callback/[token]" in s for s in screen.statuses)
    assert screen.status_text == "ralph-loop plan · iteration 1/3"  # restored
    assert any("answer at http://127.0.0.1:" in line for line in screen.lines)
    assert "waiting for approval at stage_complete (plan approval)" in seen_status[0]
    assert "?action=approve" in seen_status[0]


def test_a_gate_that_cannot_open_its_port_stops_the_loop(tmp_path, endpoint) -> None:
    import socket

    server = endpoint()
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        port = busy.getsockname()[1]
        engine = engine_for(tmp_path, GATE.format(url=server.url, timeout=60, extra=f"callback_port = {port}", seen=tmp_path / "seen"))
        fired = engine.fire("stage_complete", {})
    finally:
        busy.close()
    assert fired.abort and f"cannot listen on 127.0.0.1:{port}" in fired.abort
    assert server.requests == []  # nothing announced that nobody could answer
