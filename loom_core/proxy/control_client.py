"""Talk to a proxy's approval control plane (loom-format.md §7.7), ours or loom-harness's.

Why a plain blocking client: the desktop calls it from a worker thread and the
CLI from the main one; the protocol is two small JSON requests. The token is
read from the file the proxy writes at start-up (``<runtime dir>/<port>.token``,
``$LOOM_RUNTIME_DIR`` or ``~/.loom/proxies``), exactly where ``loom approve``
looks, so the same proxies can be driven from either tool.

:meth:`ControlClient.events` reads our proxy's event stream (``GET /loom/events``,
:mod:`loom_core.proxy.events`) over a raw socket, so a worker blocked on it can be
cancelled within ``POLL_S``; loom-harness's proxy has no stream (``NoEventStream``).
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from loom_core.proxy.running_proxies import runtime_dir  # noqa: F401 (also imported from here)

EVENTS_PATH = "/loom/events"
POLL_S = 0.25  # how often a blocked stream read checks for cancellation


class ControlError(Exception):
    """A control-plane request failed; ``status`` is the HTTP status (0: no answer)."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(message)


class PendingCall(BaseModel):
    """One held call as ``GET /loom/shield/pending`` lists it (extra keys are kept)."""

    model_config = ConfigDict(extra="allow")
    id: str
    tool: str = ""
    input: Any = Field(default_factory=dict)
    rule: str = ""
    age_s: float = 0.0
    approvals: list[str] | None = None
    required: int | None = None


def read_token(port: int) -> str | None:
    """The control token a proxy on ``port`` wrote at start-up, if any."""
    try:
        return (runtime_dir() / f"{port}.token").read_text().strip() or None
    except OSError:
        return None


@dataclass
class ControlClient:
    """The approval endpoints of one proxy on loopback."""

    port: int
    host: str = "127.0.0.1"
    token: str | None = None
    timeout: float = 5.0

    def __post_init__(self) -> None:
        if self.token is None:
            self.token = read_token(self.port)

    def _request(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"http://{self.host}:{self.port}{path}",
            data=data,
            method="GET" if body is None else "POST",
        )
        req.add_header("content-type", "application/json")
        if self.token:
            req.add_header("x-loom-token", self.token)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - loopback
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as err:
            raise ControlError(err.code, _error_text(err)) from err
        except (urllib.error.URLError, OSError) as err:
            raise ControlError(0, f"no proxy answering on {self.host}:{self.port} ({err})") from err

    def pending(self) -> list[PendingCall]:
        """The calls waiting for a decision, oldest first."""
        answer = self._request("/loom/shield/pending")
        return [PendingCall.model_validate(p) for p in (answer or {}).get("pending", [])]

    def decide(
        self,
        call_id: str,
        approve: bool,
        by: str | None = None,
        reason: str | None = None,
        edited_input: Any = None,
        always_allow: str | None = None,
    ) -> None:
        """Approve or deny ``call_id``. ``reason``/``edited_input``/``always_allow`` are our
        additive keys: loom-harness's proxy ignores them; ours records and applies them."""
        body: dict[str, Any] = {"id": call_id, "decision": "approve" if approve else "deny"}
        for key, value in (
            ("by", by),
            ("reason", reason),
            ("edited_input", edited_input),
            ("always_allow", always_allow),
        ):
            if value is not None:
                body[key] = value
        self._request("/loom/shield/decide", body)

    def events(
        self, cancel: Any = None, idle: float = 45.0
    ) -> Generator[dict[str, Any], None, None]:
        """Our proxy's event stream (``GET /loom/events``), as ``{"event", "data"}`` dicts.

        Blocking; meant for a worker thread. Ends when the proxy closes the stream (it is
        stopping, or dropped us for reading too slowly) or soon after ``cancel`` is set
        (checked every ``POLL_S``). Raises :class:`NoEventStream` when the proxy answers
        without a stream (or not within ``timeout``: ours answers at once), and
        ``ControlError(0, …)`` when nothing answers or the stream is silent for ``idle``
        seconds (our proxy sends a keep-alive every 15 s).
        """
        sock = self._open_stream()
        with sock:
            reader = _Reader(sock, lambda: _cancelled(cancel), idle)
            status, headers, body = reader.head(self.timeout)
            if status != 200 or "text/event-stream" not in headers.get("content-type", ""):
                body += reader.rest(self.timeout, headers.get("content-length", ""), len(body))
                raise NoEventStream(
                    status,
                    _json_error(body)
                    or f"no event stream on {self.host}:{self.port} (HTTP {status})",
                )
            yield from _sse(reader, body)

    def hello(self) -> dict[str, Any] | None:
        """Our proxy's ``hello`` (who it is, what it holds), read from the start of its event
        stream; None from a proxy without one (loom-harness's ``loom proxy``)."""
        stream = self.events()
        try:
            first = next(stream, None)
        except NoEventStream:
            return None
        finally:
            stream.close()
        data = first.get("data") if first and first.get("event") == "hello" else None
        return data if isinstance(data, dict) else None

    def _open_stream(self) -> socket.socket:
        """Connect and send the GET (HTTP/1.0: the answer is the raw stream, unchunked)."""
        try:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        except OSError as err:
            raise ControlError(0, f"no proxy answering on {self.host}:{self.port} ({err})") from err
        lines = [
            f"GET {EVENTS_PATH} HTTP/1.0",
            f"Host: {self.host}:{self.port}",
            "Accept: text/event-stream",
        ]
        if self.token:
            lines.append(f"x-loom-token: {self.token}")
        try:
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        except OSError as err:
            sock.close()
            raise ControlError(0, f"no proxy answering on {self.host}:{self.port} ({err})") from err
        return sock


