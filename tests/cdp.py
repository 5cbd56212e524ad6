"""A headless Chromium driven over the Chrome DevTools Protocol on a pipe (--remote-debugging-pipe), with the
standard library only: messages are JSON, each ended by a NUL byte; the browser reads fd 3, writes fd 4."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, exe: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="irscope-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def fds():  # in the child: the pipe ends where Chromium expects them (moved up first: no clobbering)
            import fcntl

            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser_r, from_browser_w)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.proc = subprocess.Popen(
            [
                exe,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            preexec_fn=fds,
            pass_fds=(3, 4, to_browser_r, from_browser_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, timeout: float) -> dict | None:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its debugging pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(
        self,
        method: str,
        params: dict | None = None,
        session: str | None = None,
        timeout: float = 30,
    ):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self._read(deadline - time.monotonic())
            if got is None:
                break
            if got.get("id") == self._next_id:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                return got.get("result", {})
            self.events.append(got)
        raise TimeoutError(method)

    def wait_event(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method:
                    return event
            got = self._read(max(0.0, deadline - time.monotonic()))
            if got is None:
                raise TimeoutError(method)
            self.events.append(got)

    def open_page(self, url: str) -> str:
        """A new tab with network and page events on, navigated to `url` and loaded: its session id."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        self.send("Network.enable", {}, session)
        self.send("Page.enable", {}, session)
        self.events.clear()
        self.send("Page.navigate", {"url": url}, session)
        self.wait_event("Page.loadEventFired")
        return session

    def evaluate(self, session: str, expression: str):
        result = self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session
        )
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def click(self, session: str, x: float, y: float) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
                session,
            )
