"""The webhook action (`type = "webhook"`): one HTTP request, and with
`await = true` an approval gate that waits for a person's answer.

- The request: `method` (POST) to `url` with `headers`; `body` is a TOML
  table sent as JSON. Template variables in the body's strings are
  substituted into the *values* and the whole body is then JSON-encoded, so a
  story title full of quotes stays one string; `${NAME}` of anything else
  comes from the environment (`url = "${SLACK_WEBHOOK}"`). Without a body the
  hook context (the JSON every hook gets on stdin) is sent.
- Sending: the standard library's http.client, `send_timeout` per attempt,
  `retries` more attempts on connection errors, timeouts, 429 and 5xx, with
  exponential backoff from `backoff` seconds. HTTPS is required except for
  loopback hosts (127.0.0.1, localhost, [::1]).
- The gate: a callback server on 127.0.0.1 (ralph.loop.lifecycle.callback_server),
  `${CALLBACK_URL}` in the body; approve/continue go on, reject/abort end the
  loop (`hook_abort`, the person's message as the reason); at `timeout`,
  `on_timeout` decides. The answer is exported as RALPH_HOOK_RESPONSE (its
  JSON), RALPH_HOOK_ACTION and RALPH_HOOK_MESSAGE for the later actions.
- Secrets: logs and traces show the URL without credentials, query values or
  token-like path parts, and header names without their values.
"""
from __future__ import annotations

import os
import time

from ralph.loop.lifecycle import template
from ralph.loop.lifecycle.actions import FAILED, SUCCESS, TIMEOUT, ActionResult, RunContext

METHODS = ("POST", "PUT", "PATCH", "GET", "DELETE")
ON_TIMEOUT = ("abort", "continue")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
WAITING_FILE = "waiting.json"  # in the state dir while a gate is open: `ralph status` shows it
RESPONSE_KEEP = 2000  # bytes of the endpoint's answer kept for the trace
SAFE_HEADERS = ("content-type", "accept", "user-agent")

KEYS: dict[str, tuple[object, str, float | None]] = {
    "url": (None, "str", None),
    "method": ("POST", "choice:" + "|".join(METHODS), None),
    "headers": ({}, "table", None),
    "body": (None, "table?", None),
    "await": (False, "bool", None),  # wait for the callback (approval gate)
    "timeout": (3600, "number", 0.001),  # seconds to wait for the callback
    "on_timeout": ("abort", "choice:" + "|".join(ON_TIMEOUT), None),
    "callback_port": (0, "int", 0),  # 0: any free port
    "send_timeout": (10, "number", 0.001),  # seconds per send attempt
    "retries": (3, "int", 0),  # more send attempts after a failure
    "backoff": (1.0, "number", 0),  # seconds before the first retry; doubles each time
}
EXPORTS: tuple[str, ...] = ("RALPH_HOOK_RESPONSE", "RALPH_HOOK_ACTION", "RALPH_HOOK_MESSAGE")


# ---- config ----


def validate(table: dict, where: object) -> list[str]:
    from ralph.loop.lifecycle.config import check_keys

    name = "hooks"
    if "url" not in table:
        return [f"{where}: [{name}] a webhook hook needs url = \"https://...\""]
    errors = check_keys({k: v for k, v in table.items() if k in KEYS and k not in ("headers", "body", "await", "timeout", "retries")},
                        KEYS, where, name)  # type: ignore[arg-type]
    port = table.get("callback_port")
    if isinstance(port, int) and port > 65535:
        errors.append(f"{where.key('callback_port')}: [{name}] callback_port must be a port number (0-65535; 0: any free port), got {port}")  # type: ignore[attr-defined]
    url = table.get("url")
    exports = known_exports()
    if isinstance(url, str):
        problem = url_problem(url) if "${" not in url and "{{" not in url else None
        if problem:
            errors.append(f"{where.key('url')}: [{name}] url: {problem}")  # type: ignore[attr-defined]
        errors += [f"{where.key('url')}: [{name}] url: {p}" for p in template.check(url, exports)]  # type: ignore[attr-defined]
    headers = table.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        errors.append(f"{where.key('headers')}: [{name}] headers must be a table of Name = \"value\" strings, got {headers!r}")  # type: ignore[attr-defined]
    else:
        for key, value in headers.items():
            if any(c in key + value for c in "\r\n"):
                errors.append(f"{where.key('headers')}: [{name}] headers.{key}: no line breaks in header names or values")  # type: ignore[attr-defined]
            errors += [f"{where.key('headers')}: [{name}] headers.{key}: {p}" for p in template.check(value, exports)]  # type: ignore[attr-defined]
    body = table.get("body")
    if body is not None:
        if not isinstance(body, dict):
            errors.append(f"{where.key('body')}: [{name}] body must be a table (sent as JSON), got {type(body).__name__}")  # type: ignore[attr-defined]
        else:
            for text in strings_in(body):
                errors += [f"{where.key('body')}: [{name}] body: {p}" for p in template.check(text, exports)]  # type: ignore[attr-defined]
    return errors


