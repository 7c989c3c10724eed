"""Talk to a proxy's approval control plane (loom-format.md §7.7), ours or loom-harness's.

Why a plain blocking client: the desktop calls it from a worker thread and the
CLI from the main one; the protocol is two small JSON requests. The token is
read from the file the proxy writes at start-up (``<runtime dir>/<port>.token``,
``$LOOM_RUNTIME_DIR`` or ``~/.loom/proxies``), exactly where ``loom approve``
looks, so the same proxies can be driven from either tool.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


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


def runtime_dir() -> Path:
    return Path(os.environ.get("LOOM_RUNTIME_DIR") or Path.home() / ".loom" / "proxies")


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
        req = urllib.request.Request(f"http://{self.host}:{self.port}{path}", data=data,
                                     method="GET" if body is None else "POST")
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

    def decide(self, call_id: str, approve: bool, by: str | None = None,
               reason: str | None = None, edited_input: Any = None,
               always_allow: str | None = None) -> None:
        """Approve or deny ``call_id``. ``reason``/``edited_input``/``always_allow`` are our
        additive keys: loom-harness's proxy ignores them; ours records and applies them."""
        body: dict[str, Any] = {"id": call_id, "decision": "approve" if approve else "deny"}
        for key, value in (("by", by), ("reason", reason), ("edited_input", edited_input),
                           ("always_allow", always_allow)):
            if value is not None:
                body[key] = value
        self._request("/loom/shield/decide", body)


def _error_text(err: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(err.read()).get("error") or err.reason)
    except (ValueError, AttributeError):
        return str(err.reason)
