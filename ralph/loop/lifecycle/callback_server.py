"""The approval gate's callback server: one URL, one answer.

Listens on 127.0.0.1 only. The URL carries a fresh token of 256 bits
(`secrets`) in its path, so `${CALLBACK_URL}?action=approve` is a working
link. It accepts

    GET  <url>?action=approve|reject|continue|abort[&message=...]
    POST <url>   {"action": "approve", "message": "Looks good"}

compares the token in constant time (hmac.compare_digest), answers 404 to
every other path, method or peer, and stops after the first valid call (the
token is single-use) or at its timeout. Each connection has a short socket
timeout and a size limit, so bogus clients cannot hold the gate.
"""
from __future__ import annotations

import hmac
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

HOST = "127.0.0.1"
PATH_PREFIX = "/ralph/callback/"
ACTIONS = ("approve", "reject", "continue", "abort")
STOPPING_ACTIONS = ("reject", "abort")
MAX_BODY = 64 * 1024
MAX_MESSAGE = 4000
SOCKET_TIMEOUT = 10.0  # seconds a connection may take to send its request


def loopback(address: str) -> bool:
    return address == "::1" or address.startswith("127.") or address == "::ffff:127.0.0.1"


class Answer:
    """The person's answer: action + message, and the raw body for RALPH_HOOK_RESPONSE."""

    __slots__ = ("action", "message", "body")

    def __init__(self, action: str, message: str, body: dict) -> None:
        self.action = action
        self.message = message
        self.body = body

    @property
    def stops(self) -> bool:
        return self.action in STOPPING_ACTIONS

    def json(self) -> str:
        return json.dumps(self.body, ensure_ascii=False, sort_keys=True)


class CallbackServer:
    """Start with `start()`, share `url`, then `wait(timeout, stopping)`."""

    def __init__(self, port: int = 0, host: str = HOST) -> None:
        if host != HOST:
            raise ValueError("the callback server listens on 127.0.0.1 only")
        self.token = secrets.token_urlsafe(32)  # 256 bits
        self.answer: Answer | None = None
        self.rejected = 0  # requests answered 404/400, for the trace
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}{PATH_PREFIX}{self.token}"

    @property
    def shown_url(self) -> str:
        """The URL for logs: the token is a secret."""
        return f"http://{HOST}:{self.port}{PATH_PREFIX}[token]"

    def start(self) -> "CallbackServer":
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self._thread.start()
        return self

    def wait(self, timeout: float, stopping: object = None, tick: object = None) -> Answer | None:
        """The answer, or None at the timeout (or once `stopping()` is true)."""
        deadline = time.monotonic() + timeout
        try:
            while not self._done.is_set():
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (stopping is not None and stopping()):  # type: ignore[operator]
                    break
                self._done.wait(min(remaining, 0.5))
                if tick is not None:
                    tick()  # type: ignore[operator]
        finally:
            self.close()
        return self.answer

    def close(self) -> None:
        with self._lock:
            self.token_used()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(5)
            self._thread = None
        self._server.server_close()

    def token_used(self) -> None:
        # nothing can match an empty token: compare_digest of different lengths is False
        self.token = ""

    # ---- requests ----

    def accept(self, path: str, method: str, body: bytes, peer: str) -> tuple[int, str]:
        """(status, text) for one request; the first valid one ends the wait."""
        if not loopback(peer):
            return self._reject(404)
        parts = urlsplit(path)
        if not parts.path.startswith(PATH_PREFIX):
            return self._reject(404)
        candidate = parts.path[len(PATH_PREFIX):]
        with self._lock:
            token = self.token
            if not token or not hmac.compare_digest(candidate.encode("utf-8", "replace"), token.encode("ascii")):
                return self._reject(404)
            if method == "GET":
                query = parse_qs(parts.query, keep_blank_values=True)
                action = (query.get("action") or [""])[0]
                message = (query.get("message") or [""])[0]
                data: object = {"action": action, "message": message}
            elif method == "POST":
                try:
                    data = json.loads(body.decode("utf-8")) if body.strip() else {}
                except (UnicodeDecodeError, ValueError):
                    return self._reject(400, 'the body must be JSON: {"action": "approve", "message": "..."}')
                if not isinstance(data, dict):
                    return self._reject(400, 'the body must be a JSON object: {"action": "approve", "message": "..."}')
                action = data.get("action")
                message = data.get("message", "")
            else:
                return self._reject(404)
            if action not in ACTIONS:
                return self._reject(400, f"action must be one of {', '.join(ACTIONS)}")
            if not isinstance(message, str):
                message = json.dumps(message, ensure_ascii=False)
            self.answer = Answer(action, message[:MAX_MESSAGE], data)  # type: ignore[arg-type]
            self.token_used()  # single use
        self._done.set()
        return 200, f"ralph-loop: {action} received. You can close this page.\n"

    def _reject(self, status: int, text: str = "not found") -> tuple[int, str]:
        self.rejected += 1
        return status, text + "\n"

    def _handler_class(self) -> type:
        server = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "ralph-callback"
            sys_version = ""
            timeout = SOCKET_TIMEOUT

            def _answer(self, method: str) -> None:
                body = b""
                if method == "POST":
                    try:
                        length = int(self.headers.get("Content-Length") or 0)
                    except ValueError:
                        length = -1
                    if length < 0 or length > MAX_BODY:
                        self._send(*server._reject(413, "request too large"))
                        return
                    body = self.rfile.read(length)
                status, text = server.accept(self.path, method, body, self.client_address[0])
                self._send(status, text)

            def _send(self, status: int, text: str) -> None:
                data = text.encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "text/plain; charset=utf-8")
                    self.send_header("Content-Length", str(len(data)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass
                self.close_connection = True

            def do_GET(self) -> None:  # noqa: N802 - http.server's names
                self._answer("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._answer("POST")

            def do_HEAD(self) -> None:  # noqa: N802 - a link preview must not approve anything
                self._send(*server._reject(404))

            def do_PUT(self) -> None:  # noqa: N802
                self._answer("PUT")

            def do_DELETE(self) -> None:  # noqa: N802
                self._answer("DELETE")

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass  # the URL holds the token: never logged

        return Handler
