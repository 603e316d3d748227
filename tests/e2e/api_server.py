"""A scripted Anthropic Messages API for driving the real Claude Code CLI.

Stdlib only, loopback only, bounded lifetime. It plays a script turn by turn:
turn i answers request i of the main conversation, streamed as SSE the way the
real API does. Every request is recorded so a test can assert what the model
was told (tool_result text, is_error, injected context, Stop feedback).

Runs in-process (`ScriptedServer`) or standalone:

    python tests/e2e/api_server.py --script script.json --record requests.json \
        --url-file url.txt --lifetime 120

`script.json` is either a list of turns (one conversation shared by every
client session) or {"sessions": [[turns], [turns], ...]} (the n-th distinct
client session plays the n-th list; for a loop that spawns `claude -p` once per
iteration). The recording is rewritten after every request and on exit.

A turn is a dict:
    {"text": "..."}                                 final answer, stop_reason end_turn
    {"tool_use": {"name", "input", "id"?}}          one tool call, stop_reason tool_use
    {"tool_uses": [{...}, {...}]}                   parallel tool calls
    {"text": "...", "tool_use": {...}}              text then tool call(s)
    {"error": {"status": 500, "type": "api_error", "message": "..."}}
                                                    an HTTP error (the client's retry is the next request)
    any turn may add "delay": seconds               wait before answering
    {"disconnect": true}                            close the connection without an answer
                                                    (a network error as the client sees it)
    any turn may add "headers": {name: value}       extra response headers (rate-limit headers
                                                    such as anthropic-ratelimit-unified-reset, retry-after)
This module imports nothing from the package so it also runs as a script.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EXHAUSTED_TEXT = "[e2e script exhausted: no scripted turn left for this request]"
SIDE_TEXT = "E2E side answer"
DEFAULT_MODEL = "claude-e2e-scripted"

# Requests that are not the agent's conversation (titles, summaries, topic
# detection, ...) are answered without consuming a scripted turn. The agent's
# own requests carry the tool list; side queries carry none.
MAIN_TOOL_MARKERS = ("Bash", "Read", "Edit", "Write")


def tool_use(name: str, input: dict, id: str | None = None) -> dict:
    block = {"name": name, "input": input}
    if id:
        block["id"] = id
    return {"tool_use": block}


def bash(command: str, description: str = "run a command", id: str | None = None) -> dict:
    return tool_use("Bash", {"command": command, "description": description}, id)


def read(file_path: str, id: str | None = None) -> dict:
    return tool_use("Read", {"file_path": file_path}, id)


def edit(file_path: str, old_string: str, new_string: str, id: str | None = None) -> dict:
    return tool_use("Edit", {"file_path": file_path, "old_string": old_string, "new_string": new_string}, id)


def write(file_path: str, content: str, id: str | None = None) -> dict:
    return tool_use("Write", {"file_path": file_path, "content": content}, id)


def text(message: str) -> dict:
    return {"text": message}


RATE_LIMIT_MESSAGE = "This request would exceed your account's rate limit. Please try again later."


def unified_headers(status: str, reset_at: float, claim: str = "five_hour") -> dict:
    """The rate-limit headers of a claude.ai login's answers; Claude Code turns
    them into a rate_limit_event (and, on a 429, api_error_params.rate_limit_info
    with resetsAt) only for such a login (client_env(..., login="subscription"))."""
    return {
        "anthropic-ratelimit-unified-status": status,
        "anthropic-ratelimit-unified-reset": str(int(reset_at)),
        "anthropic-ratelimit-unified-representative-claim": claim,
    }


def rate_limited(reset_at: float | None = None, retry_after: int | None = None) -> dict:
    """A 429 rate_limit_error; with `reset_at` (epoch seconds) the unified
    headers say when the limit resets (status rejected), with `retry_after` a
    retry-after header. The client does not retry a 429 that carries either;
    one without headers it retries itself (CLAUDE_CODE_MAX_RETRIES)."""
    turn: dict = {"error": {"status": 429, "type": "rate_limit_error", "message": RATE_LIMIT_MESSAGE}}
    headers = {}
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
    if reset_at is not None:
        headers.update(unified_headers("rejected", reset_at))
    if headers:
        turn["headers"] = headers
    return turn


def overloaded() -> dict:
    """529 overloaded_error (the client retries it itself unless CLAUDE_CODE_MAX_RETRIES=0)."""
    return {"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}}


def disconnect() -> dict:
    """The connection closes without an answer: a network error."""
    return {"disconnect": True}


def classify(method: str, path: str, body: object) -> str:
    """main | side | count_tokens | other | unknown."""
    route = path.split("?", 1)[0].rstrip("/")
    if method == "POST" and route.endswith("/v1/messages/count_tokens"):
        return "count_tokens"
    if method == "POST" and route.endswith("/v1/messages"):
        if isinstance(body, dict) and _first_text(body) == "Warmup":
            return "side"  # 2.0.x warms its subagents up with a request that lists tools
        if isinstance(body, dict):
            names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
            if any(marker in names for marker in MAIN_TOOL_MARKERS):
                return "main"
        return "side"
    if method in ("GET", "HEAD", "OPTIONS"):
        return "other"
    return "unknown"


def _first_text(body: dict) -> str:
    messages = body.get("messages")
    first = messages[0] if isinstance(messages, list) and messages and isinstance(messages[0], dict) else {}
    content = first.get("content")
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict)).strip()
    return content.strip() if isinstance(content, str) else ""


def _blocks_for_turn(turn: dict, counter: int) -> tuple[list[dict], str]:
    """Content blocks and stop_reason for one scripted turn."""
    blocks: list[dict] = []
    if turn.get("text"):
        blocks.append({"type": "text", "text": str(turn["text"])})
    calls = list(turn.get("tool_uses") or [])
    if turn.get("tool_use"):
        calls.append(turn["tool_use"])
    for n, call in enumerate(calls):
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id") or f"toolu_e2e_{counter:03d}_{n}",
                "name": call["name"],
                "input": call.get("input") or {},
            }
        )
    if not blocks:
        blocks.append({"type": "text", "text": "(empty scripted turn)"})
    return blocks, ("tool_use" if calls else "end_turn")


def _usage(output_tokens: int = 1) -> dict:
    return {"input_tokens": 100, "output_tokens": output_tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def _event(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def sse_body(blocks: list[dict], stop_reason: str, model: str, message_id: str) -> bytes:
    """The SSE stream the real API would send for these content blocks."""
    out = [
        _event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": _usage(),
                },
            },
        ),
        _event("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            out.append(_event("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}))
            words = block["text"]
            # two deltas, like a real stream that splits the answer
            for part in (words[: len(words) // 2], words[len(words) // 2 :]):
                if part:
                    out.append(_event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": part}}))
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            out.append(_event("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
            payload = json.dumps(block["input"])
            cut = max(1, len(payload) // 2)
            for part in ("", payload[:cut], payload[cut:]):
                out.append(_event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": part}}))
        out.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(
        _event(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None}, "usage": {"output_tokens": 20}},
        )
    )
    out.append(_event("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def message_json(blocks: list[dict], stop_reason: str, model: str, message_id: str) -> bytes:
    return json.dumps(
        {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": _usage(20),
        }
    ).encode()


def _error_response(error: dict) -> tuple[int, str, bytes]:
    status = int(error.get("status", 500))
    body = {"type": "error", "error": {"type": error.get("type", "api_error"), "message": error.get("message", "scripted error")}}
    return status, "application/json", json.dumps(body).encode()


class Script:
    """Which scripted turn answers the next main request (thread-safe)."""

    def __init__(self, turns: list[dict] | None = None, sessions: list[list[dict]] | None = None) -> None:
        if (turns is None) == (sessions is None):
            raise ValueError("give exactly one of turns= (one conversation) or sessions= (one list per client session)")
        self.shared = list(turns) if turns is not None else None
        self.sessions = [list(s) for s in sessions] if sessions is not None else None
        self.session_order: list[str] = []  # client session ids, in order of first request
        self.position: dict[str, int] = {}
        self.lock = threading.Lock()

    def next_turn(self, session: str) -> tuple[dict | None, int, int]:
        """(turn or None when exhausted, conversation index, turn index)."""
        with self.lock:
            if session not in self.position:
                self.session_order.append(session)
                self.position[session] = 0
            if self.shared is not None:
                key = "*"
                index = self.position.get(key, 0)
                self.position[key] = index + 1
                return (self.shared[index] if index < len(self.shared) else None), 0, index
            conversation = self.session_order.index(session)
            index = self.position[session]
            self.position[session] = index + 1
            turns = self.sessions[conversation] if conversation < len(self.sessions) else []
            return (turns[index] if index < len(turns) else None), conversation, index


class ScriptedServer:
    """Serve `script` on 127.0.0.1:<free port> for at most `lifetime` seconds."""

    def __init__(
        self,
        turns: list[dict] | None = None,
        *,
        sessions: list[list[dict]] | None = None,
        lifetime: float = 120.0,
        record_path: str | None = None,
        log=None,
    ) -> None:
        self.script = Script(turns, sessions)
        self.lifetime = lifetime
        self.record_path = record_path
        self.requests: list[dict] = []
        self.unknown_paths: list[str] = []
        self.log = log or (lambda message: sys.stderr.write(f"[e2e-api] {message}\n"))
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self.timed_out = False
        self._stopped = False

    # ---- lifecycle ----

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> ScriptedServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.lifetime, self._expire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def _expire(self) -> None:
        self.timed_out = True
        self.log(f"lifetime of {self.lifetime:.0f}s reached; shutting down")
        self.stop()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            already, self._stopped = self._stopped, True
        if not already and self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        self.save()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- views ----

    def main_requests(self) -> list[dict]:
        with self._lock:
            return [r for r in self.requests if r["kind"] == "main"]

    def save(self) -> None:
        if not self.record_path:
            return
        with self._lock:
            data = json.dumps({"requests": self.requests, "unknown_paths": self.unknown_paths, "timed_out": self.timed_out})
        tmp = f"{self.record_path}.tmp{os.getpid()}.{threading.get_ident()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(data)
        os.replace(tmp, self.record_path)

    # ---- request handling ----

    def answer(self, method: str, path: str, headers: dict, raw: bytes) -> tuple[int, str, bytes]:
        body: object = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        kind = classify(method, path, body)
        record = {
            "index": 0,
            "t": time.time(),
            "method": method,
            "path": path,
            "kind": kind,
            "session": headers.get("x-claude-code-session-id", ""),
            "headers": {k: v for k, v in headers.items() if k not in ("x-api-key", "authorization")},
            "body": body,
            "raw": None if body is not None or not raw else raw[:4000].decode("utf-8", "replace"),
            "turn": None,
            "conversation": None,
            "exhausted": False,
        }
        wants_stream = isinstance(body, dict) and bool(body.get("stream"))
        model = body.get("model", DEFAULT_MODEL) if isinstance(body, dict) else DEFAULT_MODEL
        status, ctype, payload = 200, "application/json", b"{}"
        extra_headers: dict = {}
        if kind == "main":
            turn, conversation, index = self.script.next_turn(record["session"])
            record["turn"], record["conversation"] = index, conversation
            if turn is None:
                record["exhausted"] = True
                turn = {"text": EXHAUSTED_TEXT}
            if turn.get("delay"):
                time.sleep(float(turn["delay"]))
            extra_headers = {str(k): str(v) for k, v in (turn.get("headers") or {}).items()}
            if turn.get("disconnect"):
                status, ctype, payload = 0, "", b""
            elif turn.get("error"):
                status, ctype, payload = _error_response(turn["error"])
            else:
                blocks, stop_reason = _blocks_for_turn(turn, index)
                status, ctype, payload = self._message(blocks, stop_reason, model, wants_stream, f"msg_e2e_{conversation}_{index}")
        elif kind == "side":
            status, ctype, payload = self._message([{"type": "text", "text": SIDE_TEXT}], "end_turn", model, wants_stream, "msg_e2e_side")
        elif kind == "count_tokens":
            payload = json.dumps({"input_tokens": 100}).encode()
        elif kind == "unknown":
            status = 404
            payload = json.dumps({"type": "error", "error": {"type": "not_found_error", "message": f"e2e server: no route {method} {path}"}}).encode()
        with self._lock:
            record["index"] = len(self.requests)
            self.requests.append(record)
            if kind in ("unknown", "other"):
                self.unknown_paths.append(f"{method} {path}")
        if kind in ("unknown", "other"):
            self.log(f"unscripted request {method} {path} -> {status}")
        self.save()
        return status, ctype, payload, extra_headers

    @staticmethod
    def _message(blocks: list[dict], stop_reason: str, model: str, stream: bool, message_id: str) -> tuple[int, str, bytes]:
        if stream:
            return 200, "text/event-stream", sse_body(blocks, stop_reason, model, message_id)
        return 200, "application/json", message_json(blocks, stop_reason, model, message_id)


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(chunks)
        else:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        encoding = self.headers.get("content-encoding", "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        return raw

    def _serve(self) -> None:
        raw = self._read_body() if self.command not in ("GET", "HEAD", "OPTIONS") else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, ctype, payload, extra_headers = self.owner.answer(self.command, self.path, headers, raw)
        if status == 0:  # a scripted disconnect: no status line, the socket just closes
            self.close_connection = True
            return
        self.send_response(status)
        self.send_header("content-type", ctype)
        for name, value in extra_headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", "req_e2e")
        if ctype == "text/event-stream":
            self.send_header("cache-control", "no-cache")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
            self.wfile.flush()

    do_POST = do_GET = do_HEAD = do_PUT = do_DELETE = do_OPTIONS = _serve


def load_script(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if isinstance(data, list):
        return {"turns": data}
    if isinstance(data, dict) and ("turns" in data or "sessions" in data):
        return {k: data[k] for k in ("turns", "sessions") if k in data}
    raise SystemExit(f"{path}: expected a list of turns or {{\"sessions\": [[...], ...]}}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scripted Messages API on 127.0.0.1 for Claude Code e2e runs")
    parser.add_argument("--script", required=True, help="JSON: a list of turns, or {\"sessions\": [[turns], ...]}")
    parser.add_argument("--record", required=True, help="where to write the recorded requests (JSON, rewritten per request)")
    parser.add_argument("--url-file", help="write the base URL here once listening")
    parser.add_argument("--lifetime", type=float, default=120.0, help="shut down after this many seconds")
    args = parser.parse_args(argv)
    server = ScriptedServer(**load_script(args.script), lifetime=args.lifetime, record_path=args.record).start()
    if args.url_file:
        tmp = args.url_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(server.url)
        os.replace(tmp, args.url_file)
    print(server.url, flush=True)
    import signal

    signal.signal(signal.SIGTERM, lambda signum, frame: server.stop())
    try:
        while server._thread is not None and server._thread.is_alive():
            server._thread.join(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