class NoEventStream(ControlError):
    """The proxy answered ``GET /loom/events`` without a stream: not our proxy (loom-harness
    forwards the GET upstream, which answers 404), or it refused us (``status``)."""


class _Silent(ControlError):
    """Nothing arrived for too long (the proxy lives but does not talk)."""


def _cancelled(cancel: Any) -> bool:
    """A ``threading.Event`` or a ``CancelToken`` (``.cancelled``); None never cancels."""
    if cancel is None:
        return False
    flag = getattr(cancel, "cancelled", None)
    return bool(flag) if flag is not None else bool(cancel.is_set())


class _Reader:
    """Bytes from a socket, waking every ``POLL_S`` to check for cancellation.

    Raw ``recv`` with a timeout, not a file object: a timed-out read leaves a buffered
    socket file in an undefined state, and the stream must stay usable across waits.
    """

    def __init__(self, sock: socket.socket, cancelled: Callable[[], bool], idle: float) -> None:
        self.sock, self.cancelled, self.idle = sock, cancelled, idle
        sock.settimeout(POLL_S)

    def chunk(self, limit: float | None = None) -> bytes | None:
        """Next bytes; b"" at the end of the stream, None once cancelled."""
        waited = 0.0
        while not self.cancelled():
            try:
                return self.sock.recv(65536)
            except TimeoutError:
                waited += POLL_S
                if waited >= (self.idle if limit is None else limit):
                    raise _Silent(0, f"the proxy went silent for {waited:.0f} s") from None
            except OSError as err:
                raise ControlError(0, f"event stream broken ({err})") from err
        return None

    def head(self, limit: float) -> tuple[int, dict[str, str], bytes]:
        """Status, lower-cased headers, and whatever of the body came with them."""
        data = b""
        while b"\r\n\r\n" not in data:
            try:
                more = self.chunk(limit)
            except _Silent as err:  # ours answers at once; loom's may wait on its upstream
                raise NoEventStream(0, f"no answer to GET {EVENTS_PATH} ({err})") from err
            if not more or len(data) > 65536:
                raise ControlError(0, "the proxy closed the connection before answering")
            data += more
        head, body = data.split(b"\r\n\r\n", 1)
        first, *rest = head.decode("latin-1").split("\r\n")
        parts = first.split(" ", 2)
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in rest)}
        return status, headers, body

    def rest(self, limit: float, length: str, have: int) -> bytes:
        """The rest of a (small) error body: ``content-length`` bytes, or until closed."""
        want = int(length) if length.isdigit() else 65536
        out = b""
        try:
            while have + len(out) < min(want, 65536):
                more = self.chunk(limit)
                if not more:
                    break
                out += more
        except ControlError:
            pass  # the status is what matters; the body only words it
        return out


def _sse(reader: _Reader, buffered: bytes) -> Iterator[dict[str, Any]]:
    """Parse ``event:``/``data:`` blocks; comments (keep-alives) are skipped."""
    data = buffered.replace(b"\r\n", b"\n")
    while True:
        while b"\n\n" in data:
            block, data = data.split(b"\n\n", 1)
            event = _event(block.decode("utf-8", "replace"))
            if event is not None:
                yield event
        more = reader.chunk()
        if not more:
            return  # closed by the proxy, or cancelled
        data += more.replace(b"\r\n", b"\n")


def _event(block: str) -> dict[str, Any] | None:
    name, lines = "message", []
    for line in block.split("\n"):
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            lines.append(value)
    if not lines:
        return None
    try:
        return {"event": name, "data": json.loads("\n".join(lines))}
    except ValueError:
        return {"event": name, "data": "\n".join(lines)}


def _json_error(body: bytes) -> str:
    try:
        value = json.loads(body)
    except ValueError:
        return ""
    return str(value.get("error") or "") if isinstance(value, dict) else ""


def _error_text(err: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(err.read()).get("error") or err.reason)
    except (ValueError, AttributeError):
        return str(err.reason)
