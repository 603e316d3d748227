"""Running a webhook hook (declared in ralph.loop.lifecycle.webhook_config): the
request rendered and sent with retries, and with `await = true` the approval
gate (ralph.loop.lifecycle.callback_server) that waits for a person's answer."""
from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import ssl
import time
from urllib.parse import quote, unquote, urlsplit

from ralph.loop.lifecycle import template
from ralph.loop.lifecycle.actions import FAILED, SUCCESS, TIMEOUT, ActionResult, RunContext
from ralph.loop.lifecycle.callback_server import CallbackServer
from ralph.loop.lifecycle.webhook_config import WAITING_FILE, expand_env, known_exports, loopback_addresses, redact_url, url_problem
from ralph.redaction import redact

RESPONSE_KEEP = 2000  # bytes of the endpoint's answer kept for the trace


# ---- the request ----


def substitute(text: str, values: dict[str, str], env: dict[str, str], exports: dict[str, str], url_quote: bool = False) -> str:
    """Context variables (percent-encoded in a URL), then any other ${NAME}
    from the environment (as is: `url = "${SLACK_WEBHOOK}"`)."""
    exports = known_exports(exports)
    if url_quote:
        text = template.substitute(text, lambda key, state: quote(values.get(key, ""), safe=""), exports)
    else:
        text = template.json_value(text, values, exports)
    return expand_env(text, env)


def render_body(body: object, values: dict[str, str], env: dict[str, str], exports: dict[str, str]) -> object:
    """The body with every string leaf substituted; encoded as JSON afterwards."""
    if isinstance(body, str):
        return substitute(body, values, env, exports)
    if isinstance(body, dict):
        return {str(k): render_body(v, values, env, exports) for k, v in body.items()}
    if isinstance(body, list):
        return [render_body(v, values, env, exports) for v in body]
    if hasattr(body, "isoformat"):  # TOML dates and times
        return body.isoformat()  # type: ignore[attr-defined]
    return body


class Sent:
    __slots__ = ("ok", "status", "body", "error", "attempts", "permanent")

    def __init__(self) -> None:
        self.ok = False
        self.status: int | None = None
        self.body = b""
        self.error = ""
        self.attempts = 0
        self.permanent = False  # a 4xx: retrying will not help


class PinnedConnection(http.client.HTTPConnection):
    """Plain HTTP to addresses resolved and checked beforehand: the name
    goes in the Host header only, never to the resolver again."""

    def __init__(self, host: str, port: int | None, addresses: list[tuple], timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.addresses = addresses

    def connect(self) -> None:
        error: OSError = OSError("no address")
        for family, kind, proto, _, address in self.addresses:
            sock = socket.socket(family, kind, proto)
            try:
                sock.settimeout(self.timeout)
                sock.connect(address)
                self.sock = sock
                return
            except OSError as e:
                sock.close()
                error = e
        raise error


def send_once(method: str, url: str, headers: dict[str, str], data: bytes | None, timeout: float) -> Sent:
    sent = Sent()
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host = parts.hostname or ""
    try:
        if parts.scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(host, parts.port, timeout=timeout,
                                                                           context=ssl.create_default_context())
        else:
            addresses, problem = loopback_addresses(url, host, parts.port)
            if problem:
                sent.error, sent.permanent = f"url {problem}", True
                return sent
            conn = PinnedConnection(host, parts.port, addresses, timeout)
        try:
            all_headers = {"User-Agent": "ralph-hooks", **headers}
            if data is not None:
                all_headers.setdefault("Content-Type", "application/json")
            if parts.username or parts.password:
                pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}".encode()
                all_headers.setdefault("Authorization", "Basic " + base64.b64encode(pair).decode())
            conn.request(method, target, body=data, headers=all_headers)
            response = conn.getresponse()
            sent.status = response.status
            sent.body = response.read(64 * 1024)
        finally:
            conn.close()
    except (OSError, http.client.HTTPException, ValueError) as e:
        sent.error = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        return sent
    sent.ok = 200 <= sent.status < 300
    if not sent.ok:
        sent.error = f"HTTP {sent.status}"
        sent.permanent = 400 <= sent.status < 500 and sent.status not in (408, 425, 429)
    return sent


