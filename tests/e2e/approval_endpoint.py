"""A stand-in for a chat's incoming webhook, run next to a command (inside the
same network namespace as the scripted API, see harness.run_with_server).

    approval_endpoint.py RECORD CONFIG ANSWER COMMAND...

Listens on 127.0.0.1 (a free port), writes its address over
`http://127.0.0.1:8765` in CONFIG, runs COMMAND, and for every JSON body it
receives that holds an `approve` link, presses the link for ANSWER
(`approve` or `reject`) as a person clicking a chat button would. RECORD gets
the requests and clicks as JSON; the exit code is COMMAND's.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PLACEHOLDER = "http://127.0.0.1:8765"


def main() -> int:
    record_path, config_path, answer, *command = sys.argv[1:]
    record: dict = {"requests": [], "clicks": []}
    lock = threading.Lock()

    def click(links: dict) -> None:
        url = links["approve"] if answer == "approve" else links["reject"] + "&message=needs+a+farewell+story+too"
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                status = response.status
        except OSError as e:
            status = str(e)
        with lock:
            record["clicks"].append({"answer": answer, "status": status, "at": time.time()})

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                record["requests"].append({"path": self.path, "body": body.decode("utf-8", "replace"), "at": time.time()})
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
            try:
                links = json.loads(body)
            except ValueError:
                return
            if isinstance(links, dict) and "approve" in links:
                threading.Thread(target=click, args=(links,), daemon=True).start()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with open(config_path, encoding="utf-8") as f:
        text = f.read()
    with open(config_path, "w", encoding="utf-8") as f:
        f.write(text.replace(PLACEHOLDER, f"http://127.0.0.1:{server.server_address[1]}"))
    try:
        code = subprocess.call(command)
    finally:
        server.shutdown()
        with lock, open(record_path, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1)
    return code


if __name__ == "__main__":
    sys.exit(main())
