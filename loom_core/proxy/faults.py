"""Crash points: the proxy kills itself at a named point of an exchange's life (tests).

Why in the product: the promise "an exchange is on disk before the client receives
its last byte" is about what a ``kill -9`` can interrupt, and only a real process
killed at each step shows it, every time, without timing luck. The crash tests start
a proxy with ``LOOM_PROXY_CRASH_AT=POINT`` (or ``POINT@N``: the N-th exchange that
reaches POINT, default the first); the proxy sends itself ``SIGKILL`` there. Unset
(always, outside those tests) :func:`reached` is one global check.

The points, in the order an exchange passes them (each once per exchange):

* ``request`` -- the client's request is read, nothing sent upstream yet;
* ``upstream`` -- the upstream's status and headers arrived (no body read yet);
* ``relayed`` -- a stream's first bytes were written to the client;
* ``record`` -- the final response is known and nothing of it is written yet;
* ``sidecar`` -- the exchange sidecar holds it, the journal does not yet;
* ``journal`` -- both files hold it; the client has not had its last byte;
* ``answered`` -- the client was handed its last byte.
"""

from __future__ import annotations

import os
import signal
import sys

ENV = "LOOM_PROXY_CRASH_AT"
POINTS = ("request", "upstream", "relayed", "record", "sidecar", "journal", "answered")


def _parse(value: str) -> tuple[str, int] | None:
    if not value:
        return None
    point, _, nth = value.partition("@")
    if point not in POINTS or (nth and not nth.isdigit()):
        print(
            f"loom proxy: ignoring {ENV}={value!r} (expected one of {', '.join(POINTS)}[@N])",
            file=sys.stderr,
            flush=True,
        )
        return None
    return point, int(nth or 1)


_ARMED = _parse(os.environ.get(ENV, ""))
_seen = 0


def reached(point: str) -> None:
    """An exchange reached ``point``: die here if this is the armed crash point."""
    global _seen
    if _ARMED is None or _ARMED[0] != point:
        return
    _seen += 1
    if _seen == _ARMED[1]:
        # no finally, no flush, no exit handler: a real crash (TerminateProcess on Windows)
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))
