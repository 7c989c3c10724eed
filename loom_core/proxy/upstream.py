"""The upstream side: which headers cross the proxy, the client session, error replies.

Forwarding rule (both directions): every header except the hop-by-hop ones
(RFC 9110 §7.6.1, plus any the ``Connection`` header names) and the few the proxy
must own: ``host`` (the upstream's), ``content-length`` (recomputed),
``content-encoding`` / ``accept-encoding`` (aiohttp decodes bodies so they can be
recorded, and negotiates compression with the upstream itself) and ``x-loom-*``
(our own control headers never leave the machine). API keys (``x-api-key``,
``authorization``) are forwarded as they are and never written anywhere: headers
only live in memory for the duration of the request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.helpers import get_env_proxy_for_url
from multidict import CIMultiDictProxy
from yarl import URL

from loom_core.proxy.watchdog import WatchedResponse

HOP_BY_HOP = frozenset(
    (
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    )
)
_OWNED_REQUEST = frozenset(
    ("host", "content-length", "content-encoding", "accept-encoding", "expect")
)
_OWNED_RESPONSE = frozenset(("content-length", "content-encoding", "date", "server"))


def _connection_listed(headers: CIMultiDictProxy[str]) -> set[str]:
    """Header names the ``Connection`` header declares hop-by-hop."""
    return {
        t.strip().lower()
        for value in headers.getall("connection", [])
        for t in value.split(",")
        if t.strip()
    }


def _filter(
    items: Iterable[tuple[str, str]], drop: frozenset[str], listed: set[str]
) -> list[tuple[str, str]]:
    out = []
    for name, value in items:
        low = name.lower()
        if low in HOP_BY_HOP or low in drop or low in listed or low.startswith("x-loom-"):
            continue
        out.append((name, value))
    return out


def request_headers(headers: CIMultiDictProxy[str]) -> list[tuple[str, str]]:
    """The client's headers to send upstream (duplicates kept, in order)."""
    return _filter(headers.items(), _OWNED_REQUEST, _connection_listed(headers))


def response_headers(headers: CIMultiDictProxy[str]) -> list[tuple[str, str]]:
    """The upstream's response headers to give the client."""
    return _filter(headers.items(), _OWNED_RESPONSE, _connection_listed(headers))


def client_session(timeout: float) -> aiohttp.ClientSession:
    """One pooled client per proxy; ``timeout`` bounds connecting here and each read
    gap in :mod:`.watchdog` (one check for all reads, not a timer per read), not the
    whole response -- streams may last long."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=None),
        response_class=WatchedResponse,
        auto_decompress=True,
        trust_env=False,
        skip_auto_headers=("User-Agent",),
        cookie_jar=aiohttp.DummyCookieJar(),
    )


def env_proxy(target: str) -> dict[str, Any]:
    """``proxy=`` / ``proxy_auth=`` for requests to ``target`` from ``HTTPS_PROXY`` & co.

    Decided once per process: aiohttp's ``trust_env`` would look the environment
    (and ``.netrc``) up in a worker thread on every request.
    """
    try:
        proxy, auth = get_env_proxy_for_url(URL(target))
    except LookupError:
        return {}
    return {"proxy": proxy, "proxy_auth": auth}


def json_error(status: int, message: str, **extra: object) -> web.Response:
    """A JSON error reply of the proxy itself (loom-harness's ``{"error": …}`` shape)."""
    return web.Response(
        status=status,
        content_type="application/json",
        body=json.dumps({"error": message, **extra}).encode(),
    )


def failure_reply(exc: BaseException, target: str, timeout: float, started: bool) -> web.Response:
    """Why the upstream could not answer: 504 on a timeout, else 502 (loom-harness's texts)."""
    if isinstance(exc, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return json_error(504, f"upstream {target} timed out after {timeout:g}s")
    if started:
        return json_error(502, f"upstream connection dropped: {exc}")
    return json_error(502, f"cannot reach upstream {target}: {exc}")


UPSTREAM_ERRORS = (aiohttp.ClientError, asyncio.TimeoutError, OSError)
