"""Drive headless Chromium over the DevTools protocol: open a page, press keys, read the DOM.

Used by the HTML-export test and benchmark to check what a user's browser does with an
exported page: that it renders, that scrubbing works, how long it takes to be ready, and
every URL it tried to fetch (there must be none but the page itself). The protocol runs over
a WebSocket, which aiohttp (already a dependency) speaks; Chromium is Debian's package.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

_LISTENING = re.compile(rb"DevTools listening on (ws://\S+)")


def chromium_binary() -> str | None:
    """Debian's ``chromium`` (or another name it goes by), or None when not installed."""
    return next(
        (p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))),
        None,
    )


class Browser:
    """One headless Chromium process with one page; use as ``async with Browser() as b``."""

    def __init__(self, width: int = 1300, height: int = 850, timeout: float = 60.0) -> None:
        self.size, self.timeout = (width, height), timeout
        self.requests: list[str] = []  # every URL the page asked for
        self._ids = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def __aenter__(self) -> Browser:
        binary = chromium_binary()
        if binary is None:
            raise RuntimeError("chromium is not installed (Debian: apt install chromium)")
        self._profile = tempfile.mkdtemp(prefix="loom-chromium-")
        self._proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--disable-background-networking", "--disable-sync",
             f"--window-size={self.size[0]},{self.size[1]}", "--remote-debugging-port=0",
             "--remote-debugging-address=127.0.0.1", f"--user-data-dir={self._profile}",
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        browser_ws = await asyncio.wait_for(asyncio.to_thread(self._read_address), self.timeout)
        port = browser_ws.split(":")[2].split("/")[0]
        self._http = aiohttp.ClientSession()
        async with self._http.get(f"http://127.0.0.1:{port}/json/list") as resp:
            targets = await resp.json()
        page = next(t for t in targets if t.get("type") == "page")
        self._ws = await self._http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        await self.send("Network.enable")
        await self.send("Page.enable")
        await self.send("Runtime.enable")
        return self

    def _read_address(self) -> str:
        assert self._proc.stderr is not None
        for _ in range(200):  # Chromium prints a few lines before the address
            line = self._proc.stderr.readline()
            if not line:
                break
            found = _LISTENING.search(line)
            if found:
                return found.group(1).decode()
        raise RuntimeError("chromium did not start its DevTools endpoint")

    async def __aexit__(self, *exc: object) -> None:
        self._reader.cancel()
        for closer in (self._ws.close, self._http.close):
            try:
                await closer()
            except (aiohttp.ClientError, OSError):
                pass
        self._proc.terminate()
        try:
            await asyncio.to_thread(self._proc.wait, 10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            await asyncio.to_thread(self._proc.wait, 10)
        if self._proc.stderr is not None:
            self._proc.stderr.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    async def _read(self) -> None:
        async for msg in self._ws:
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self._pending:
                self._pending.pop(data["id"]).set_result(data)
            elif data.get("method") == "Network.requestWillBeSent":
                self.requests.append(data["params"]["request"]["url"])
            elif "method" in data:
                self._events.put_nowait(data)

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        """One protocol command; its ``result`` (an error raises)."""
        self._ids += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._ids] = future
        await self._ws.send_json({"id": self._ids, "method": method, "params": params})
        reply = await asyncio.wait_for(future, self.timeout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return dict(reply.get("result", {}))

    async def open(self, url: str) -> float:
        """Navigate and wait until the page says it is ready; returns the seconds it took."""
        start = time.perf_counter()
        await self.send("Page.navigate", url=url)
        await self.wait_for("document.body && document.body.dataset.ready === '1'")
        return time.perf_counter() - start

    async def eval(self, expression: str) -> Any:
        reply = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"page error: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    async def wait_for(self, expression: str, limit: float | None = None) -> None:
        deadline = time.monotonic() + (limit or self.timeout)
        while time.monotonic() < deadline:  # bounded by time; each try is one round trip
            if await self.eval(expression):
                return
            await asyncio.sleep(0.02)
        raise TimeoutError(f"page never satisfied: {expression}")

    async def key(self, key: str, code: int) -> None:
        """Press and release a key (``ArrowDown`` = 40, ``End`` = 35 …)."""
        for kind in ("keyDown", "keyUp"):
            await self.send(
                "Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=code
            )

    async def screenshot(self, path: Path) -> None:
        import base64

        shot = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))
