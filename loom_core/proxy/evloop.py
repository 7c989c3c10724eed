"""Which event loop a proxy process runs on: uvloop where it is installed, else asyncio's.

Why: the proxy's time per exchange is mostly the event loop and aiohttp's transport
machinery (a profile of ``benchmarks/proxy_cpu.py`` runs says so); uvloop is a
drop-in loop written over libuv that does that part in C. It is a dependency only
where it builds (not on Windows), so ``auto`` falls back to the standard loop
wherever it cannot be imported; ``--event-loop asyncio`` forces the standard loop
(for comparison, or to rule the loop out when something misbehaves).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

CHOICES = ("auto", "asyncio", "uvloop")


def loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The factory for ``choice`` (None: asyncio's default loop).

    Raises ``ValueError`` naming the cause when ``uvloop`` is asked for and missing.
    """
    if choice not in CHOICES:
        raise ValueError(f"unknown event loop {choice!r}; choose one of {', '.join(CHOICES)}")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError as err:
        if choice == "uvloop":
            raise ValueError(f"--event-loop uvloop: uvloop is not installed ({err})") from None
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``uvloop`` or ``asyncio``: what a running loop is (for the ready file and status)."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"


def run_on(
    main: Coroutine[Any, Any, T], factory: Callable[[], asyncio.AbstractEventLoop] | None
) -> T:
    """``asyncio.run(main)`` on a loop from ``factory`` (None: the standard loop)."""
    if factory is None:
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