def send(method: str, url: str, headers: dict[str, str], data: bytes | None, timeout: float, retries: int,
         backoff: float, stopping: object = None, sleep: object = time.sleep) -> Sent:
    """Send with `retries` more attempts after a failure, waiting backoff,
    2x backoff, 4x ... (at most 60 s) between them."""
    delay = backoff
    sent = Sent()
    for attempt in range(1, retries + 2):
        sent = send_once(method, url, headers, data, timeout)
        sent.attempts = attempt
        if sent.ok or sent.permanent or attempt == retries + 1:
            break
        if stopping is not None and stopping():  # type: ignore[operator]
            break
        sleep(min(delay, 60.0))  # type: ignore[operator]
        delay *= 2
    return sent


# ---- the gate's visibility ----


def display_of(ctx: RunContext) -> object | None:
    """The loop's terminal display, if this runs inside ralph-loop."""
    engine = getattr(ctx.background, "engine", None)
    return getattr(engine, "display", None)


def write_waiting(ctx: RunContext, url: str, timeout: float, name: str) -> str:
    """`.ralph/waiting.json` (0600: it holds the token) for `ralph status`."""
    path = os.path.join(ctx.state_dir, WAITING_FILE)
    body = json.dumps({"point": ctx.point, "hook": name, "url": url, "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "until": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + timeout)),
                       "pid": os.getpid()}, indent=1) + "\n"
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, body.encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path


# ---- the action ----


def run(action: object, ctx: RunContext) -> ActionResult:
    started = time.monotonic()
    spec = action
    method = str(spec["method"])  # type: ignore[index]
    values = dict(ctx.values)
    url = substitute(str(spec["url"]), values, ctx.env, ctx.exports, url_quote=True)  # type: ignore[index]
    shown = f"{method} {redact_url(url)}"
    headers = {k: substitute(v, values, ctx.env, ctx.exports) for k, v in (spec.get("headers") or {}).items()}  # type: ignore[attr-defined]
    problem = url_problem(url, resolve=False)  # a host name is resolved once, by send_once, which connects to what it checked
    if problem:
        problem = f"url {problem}"
    elif any(c in k + v for k, v in headers.items() for c in "\r\n"):
        problem = "a header value holds a line break after substitution"
    gate = None
    if spec["await"]:  # type: ignore[index]
        try:
            gate = CallbackServer(int(spec["callback_port"])).start()  # type: ignore[index, call-overload]
        except OSError as e:
            why = f"cannot listen on 127.0.0.1:{spec['callback_port']} for the approval callback: {e.strerror or e}"  # type: ignore[index]
            # a gate that cannot open must not let the loop through unapproved
            abort = None if spec["on_timeout"] == "continue" else why  # type: ignore[index]
            return ActionResult(FAILED, message=why, abort=abort, command=shown)
        values["callback_url"] = gate.url
    if problem and gate is None:
        return ActionResult(FAILED, duration=time.monotonic() - started, message=f"{problem}; not sent", command=shown)
    try:
        body = spec.get("body")  # type: ignore[attr-defined]
        data: bytes | None
        if method in ("GET", "DELETE") and body is None:
            data = None
        elif body is None:
            data = ctx.stdin  # the hook context, as every hook gets it
        else:
            rendered = render_body(body, values, {**ctx.env, **({"CALLBACK_URL": gate.url} if gate else {})}, ctx.exports)
            data = json.dumps(rendered, ensure_ascii=False).encode("utf-8")
        if problem:  # the gate still waits: the person can answer from the terminal
            sent_text = f"not sent ({problem})"
            return await_answer(spec, ctx, gate, sent_text, shown, started)
        sent = send(method, url, headers, data, float(spec["send_timeout"]), int(spec["retries"]),  # type: ignore[index, call-overload]
                    float(spec["backoff"]), stopping=ctx.stopping)  # type: ignore[index, arg-type]
        sent_text = f"{'sent' if sent.ok else 'not sent'} ({sent.error or f'HTTP {sent.status}'}; {sent.attempts} attempt(s))"
        output = sent.body[:RESPONSE_KEEP].decode("utf-8", "replace")
        if gate is None:
            status = SUCCESS if sent.ok else FAILED
            return ActionResult(status, exit=sent.status, duration=time.monotonic() - started, output=redact(output),
                                output_bytes=len(sent.body), message="" if sent.ok else sent_text, command=shown)
        return await_answer(spec, ctx, gate, sent_text, shown, started)
    finally:
        if gate is not None:
            gate.close()


