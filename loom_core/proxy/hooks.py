"""Where the shield plugs into the proxy's request path (loom-format.md §7, §7.9).

The shield engine lives in ``loom_core.shield`` (sans-I/O, built separately); the
proxy only knows this contract. Per forwarded POST, in this order:

1. ``observe_request(exchange)`` -- **sync**, called once the body is parsed and
   before anything is sent upstream. It sees the real (unscrubbed) request and
   returns shield events (e.g. ``tainted``, §7.4) that are stored with this exchange
   if it completes. It must not block: it runs on the event loop.
2. the request is forwarded unchanged.
3. ``await screen_response(exchange, response)`` -- **async**, called with the final
   response object (for a stream: the message reconstructed from the whole buffered
   stream) *before* anything is persisted or sent to the client. It may wait for an
   operator's approval (``--confirm``); it returns a :class:`Screened` with the
   response the client should get (blocked calls replaced by notices, §7.8) and the
   decision events (§1.6). If the client disconnects while it waits, the awaiting
   task is **cancelled** (``asyncio.CancelledError`` is raised inside it): the shield
   must drop its pending approval and re-raise; nothing of that exchange is recorded.
4. the proxy persists the screened response + all events, then replies (JSON, or a
   synthesized SSE stream when the upstream streamed, like loom-harness §6.5).

With no screen configured the proxy never buffers a stream: bytes are relayed as
they arrive. With a screen, streams are buffered whole (a call must be judged before
the client sees it). Optional screen members: ``async start(port)`` once the proxy
listens (write the control token file, §7.7), ``add_routes(app)`` before it starts
(control plane, event stream), ``token_file`` (path or None, reported in the ready
file) and ``async close()`` at shutdown.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from loom_core.proxy.config import ShieldFlags


@dataclass
class Exchange:
    """One POST in flight, as the shield sees it."""

    path: str  # request path + query, e.g. "/v1/messages"
    request: dict[str, Any]  # the parsed JSON body, real values (never scrubbed)
    dialect: str  # "anthropic" | "openai" | "responses", guessed from the path
    stream: bool  # the client asked for a stream (``"stream": true``)


@dataclass
class Screened:
    """What screening decided for one response."""

    response: dict[str, Any]  # what the client gets and the trace records
    events: list[dict[str, Any]] = field(default_factory=list)  # §1.6 shapes
    changed: bool = False  # True when ``response`` differs from the upstream's (re-serialise)


@runtime_checkable
class Screen(Protocol):
    """The two calls the proxy makes; see the module docstring for the contract."""

    def observe_request(self, exchange: Exchange) -> list[dict[str, Any]]:
        """Sync, before forwarding: events such as taint (must not block)."""
        ...

    async def screen_response(self, exchange: Exchange, response: dict[str, Any]) -> Screened:
        """Async, before persisting and replying; may wait for an approval; cancellable."""
        ...


class ShieldUnavailable(ValueError):
    """Shield flags were given but no shield could be built: the proxy must not start.

    A ``ValueError`` so every caller that reports a bad policy (exit 2, one line) reports
    this the same way; relaying tool calls unscreened when the user asked for screening
    would be the one unsafe outcome.
    """


def load_screen(config: ShieldFlags) -> Screen | None:
    """The screen for these flags: ``loom_core.shield.build_screen(config)``; None when no
    shield flag was given. Fails closed: when flags were given and no screen comes of
    them (no engine in this build, the engine fails, or it builds nothing) this raises
    :class:`ShieldUnavailable` instead of letting calls through unscreened.
    """
    if not config.requested:
        return None
    try:
        # A plugin lookup by name, not an import: the shield implements this module's
        # contract (it imports ``Screened`` from here), and a build without it must fail
        # closed with one line rather than crash at import.
        engine = importlib.import_module("loom_core.shield")
    except ImportError as err:
        raise ShieldUnavailable(
            f"shield flags were given but the shield engine cannot be "
            f"loaded ({err}); refusing to relay unscreened calls"
        ) from err
    factory = getattr(engine, "build_screen", None)
    if factory is None:
        raise ShieldUnavailable(
            "shield flags were given but this build has no shield engine; "
            "refusing to relay unscreened calls"
        )
    try:
        screen: Screen | None = factory(config)
    except (OSError, ValueError):
        raise  # a bad policy or rule: the CLI says which (exit 2)
    except Exception as err:  # noqa: BLE001 - any failure to build means no screening
        raise ShieldUnavailable(
            f"the shield could not be built ({type(err).__name__}: {err}); "
            f"refusing to relay unscreened calls"
        ) from err
    if screen is None:
        raise ShieldUnavailable(
            "shield flags were given but they make no shield; refusing to relay unscreened calls"
        )
    for warning in getattr(screen, "warnings", ()) or ():
        print(f"loom proxy: shield: {warning}", file=sys.stderr, flush=True)
    return screen
