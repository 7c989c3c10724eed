"""Pause the cyclic garbage collector around bulk decoding.

A leaf so that both the trace loader and the parallel checksum can use it without
importing each other (``trace`` calls into ``fastcheck``, never the other way).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic collector: decoding allocates millions of acyclic objects."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