def await_answer(spec: object, ctx: RunContext, gate: object, sent_text: str, shown: str, started: float) -> ActionResult:
    """Wait for the person; what they said decides what the loop does."""
    timeout = float(spec["timeout"])  # type: ignore[index]
    name = str(spec.get("name") or spec.get("description") or "webhook")  # type: ignore[attr-defined]
    display = display_of(ctx)
    waiting = ""
    try:
        waiting = write_waiting(ctx, gate.url, timeout, name)  # type: ignore[attr-defined]
    except OSError:
        pass
    previous = getattr(display, "status_text", "")
    if display is not None:
        display.message(f"hooks: {ctx.point}: waiting for approval ({name}, message {sent_text}); "  # type: ignore[attr-defined]
                        f"answer at {gate.url}?action=approve|reject (or `ralph status`)")  # type: ignore[attr-defined]
        display.status(f"ralph-loop · waiting for approval at {ctx.point} ({name}) · {gate.shown_url} · {{elapsed}}")  # type: ignore[attr-defined]
    tick = getattr(display, "tick", None)
    try:
        answer = gate.wait(timeout, ctx.stopping, tick)  # type: ignore[attr-defined]
    finally:
        if waiting:
            try:
                os.unlink(waiting)
            except OSError:
                pass
        if display is not None:
            display.status(previous)  # type: ignore[attr-defined]
    duration = time.monotonic() - started
    if answer is None:
        if ctx.stopping():  # type: ignore[operator]
            return ActionResult(FAILED, duration=duration, message="stopped while waiting for approval", command=shown)
        exports = {"RALPH_HOOK_RESPONSE": json.dumps({"action": "timeout", "message": ""}), "RALPH_HOOK_ACTION": "timeout",
                   "RALPH_HOOK_MESSAGE": ""}
        why = f"no answer within {timeout:g}s at {gate.shown_url} (message {sent_text})"  # type: ignore[attr-defined]
        if spec["on_timeout"] == "continue":  # type: ignore[index]
            return ActionResult(TIMEOUT, exit=124, duration=duration, message=f"{why}; on_timeout = continue",
                                exports=exports, command=shown)
        return ActionResult(TIMEOUT, exit=124, duration=duration, message=why, abort=f"{name}: {why}",
                            exports=exports, command=shown)
    exports = {"RALPH_HOOK_RESPONSE": answer.json(), "RALPH_HOOK_ACTION": answer.action, "RALPH_HOOK_MESSAGE": answer.message}
    said = f"{answer.action}" + (f": {answer.message}" if answer.message else "")
    if answer.stops:
        reason = answer.message or f"{answer.action} at the {name} approval gate (no message)"
        return ActionResult(SUCCESS, exit=0, duration=duration, output=said, message=f"answer: {said}",
                            abort=reason, exports=exports, command=shown)
    return ActionResult(SUCCESS, exit=0, duration=duration, output=said, message=f"answer: {said}", exports=exports,
                        command=shown)
