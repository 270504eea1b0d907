"""A real headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`), for page tests.

No driver library: Chromium reads JSON commands from its fd 3 and writes replies and events to its fd 4, each
message ended by a NUL byte. Every wait is bounded. `find_chromium` says why no browser is here, for a skip line.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
"""Executable names tried in order; Debian's package installs `chromium`."""


LOCAL_SCHEMES = ("file:", "data:", "about:")
"""URLs a page may load without leaving this machine; any other request is a problem."""


class BrowserError(RuntimeError):
    """Chromium did not start, answered with an error, or did not answer in time."""


def find_chromium() -> tuple[str | None, str]:
    """The path of a Chromium executable, or None and a line saying why there is none."""
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path, ""
    return None, (
        "no Chromium on PATH (looked for " + ", ".join(CANDIDATES) + "); `make test` installs Debian's "
        "`chromium` package when run as root with apt, or run `apt-get install -y chromium`"
    )


def _high_fd(fd: int) -> int:
    """`fd` moved to number 10 or above, so that wiring the child's fds 3 and 4 cannot overwrite it first."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class Chromium:
    """One headless Chromium with one page; records console messages, uncaught errors and every request."""

    def __init__(self, executable: str, *, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="parallax-zoo-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        to_child_r, from_child_w = (_high_fd(fd) for fd in (to_child_r, from_child_w))
        wiring = f'exec "$0" "$@" 3<&{to_child_r} 4>&{from_child_w}'  # Chromium reads fd 3, writes fd 4
        args = [
            "/bin/bash",
            "-c",
            wiring,
            executable,  # bash, as dash takes no fd number above 9
            "--headless",
            "--remote-debugging-pipe",
            f"--user-data-dir={self.profile}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-gpu",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--disable-dev-shm-usage",
            "--disable-crash-reporter",
            "--disable-breakpad",  # a small /dev/shm; no dumps
            *(["--no-sandbox"] if os.geteuid() == 0 else []),  # Chromium's sandbox refuses to run as root
            "about:blank",
        ]
        self.process = subprocess.Popen(
            args,
            pass_fds=(to_child_r, from_child_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session = ""
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable")
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the browser (it is ours: started above) and remove its profile."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise BrowserError(f"Chromium sent nothing for {self.timeout:.0f} s")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise BrowserError(f"Chromium closed its pipe (exit code {self.process.poll()})")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one command (to the page once attached) and return its result; events met meanwhile are kept."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, event: str) -> dict[str, Any]:
        """The first event named `event` not yet waited for (bounded by the timeout)."""
        deadline = time.monotonic() + self.timeout
        seen = 0
        while True:
            for index in range(seen, len(self.events)):
                if self.events[index].get("method") == event:
                    return self.events.pop(index)
            seen = len(self.events)
            self.events.append(self._read_message(deadline))

    def open(self, path: Path, *, width: int, height: int = 800) -> None:
        """Load a local file at a viewport of `width` x `height` CSS pixels and wait for its load event."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )
        self.call("Page.navigate", {"url": path.resolve().as_uri()})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression in the page; a thrown error is a `BrowserError`."""
        reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression!r} threw: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (press and release) at the centre of the first element matching `selector`."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView();"
            " const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1}
            )

    def screenshot(self, path: Path) -> Path:
        """A PNG of the whole page, not only the viewport."""
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions, browser log errors, and requests off this machine."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                shown = [argument.get("value", argument.get("description")) for argument in params["args"]]
                found.append(f"console.{params['type']}: {shown}")
            elif method == "Runtime.exceptionThrown":
                found.append(f"uncaught: {params['exceptionDetails']}")
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
                found.append(f"log {params['entry']['level']}: {params['entry']['text']}")
            elif method == "Network.requestWillBeSent" and not params["request"]["url"].startswith(LOCAL_SCHEMES):
                found.append(f"network request: {params['request']['url']}")
        return found
