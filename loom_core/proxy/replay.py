"""``--replay FILE``: answer every POST with the next recorded response (loom-format.md §6.8).

Why: an agent can then be re-run offline and deterministically -- no upstream, no
API key, zero upstream calls. Like loom-harness the cursor is global and ignores
the request's content; a request with a truthy ``stream`` gets the response
synthesized as its dialect's SSE stream (:mod:`.synthesize`), otherwise JSON; after
the last recorded response every POST gets 410. Nothing is recorded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aiohttp import web

from loom_core.proxy.synthesize import synthesize
from loom_core.proxy.upstream import json_error


class ReplayError(ValueError):
    """The file cannot be replayed (not JSON, or no ``wire`` member)."""


class ReplaySource:
    """The recorded responses of one trace and the replay cursor."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError) as err:
            raise ReplayError(f"{path}: cannot read a trace ({err})") from err
        wire = data.get("wire") if isinstance(data, dict) else None
        if not isinstance(wire, list) or not wire:
            raise ReplayError(f"{path} has no recorded wire traffic")
        self.wire: list[dict[str, Any]] = [w for w in wire if isinstance(w, dict)]
        self.served = 0

    @property
    def remaining(self) -> int:
        return len(self.wire) - self.served

    def serve(self, request: dict[str, Any] | None) -> web.Response:
        """The reply to one POST (``request`` = its JSON body, or None)."""
        if self.served >= len(self.wire):
            return json_error(410, "replay exhausted: no more recorded responses")
        response = self.wire[self.served]
        self.served += 1
        if request is not None and request.get("stream"):
            return web.Response(
                body=synthesize(response),
                content_type="text/event-stream",
                headers={"cache-control": "no-cache"},
            )
        return web.Response(body=json.dumps(response).encode(), content_type="application/json")
