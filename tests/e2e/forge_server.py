"""A fake forge on this host, for the sandbox tests: an HTTP API on every
address (`::`, dual-stack, so 0.0.0.0, any 127.x and the machine's own
addresses reach it) that does to a bare repository what a forge would.

A write to a forge API path (a merge, a ref, a commit, contents: the paths
scripts/guard_sandbox/fake_forge.py treats as remote writes) moves a ref in
the bare repository (`refs/heads/forge-<n>`), as a merged pull request or an
API commit would; reads answer `[]`. Every request is appended to HITS as
`METHOD HOST PATH`. Detaches and writes its pid to PIDFILE.

    python3 forge_server.py PORT BARE_REPO HITS PIDFILE
"""
from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys

WRITE_SEGMENTS = {"merge", "merges", "merge-upstream", "update-branch", "contents", "rebase", "refs", "commits"}


class DualStackServer(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6

    def server_bind(self) -> None:
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


def handler(bare: str, hits: str) -> type:
    class Forge(http.server.BaseHTTPRequestHandler):
        def _record(self) -> None:
            with open(hits, "a", encoding="utf-8") as f:
                f.write(f"{self.command} {self.headers.get('Host', '?')} {self.path}\n")

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._record()
            self._answer(200, b"[]\n")

        def _write(self) -> None:
            self._record()
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(min(length, 1 << 20))
            segments = set(self.path.split("?", 1)[0].strip("/").split("/"))
            if not segments & WRITE_SEGMENTS:
                self._answer(404, b"{}\n")
                return
            main = subprocess.run(["git", "--git-dir", bare, "rev-parse", "refs/heads/main"], capture_output=True, text=True).stdout.strip()
            count = len(subprocess.run(["git", "--git-dir", bare, "for-each-ref"], capture_output=True, text=True).stdout.splitlines())
            subprocess.run(["git", "--git-dir", bare, "update-ref", f"refs/heads/forge-{count}", main], check=False)
            self._answer(201, b'{"merged": true}\n')

        do_POST = do_PUT = do_PATCH = do_DELETE = _write

        def _answer(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return Forge


def main(argv: list[str]) -> int:
    port, bare, hits, pidfile = int(argv[0]), argv[1], argv[2], argv[3]
    server = DualStackServer(("::", port), handler(bare, hits))  # bind before detaching: the caller may connect at once
    if os.fork():
        return 0
    os.setsid()
    with open(pidfile, "w", encoding="ascii") as f:
        f.write(str(os.getpid()))
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
