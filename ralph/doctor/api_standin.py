"""A loopback stand-in of the Anthropic Messages API, so `ralph doctor` can
run the real `claude -p` with no model and no network: it plays a fixed list
of assistant turns (text, or one tool call) to the client's conversation,
streamed as server-sent events like the real API, and keeps what the client
sent back (the tool results, with the hook denials the model would see).

The conversation is the one whose first message holds `marker` (the
prompt); every other request (titles, summaries, the subagents' "Warmup"
that 2.0.x sends with tools) gets the closing text and takes no turn, as
does every request after the last turn.
Listens on 127.0.0.1 only, on a free port, until stop().
"""
from __future__ import annotations

import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CLOSING_TEXT = "Done."
MODEL = "ralph-doctor-stand-in"


def text_turn(message: str) -> dict:
    return {"text": message}


def tool_turn(tool_id: str, name: str, tool_input: dict) -> dict:
    return {"tool_use": {"id": tool_id, "name": name, "input": tool_input}}


def _event(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def message_stream(turn: dict, model: str, message_id: str) -> bytes:
    """The SSE body the real API sends for one assistant turn."""
    usage = {"input_tokens": 1, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    start = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
             "stop_reason": None, "stop_sequence": None, "usage": usage}
    out = [_event("message_start", {"type": "message_start", "message": start})]
    call = turn.get("tool_use")
    if call:
        block = {"type": "tool_use", "id": call["id"], "name": call["name"], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call["input"])}
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": turn.get("text") or CLOSING_TEXT}
    out.append(_event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}))
    out.append(_event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}))
    out.append(_event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    stop_reason = "tool_use" if call else "end_turn"
    out.append(_event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                        "usage": {"output_tokens": 1}}))
    out.append(_event("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def message_json(turn: dict, model: str, message_id: str) -> bytes:
    call = turn.get("tool_use")
    content = ([{"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["input"]}] if call
               else [{"type": "text", "text": turn.get("text") or CLOSING_TEXT}])
    return json.dumps({"id": message_id, "type": "message", "role": "assistant", "model": model, "content": content,
                       "stop_reason": "tool_use" if call else "end_turn", "stop_sequence": None,
                       "usage": {"input_tokens": 1, "output_tokens": 1}}).encode()


class StandIn:
    """Serve `turns` on 127.0.0.1 to the conversation that began with
    `marker`; `conversation` holds each of its requests' bodies."""

    def __init__(self, turns: list[dict], marker: str) -> None:
        self.turns = list(turns)
        self.marker = marker
        self.conversation: list[dict] = []
        self.requests = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> StandIn:
        owner = self

        class Handler(_Handler):
            stand_in = owner

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def answer(self, method: str, path: str, body: object) -> tuple[int, str, bytes]:
        with self._lock:
            self.requests += 1
        route = path.split("?", 1)[0].rstrip("/")
        if method != "POST":
            return 200, "application/json", b"{}"
        if route.endswith("/count_tokens"):
            return 200, "application/json", b'{"input_tokens": 1}'
        if not route.endswith("/v1/messages") or not isinstance(body, dict):
            return 404, "application/json", b'{"type": "error", "error": {"type": "not_found_error", "message": "stand-in"}}'
        messages = body.get("messages")
        first = messages[0] if isinstance(messages, list) and messages and isinstance(messages[0], dict) else {}
        turn = text_turn(CLOSING_TEXT)
        if self.marker in _text_of(first.get("content")):
            with self._lock:
                number = len(self.conversation)
                self.conversation.append(body)
            if number < len(self.turns):
                turn = self.turns[number]
        model = body.get("model") if isinstance(body.get("model"), str) else MODEL
        message_id = f"msg_ralph_doctor_{self.requests}"
        if body.get("stream"):
            return 200, "text/event-stream", message_stream(turn, model, message_id)
        return 200, "application/json", message_json(turn, model, message_id)

    def tool_results(self) -> dict[str, dict]:
        """tool_use_id -> {"is_error", "text"} as the client reported them."""
        found: dict[str, dict] = {}
        with self._lock:
            bodies = list(self.conversation)
        for body in bodies:
            for message in body.get("messages") or ():
                content = message.get("content") if isinstance(message, dict) else None
                for block in content if isinstance(content, list) else ():
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        found.setdefault(block.get("tool_use_id"), {"is_error": bool(block.get("is_error")),
                                                                   "text": _text_of(block.get("content"))})
        return found


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part.get("text") if isinstance(part, dict) else part) for part in content)
    return ""


class _Handler(BaseHTTPRequestHandler):
    stand_in: StandIn
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's signature
        pass

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("content-length") or 0))
        chunks = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()

    def _serve(self) -> None:
        raw = b""
        if self.command == "POST":
            raw = self._read_body()
            if self.headers.get("content-encoding", "").lower() == "gzip":
                raw = gzip.decompress(raw)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        status, kind, payload = self.stand_in.answer(self.command, self.path, body)
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_POST = do_GET = do_HEAD = _serve
