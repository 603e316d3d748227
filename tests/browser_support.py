"""Debian's headless chromium, driven over the DevTools protocol on a pipe
(`--remote-debugging-pipe`: JSON messages ending in NUL on fds 3 and 4), with
the standard library only: how the report tests look at a page as a person
would (what it asks the network for, console errors, what is laid out, a
screenshot, a PDF).

    with Browser() as browser:
        page = browser.open("file:///.../report.html", dark=True, scripts=False)
        page.count("#timeline-chart rect.bar"); page.screenshot(path)

Skips (pytest) when chromium is not installed; under CI=true that fails
instead, as the sandbox and e2e tests do.
"""
from __future__ import annotations

import base64
import json
import os
import selectors
import shutil
import subprocess
import tempfile

import pytest

CHROMIUM_NAMES = ("chromium", "chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--no-default-browser-check", "--hide-scrollbars", "--remote-debugging-pipe")
# a safety net against a wedged browser, not a speed target
HANG_SECONDS = 180


def chromium() -> str:
    """The chromium executable; skips (fails under CI=true) without one."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    message = "Debian's chromium is not installed (apt-get install chromium; scripts/test installs it as root)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)
    raise AssertionError("unreachable")


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless chromium with a fresh profile, spoken to over the pipe."""

    def __init__(self, executable: str | None = None) -> None:
        self.executable = executable or chromium()
        self.profile = tempfile.mkdtemp(prefix="ralph-chromium-")
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()

        def wire() -> None:  # in the child: the pipe ends on fds 3 and 4, as chromium expects
            os.dup2(to_browser_read, 3)
            os.dup2(from_browser_write, 4)

        self.proc = subprocess.Popen([self.executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     pass_fds=(3, 4), preexec_fn=wire)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.next_id = 0
        self.buffer = b""
        self.events: list[dict] = []
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.from_browser, selectors.EVENT_READ)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.send("Browser.close", wait=False)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.to_browser, self.from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def send(self, method: str, params: dict | None = None, session: str | None = None, wait: bool = True) -> dict:
        self.next_id += 1
        message: dict = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self.to_browser, data):]
        if not wait:
            return {}
        wanted = self.next_id
        while True:
            reply = self.read()
            if reply.get("id") == wanted:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def read(self) -> dict:
        while b"\0" not in self.buffer:
            if not self.selector.select(HANG_SECONDS):
                raise BrowserError(f"chromium said nothing for {HANG_SECONDS}s")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                errors = self.proc.stderr.read().decode(errors="replace")[-2000:] if self.proc.stderr else ""
                raise BrowserError(f"chromium closed the pipe (exit {self.proc.poll()}): {errors}")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for(self, method: str, session: str) -> dict:
        for index, event in enumerate(self.events):
            if event.get("method") == method and event.get("sessionId") == session:
                return self.events.pop(index)
        while True:
            event = self.read()
            if event.get("method") == method and event.get("sessionId") == session:
                return event
            if "method" in event:
                self.events.append(event)

    def open(self, url: str, *, width: int = 1100, height: int = 900, dark: bool = False, scripts: bool = True) -> Page:
        """A new tab showing `url`, once its load event fired."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for method in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable", "DOM.enable"):
            self.send(method, session=session)
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session)
        self.send("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]}, session)
        if not scripts:
            self.send("Emulation.setScriptExecutionDisabled", {"value": True}, session)
        self.send("Page.navigate", {"url": url}, session)
        self.wait_for("Page.loadEventFired", session)
        return Page(self, session)


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def send(self, method: str, params: dict | None = None) -> dict:
        return self.browser.send(method, params, self.session)

    def mine(self, method: str) -> list[dict]:
        return [e["params"] for e in self.browser.events if e.get("sessionId") == self.session and e.get("method") == method]

    def console_errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors (a blocked or failed load among them)."""
        found = [json.dumps(p.get("args"))[:300] for p in self.mine("Runtime.consoleAPICalled") if p.get("type") in ("error", "assert")]
        found += [json.dumps(p.get("exceptionDetails"))[:300] for p in self.mine("Runtime.exceptionThrown")]
        found += [p["entry"].get("text", "") for p in self.mine("Log.entryAdded") if p.get("entry", {}).get("level") == "error"]
        return found

    def requests(self) -> list[str]:
        """Every URL the page asked for, itself included."""
        return [p["request"]["url"] for p in self.mine("Network.requestWillBeSent")]

    def nodes(self, selector: str) -> list[int]:
        root = self.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        return self.send("DOM.querySelectorAll", {"nodeId": root, "selector": selector})["nodeIds"]

    def count(self, selector: str) -> int:
        return len(self.nodes(selector))

    def boxes(self, selector: str) -> list[tuple[float, float]]:
        """(width, height) as laid out, of each element matching the selector."""
        sizes = []
        for node in self.nodes(selector):
            model = self.send("DOM.getBoxModel", {"nodeId": node})["model"]
            sizes.append((float(model["width"]), float(model["height"])))
        return sizes

    def attribute(self, selector: str, name: str) -> list[str]:
        values = []
        for node in self.nodes(selector):
            attributes = self.send("DOM.getAttributes", {"nodeId": node})["attributes"]
            pairs = dict(zip(attributes[::2], attributes[1::2]))
            values.append(pairs.get(name, ""))
        return values

    def text(self, selector: str) -> str:
        node = self.nodes(selector)[0]
        html = self.send("DOM.getOuterHTML", {"nodeId": node})["outerHTML"]
        return html

    def computed(self, selector: str, prop: str) -> str:
        node = self.nodes(selector)[0]
        styles = self.send("CSS.getComputedStyleForNode", {"nodeId": node})["computedStyle"] if self.css() else []
        return next((s["value"] for s in styles if s["name"] == prop), "")

    def css(self) -> bool:
        if not getattr(self, "_css", False):
            self.send("CSS.enable")
            self._css = True
        return True

    def screenshot(self, path: str, height: float | None = None) -> bytes:
        """The whole page (or its top `height` pixels) as a PNG, written to path."""
        size = self.send("Page.getLayoutMetrics")["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], height or size["height"]), "scale": 1}
        data = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True})["data"])
        with open(path, "wb") as f:
            f.write(data)
        return data

    def pdf(self) -> bytes:
        return base64.b64decode(self.send("Page.printToPDF", {"printBackground": False})["data"])
