"""The shield's approval control plane on the proxy (loom-format.md §7.7).

Exists only when a shield with an approvals registry is active and the proxy is
not replaying; otherwise the server's catch-all answers every ``/loom/shield/*``
with 404 ``{"error": "no shield active on this proxy"}``.

:func:`with_control_plane` wraps the screen built from the flags in a
:class:`ControlledScreen`, which keeps the two screening calls of the hook
contract (:mod:`.hooks`) and adds its optional members:

* ``add_routes(app)`` -- ``GET /loom/shield/pending`` and ``POST /loom/shield/decide``;
* ``await start(port)`` -- a fresh control token (``uuid4().hex``) is written to
  ``<runtime dir>/<port>.token`` with mode 0600 (runtime dir: ``$LOOM_RUNTIME_DIR``
  or ``~/.loom/proxies``); ``token_file`` is then that path (the ready file says it);
* ``await close()`` -- the token file is deleted (the runner calls this on every
  clean stop: SIGINT, SIGTERM, end of ``record``).

Both routes, in this order:

1. ``Host`` must name a loopback address (``127.0.0.0/8``, ``::1``, ``localhost``,
   with any port) or be absent, else 403 -- ours, a DNS-rebinding guard: a web page
   whose name resolves to 127.0.0.1 sends its own name as ``Host``;
2. ``x-loom-token`` must equal the token, else 403
   ``{"error": "missing or wrong x-loom-token header"}``;
3. ``pending`` (exact path: with a query string it is 404) answers 200
   ``{"pending": [...]}`` in loom-harness's shape (``Approvals.pending()``);
4. ``decide`` reads ``{"id", "decision", "by"}`` (any decision other than
   ``"approve"`` is a deny) plus our additive keys ``reason``, ``edited_input`` and
   ``always_allow``, passed to the registry; 200 ``{"ok": true}``, or 404
   ``{"error": "no pending approval '<id>'"}`` when the registry refuses (unknown,
   already decided, approver not permitted, bad edit). A body that is not a JSON
   object is a 400 with loom-harness's words, and so is any body we could not record
   faithfully (:mod:`.decide_body`: too deep, not UTF-8, a lone surrogate, a number out
   of range, a text key that is not a string); unlike loom-harness, the token is
   checked before the body is read.

A decision wakes the held call through the registry's listeners (see
``loom_core.shield.adapter``); a held call's timeout and its client's disconnect are
handled there too (the disconnect cancels the approval, so it leaves ``pending``).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

from aiohttp import web

from loom_core.proxy.decide_body import BadBody, decide_body
from loom_core.proxy.hooks import Exchange, Screen, Screened
from loom_core.proxy.running_proxies import runtime_dir  # where loom approve looks too
from loom_core.proxy.upstream import json_error

PENDING, DECIDE = "/loom/shield/pending", "/loom/shield/decide"
TOKEN_HEADER = "x-loom-token"


def loopback_host(host: str | None) -> bool:
    """True for an absent ``Host`` or one naming a loopback address (port ignored)."""
    if not host:
        return True
    name = host.strip().lower()
    if name.startswith("["):  # "[::1]:8788"
        name = name[1:].split("]", 1)[0]
    elif name.count(":") == 1:  # "127.0.0.1:8788"; several colons: a bare IPv6 literal
        name = name.split(":", 1)[0]
    if name.rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def write_token_file(path: Path, token: str) -> None:
    """Write ``token`` to ``path`` readable by the owner only.

    Why a fresh file renamed into place: opening ``path`` itself would follow a symlink
    planted there (writing the token into, and chmod-ing, whatever it points at). A new
    file made with ``O_EXCL`` (mode 0600 from the start) in the same folder, then
    renamed over ``path``, replaces a planted link or a stale file without touching
    what it pointed at.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(token.encode())
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


class ControlPlane:
    """The two control routes over one approvals registry, and the token they require."""

    def __init__(self, approvals: Any) -> None:
        self.approvals = approvals
        self.token: str | None = None  # None until start(): every request is refused
        self.token_file: Path | None = None

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get(PENDING, self.pending)
        app.router.add_post(DECIDE, self.decide)

    async def start(self, port: int) -> None:
        token = uuid.uuid4().hex
        path = runtime_dir() / f"{port}.token"
        write_token_file(path, token)
        self.token, self.token_file = token, path

    async def close(self) -> None:
        self.token = None
        if self.token_file is not None:
            self.token_file.unlink(missing_ok=True)
            self.token_file = None

    def refused(self, request: web.Request) -> web.Response | None:
        """The 403 for a non-loopback ``Host`` or a wrong token, else None (the event
        stream, :mod:`.events`, guards itself with the same checks)."""
        return self._refused(request)

    def _refused(self, request: web.Request) -> web.Response | None:
        if not loopback_host(request.headers.get("Host")):
            return json_error(403, "control endpoints answer loopback Host names only")
        given = request.headers.get(TOKEN_HEADER, "")
        if not (self.token and hmac.compare_digest(given.encode(), self.token.encode())):
            return json_error(403, "missing or wrong x-loom-token header")
        return None

    async def pending(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        if request.query_string:
            return json_error(404, f"no such proxy endpoint: {request.path_qs}")
        return web.json_response({"pending": self.approvals.pending()})

    async def decide(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        try:
            body = decide_body(await request.read())
        except BadBody as err:
            return json_error(400, str(err))
        from loom_core.shield import ApprovalRejected

        try:
            self.approvals.decide(
                body.get("id") or "",
                body.get("decision") or "",
                by=body.get("by"),
                reason=body.get("reason"),
                edited_input=body.get("edited_input"),
                always_allow=body.get("always_allow"),
            )
        except ApprovalRejected:
            return json_error(404, f"no pending approval {body.get('id')!r}")  # harness's words
        return web.json_response({"ok": True})


class ControlledScreen:
    """A screen with an approvals registry, plus the control plane over that registry.

    Screening is delegated unchanged; any other attribute (``approvals``,
    ``warnings``, ``shield``...) is the wrapped screen's.
    """

    def __init__(self, screen: Any) -> None:
        self.screen: Screen = screen
        self.control = ControlPlane(screen.approvals)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.screen, name)

    @property
    def token_file(self) -> Path | None:
        return self.control.token_file

    def observe_request(self, exchange: Exchange) -> list[dict[str, Any]]:
        return self.screen.observe_request(exchange)

    async def screen_response(self, exchange: Exchange, response: dict[str, Any]) -> Screened:
        return await self.screen.screen_response(exchange, response)

    def add_routes(self, app: web.Application) -> None:
        self.control.add_routes(app)

    async def start(self, port: int) -> None:
        start = getattr(self.screen, "start", None)
        if start is not None:
            await start(port)
        await self.control.start(port)

    async def close(self) -> None:
        try:
            close = getattr(self.screen, "close", None)
            if close is not None:
                await close()
        finally:
            await self.control.close()


def with_control_plane(screen: Any) -> Any:
    """``screen`` with the control plane when it has an approvals registry and no
    routes of its own; otherwise ``screen`` unchanged (None stays None)."""
    if (
        screen is None
        or getattr(screen, "approvals", None) is None
        or getattr(screen, "add_routes", None) is not None
    ):
        return screen
    return ControlledScreen(screen)
