"""The approval gate's callback server, spoken to over real sockets on 127.0.0.1."""
from __future__ import annotations

import http.client
import json
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest

from ralph.loop.lifecycle.callback_server import CallbackServer, loopback


def request(url: str, method: str = "GET", body: bytes | None = None, headers: dict | None = None) -> tuple[int, str]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request(method, parts.path + (f"?{parts.query}" if parts.query else ""), body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


@pytest.fixture
def gate():
    server = CallbackServer().start()
    yield server
    server.close()


def test_token_is_fresh_long_and_in_the_path(gate) -> None:
    other = CallbackServer()
    try:
        assert gate.token != other.token
        assert len(gate.token) >= 43  # 32 random bytes, base64url: 256 bits
        assert gate.url == f"http://127.0.0.1:{gate.port}/ralph/callback/{gate.token}"
        assert gate.token not in gate.shown_url
    finally:
        other.close()


def test_approve_by_get(gate) -> None:
    assert request(gate.url + "?action=approve&message=ship%20it") == (200, "ralph-loop: approve received. You can close this page.\n")
    answer = gate.wait(30)
    assert (answer.action, answer.message, answer.stops) == ("approve", "ship it", False)
    assert json.loads(answer.json()) == {"action": "approve", "message": "ship it"}


def test_reject_by_post_with_a_message(gate) -> None:
    body = json.dumps({"action": "reject", "message": "the plan misses the migration", "by": "ana"}).encode()
    status, _ = request(gate.url, "POST", body, {"Content-Type": "application/json"})
    assert status == 200
    answer = gate.wait(30)
    assert (answer.action, answer.message, answer.stops) == ("reject", "the plan misses the migration", True)
    assert json.loads(answer.json())["by"] == "ana"  # the whole posted body reaches RALPH_HOOK_RESPONSE


@pytest.mark.parametrize("action, stops", [("continue", False), ("abort", True)])
def test_continue_and_abort(gate, action: str, stops: bool) -> None:
    request(gate.url + f"?action={action}")
    assert gate.wait(30).stops is stops


def test_wrong_token_wrong_path_and_bad_requests_get_nothing(gate) -> None:
    base = f"http://127.0.0.1:{gate.port}"
    wrong = gate.token[:-1] + ("A" if gate.token[-1] != "A" else "B")
    assert request(f"{base}/ralph/callback/{wrong}?action=approve")[0] == 404
    assert request(f"{base}/ralph/callback/{gate.token[:10]}?action=approve")[0] == 404
    assert request(f"{base}/ralph/callback/?action=approve")[0] == 404
    assert request(f"{base}/?action=approve")[0] == 404
    assert request(f"{base}/other/{gate.token}?action=approve")[0] == 404
    assert request(gate.url + "?action=approve", "HEAD")[0] == 404  # a link preview approves nothing
    assert request(gate.url + "?action=approve", "PUT")[0] == 404
    assert request(gate.url + "?action=merge")[0] == 400
    assert request(gate.url, "POST", b"not json")[0] == 400
    assert request(gate.url, "POST", b"[1]")[0] == 400
    assert request(gate.url, "POST", b"x" * 70_000)[0] == 413
    assert gate.answer is None and gate.rejected == 11
    # none of that used the token up
    assert request(gate.url + "?action=approve")[0] == 200
    assert gate.wait(30).action == "approve"


def test_the_token_is_single_use(gate) -> None:
    assert request(gate.url + "?action=approve")[0] == 200
    # the second call, before or after the server stops, changes nothing
    try:
        status = request(gate.url + "?action=reject")[0]
    except OSError:
        status = None  # the server already stopped
    assert status in (404, None)
    assert gate.wait(30).action == "approve"
    with pytest.raises(OSError):
        request(gate.url + "?action=reject")


@pytest.mark.parametrize("timeout", [0.0, 0.2])
def test_timeout_returns_no_answer_and_stops_listening(timeout: float) -> None:
    server = CallbackServer().start()
    url = server.url
    assert server.wait(timeout) is None
    with pytest.raises(OSError):
        request(url + "?action=approve")


def test_stopping_ends_the_wait() -> None:
    server = CallbackServer().start()
    assert server.wait(3600, stopping=lambda: True) is None


def test_listens_on_loopback_only(gate) -> None:
    assert gate._server.socket.getsockname()[0] == "127.0.0.1"
    with pytest.raises(ValueError):
        CallbackServer(host="0.0.0.0")
    # a request that arrives from another address is refused even with the token
    assert gate.accept(urlsplit(gate.url).path + "?action=approve", "GET", b"", "192.168.1.7") == (404, "not found\n")
    assert gate.answer is None
    assert loopback("127.0.0.1") and loopback("::1") and not loopback("10.0.0.1")


def non_loopback_addresses() -> list[str]:
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [a for a in out.split() if "." in a and not a.startswith("127.")]


def test_not_reachable_through_another_interface(gate) -> None:
    addresses = non_loopback_addresses()
    if not addresses:
        pytest.skip("this machine has no non-loopback IPv4 address to try")
    for address in addresses:
        with pytest.raises(OSError):
            socket.create_connection((address, gate.port), timeout=5).close()
    assert gate.answer is None


def test_concurrent_bogus_requests_do_not_stop_the_real_answer(gate) -> None:
    base = f"http://127.0.0.1:{gate.port}"
    statuses: list[int] = []
    lock = threading.Lock()
    idle = [socket.create_connection(("127.0.0.1", gate.port)) for _ in range(5)]  # open, never speak

    def bogus(n: int) -> None:
        for i in range(5):
            try:
                status, _ = request(f"{base}/ralph/callback/{'x' * 43}{n}{i}?action=approve")
            except OSError:
                continue
            with lock:
                statuses.append(status)

    threads = [threading.Thread(target=bogus, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert request(gate.url + "?action=continue")[0] == 200
    for s in idle:
        s.close()
    assert gate.wait(30).action == "continue"
    assert statuses and set(statuses) == {404}


def test_urllib_client_sees_404_for_a_guess() -> None:
    server = CallbackServer().start()
    try:
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"http://127.0.0.1:{server.port}/ralph/callback/guess?action=approve", timeout=30)
        assert info.value.code == 404
    finally:
        server.close()