def strings_in(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


def url_problem(url: str) -> str | None:
    """Why this URL may not be used, or None (HTTPS, or HTTP to a loopback host)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as e:
        return f"not a valid URL ({e})"
    if parts.scheme not in ("http", "https") or not host:
        return f"must be an http(s) URL with a host, got {redact_url(url)!r}"
    if parts.scheme == "http" and host not in LOOPBACK_HOSTS and not host.startswith("127."):
        return f"must use https:// (plain http is allowed only to 127.0.0.1, localhost or [::1]), got {redact_url(url)!r}"
    return None


# ---- secrets out of logs ----


def _plain_segment(segment: str) -> bool:
    return 0 < len(segment) <= 24 and all(c.islower() or c.isdigit() or c in "-_." for c in segment) and not (
        sum(c.isdigit() for c in segment) > 4)


def redact_url(url: str) -> str:
    """The URL as logs show it: no user:password, no query values, and path
    parts that look like tokens replaced by [redacted]."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "[invalid url]"
    if ":" in host:
        host = f"[{host}]"
    segments = ["" if not s else s if _plain_segment(s) else "[redacted]" for s in parts.path.split("/")]
    shown = f"{parts.scheme}://{host}{port}{'/'.join(segments)}"
    if parts.query:
        keys = [pair.split("=", 1)[0] for pair in parts.query.split("&") if pair]
        shown += "?" + "&".join(f"{k}=[redacted]" for k in keys)
    from ralph.rules.redact import redact

    return redact(shown)


def shown_headers(headers: dict[str, str]) -> str:
    return ", ".join(f"{k}: {v if k.lower() in SAFE_HEADERS else '[redacted]'}" for k, v in headers.items())


# ---- the request ----


def known_exports() -> dict[str, str]:
    """Names usable besides the context: exports of earlier actions, and CALLBACK_URL."""
    from ralph.loop.lifecycle.config import exported_names

    return {**exported_names(), "callback_url": "CALLBACK_URL"}


def substitute(text: str, values: dict[str, str], env: dict[str, str], url_quote: bool = False) -> str:
    """Context variables (percent-encoded in a URL), then any other ${NAME}
    from the environment (as is: `url = "${SLACK_WEBHOOK}"`)."""
    from urllib.parse import quote

    exports = known_exports()
    if url_quote:
        text = template.substitute(text, lambda key, state: quote(values.get(key, ""), safe=""), exports)
    else:
        text = template.json_value(text, values, exports)
    return expand_env(text, env)


def expand_env(text: str, env: dict[str, str]) -> str:
    out = []
    i = 0
    while True:
        start = text.find("${", i)
        end = text.find("}", start + 2) if start >= 0 else -1
        if start < 0 or end < 0:
            out.append(text[i:])
            return "".join(out)
        name = text[start + 2:end]
        out.append(text[i:start])
        out.append(env.get(name, "") if name.replace("_", "a").isalnum() else text[start:end + 1])
        i = end + 1


def render_body(body: object, values: dict[str, str], env: dict[str, str]) -> object:
    """The body with every string leaf substituted; encoded as JSON afterwards."""
    if isinstance(body, str):
        return substitute(body, values, env)
    if isinstance(body, dict):
        return {str(k): render_body(v, values, env) for k, v in body.items()}
    if isinstance(body, list):
        return [render_body(v, values, env) for v in body]
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


def send_once(method: str, url: str, headers: dict[str, str], data: bytes | None, timeout: float) -> Sent:
    import http.client
    import ssl
    from urllib.parse import urlsplit

    sent = Sent()
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host = parts.hostname or ""
    try:
        if parts.scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(host, parts.port, timeout=timeout,
                                                                           context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(host, parts.port, timeout=timeout)
        try:
            all_headers = {"User-Agent": "ralph-hooks", **headers}
            if data is not None:
                all_headers.setdefault("Content-Type", "application/json")
            if parts.username or parts.password:
                import base64
                from urllib.parse import unquote

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
    import json  # here: the dry run validates webhooks without sending any

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
    import json

    started = time.monotonic()
    spec = action
    method = str(spec["method"])  # type: ignore[index]
    values = dict(ctx.values)
    url = substitute(str(spec["url"]), values, ctx.env, url_quote=True)  # type: ignore[index]
    shown = f"{method} {redact_url(url)}"
    headers = {k: substitute(v, values, ctx.env) for k, v in (spec.get("headers") or {}).items()}  # type: ignore[attr-defined]
    problem = url_problem(url)
    if problem:
        problem = f"url {problem}"
    elif any(c in k + v for k, v in headers.items() for c in "\r\n"):
        problem = "a header value holds a line break after substitution"
    gate = None
    if spec["await"]:  # type: ignore[index]
        from ralph.loop.lifecycle.callback_server import CallbackServer

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
            rendered = render_body(body, values, {**ctx.env, **({"CALLBACK_URL": gate.url} if gate else {})})
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


def redact(text: str) -> str:
    from ralph.rules.redact import redact as redact_text

    return redact_text(text)


def await_answer(spec: object, ctx: RunContext, gate: object, sent_text: str, shown: str, started: float) -> ActionResult:
    """Wait for the person; what they said decides what the loop does."""
    import json

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
