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
  exponential backoff from `backoff` seconds. HTTPS is required except to
  loopback: plain http only when every address the host resolves to is a
  loopback address (127.0.0.0/8, ::1), judged on the addresses, not the
  spelling (`127.0.0.1.example.com` may point anywhere). When it is sent,
  the host is resolved once and the request goes to the address that was
  checked, so DNS cannot change between the check and the call.
- The gate: a callback server on 127.0.0.1 (ralph.loop.lifecycle.callback_server),
  `${CALLBACK_URL}` in the body; approve/continue go on, reject/abort end the
  loop (`hook_abort`, the person's message as the reason); at `timeout`,
  `on_timeout` decides. The answer is exported as RALPH_HOOK_RESPONSE (its
  JSON), RALPH_HOOK_ACTION and RALPH_HOOK_MESSAGE for the later actions.
- Secrets: logs and traces show the URL without credentials, query values or
  token-like path parts, and header names without their values.

This module declares the type (the checks of its keys, which
ralph.config.tables.hooks declares, and the URL rules), which `ralph-loop
--dry-run` needs; sending and the gate are ralph.loop.lifecycle.webhook_run,
imported only when a webhook runs.
"""
from __future__ import annotations

import socket
from urllib.parse import urlsplit

from ralph.config.tables.hooks import WEBHOOK_KEYS as KEYS  # KEYS: the action contract (ralph.loop.lifecycle.actions)
from ralph.config.schema import check_keys
from ralph.loop.lifecycle import template
from ralph.redaction import redact

IPV6_LOOPBACK = bytes(15) + b"\x01"
IPV4_MAPPED = bytes(10) + b"\xff\xff"
WAITING_FILE = "waiting.json"  # in the state dir while a gate is open: `ralph status` shows it
SAFE_HEADERS = ("content-type", "accept", "user-agent")


# ---- config ----


def validate(table: dict, where: object, exports: dict[str, str]) -> list[str]:
    name = "hooks"
    if "url" not in table:
        return [f"{where}: [{name}] a webhook hook needs url = \"https://...\""]
    errors = check_keys({k: v for k, v in table.items() if k in KEYS and k not in ("headers", "body", "await", "timeout", "retries")},
                        KEYS, where, name)  # type: ignore[arg-type]
    port = table.get("callback_port")
    if isinstance(port, int) and port > 65535:
        errors.append(f"{where.key('callback_port')}: [{name}] callback_port must be a port number (0-65535; 0: any free port), got {port}")  # type: ignore[attr-defined]
    url = table.get("url")
    exports = known_exports(exports)
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


def url_problem(url: str, resolve: bool = True) -> str | None:
    """Why this URL may not be used, or None: HTTPS, or HTTP to a host whose
    every address is loopback. resolve=False leaves a host name (not an
    address) to the sender, which resolves it once, checks and connects to
    what it checked (ralph.loop.lifecycle.webhook_run)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError as e:
        return f"not a valid URL ({e})"
    if parts.scheme not in ("http", "https") or not host:
        return f"must be an http(s) URL with a host, got {redact_url(url)!r}"
    if parts.scheme == "http":
        if address_family(host) is not None:
            return None if is_loopback(host) else plain_http_problem(url, f"{host} is not a loopback address")
        if resolve:
            return loopback_addresses(url, host, port)[1]
    return None


def plain_http_problem(url: str, why: str) -> str:
    return (f"must use https:// (plain http is allowed only to a host whose addresses are all loopback: "
            f"127.0.0.1, [::1], localhost; {why}), got {redact_url(url)!r}")


def address_family(text: str) -> int | None:
    """AF_INET or AF_INET6 when `text` is an IP address (not a name), else None."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, text.split("%", 1)[0])
            return family
        except (OSError, ValueError):
            pass
    return None


def is_loopback(address: str) -> bool:
    """127.0.0.0/8, ::1, or an IPv4-mapped 127.x address."""
    try:
        packed = socket.inet_pton(socket.AF_INET, address)
        return packed[0] == 127
    except (OSError, ValueError):
        pass
    try:
        packed = socket.inet_pton(socket.AF_INET6, address.split("%", 1)[0])
    except (OSError, ValueError):
        return False
    return packed == IPV6_LOOPBACK or (packed[:12] == IPV4_MAPPED and packed[12] == 127)


def loopback_addresses(url: str, host: str, port: int | None) -> tuple[list[tuple], str | None]:
    """(getaddrinfo results, None) when `host` resolves and every address is
    loopback; ([], why not) otherwise. One resolution: the caller connects to
    these addresses, never to the name again."""
    try:
        infos = socket.getaddrinfo(host, port or 80, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as e:
        return [], plain_http_problem(url, f"{host} cannot be resolved: {e}")
    outside = sorted({str(info[4][0]) for info in infos if not is_loopback(str(info[4][0]))})
    if not infos or outside:
        return [], plain_http_problem(url, f"{host} resolves to {', '.join(outside) or 'nothing'}")
    return infos, None


# ---- secrets out of logs ----


def _plain_segment(segment: str) -> bool:
    return 0 < len(segment) <= 24 and all(c.islower() or c.isdigit() or c in "-_." for c in segment) and not (
        sum(c.isdigit() for c in segment) > 4)


def redact_url(url: str) -> str:
    """The URL as logs show it: no user:password, no query values, and path
    parts that look like tokens replaced by [redacted]."""
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
    return redact(shown)


def shown_headers(headers: dict[str, str]) -> str:
    return ", ".join(f"{k}: {v if k.lower() in SAFE_HEADERS else '[redacted]'}" for k, v in headers.items())


# ---- templates ----


def known_exports(exports: dict[str, str]) -> dict[str, str]:
    """Names usable besides the context: exports of earlier actions, and CALLBACK_URL."""
    return {**exports, "callback_url": "CALLBACK_URL"}


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
