"""An agent that hangs up when the test says so, not when a client timeout fires.

Three tests asked "the client gives up while its call is held" with an SDK client whose
timeout was 0.5-1 s, counted from the request. On a loaded machine the upstream's answer,
and so the hold, can come later than that: the client was gone before there was anything
to hold, and the test waited for a hold (or a cancellation) that never came. Here the test
waits for the hold, an event, and only then hangs up, so the order is the same on any
machine. A socket closed by the agent is what the proxy sees of any client that gives up,
whatever its SDK's timeout machinery, so a plain socket is the honest stand-in.
"""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlsplit

TOOLS = [{"name": "deploy", "description": "deploy", "input_schema": {"type": "object"}}]
SHIP_IT = {
    "model": "fake-1",
    "max_tokens": 64,
    "tools": TOOLS,
    "messages": [{"role": "user", "content": "ship it"}],
}


class HangingUpAgent:
    """Sends one Anthropic Messages request at once; :meth:`hang_up` closes the connection."""

    def __init__(self, base_url: str, body: dict[str, Any] | None = None) -> None:
        address = urlsplit(base_url)
        assert address.hostname and address.port
        data = json.dumps(body or SHIP_IT).encode()
        head = (
            f"POST /v1/messages HTTP/1.1\r\nHost: {address.hostname}:{address.port}\r\n"
            "Content-Type: application/json\r\nx-api-key: k\r\n"
            f"anthropic-version: 2023-06-01\r\nContent-Length: {len(data)}\r\n\r\n"
        )
        self.sock = socket.create_connection((address.hostname, address.port), timeout=30)
        self.sock.sendall(head.encode() + data)

    def hang_up(self) -> None:
        """Close the connection as a client that gave up does (FIN first, then close)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # the proxy closed it already
            pass
        self.sock.close()

    def __enter__(self) -> HangingUpAgent:
        return self

    def __exit__(self, *_: object) -> None:
        self.hang_up()
