"""A token budget shared by branches that run at the same time (heal's candidates).

Why reserve before each call: a model call's cost is only known when it returns,
so two branches that each check "spent < budget" before calling can both pass the
check and together bill twice the budget. Instead each call first *reserves* the
most it can bill -- an upper bound of its input plus its output limit -- and only
starts when that fits in what is left after what was spent and what the calls
in flight have reserved; the request's ``max_tokens`` is lowered so the output
cannot overrun its share. When the reply comes the reservation is replaced by
the tokens really billed, and the slack goes back to the others. A call that
does not fit waits while other calls are in flight (they may give tokens back),
and is refused once nothing is in flight: the branch stops with ``budget``. So
the total billed never exceeds the budget, as long as the input bound holds.

The input bound is the request's size in UTF-8 bytes (a byte-level BPE token --
Anthropic's, OpenAI's -- covers at least one byte), a few tokens per message for
the framing, and an allowance for the tool-use prompt providers add when tools
are offered. That is about four times the real count for English text, which is
the price of a promise that holds; the unused part is returned after each call.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from loom_core.providers.base import CancelToken, ModelRequest

MESSAGE_FRAMING = 8  # tokens a provider adds around each message (role, separators)
TOOLS_ALLOWANCE = 600  # the tool-use system prompt a provider adds when tools are offered
MIN_OUTPUT = 16  # a call that may not even answer this much is not worth paying for


def billed(usage: dict[str, Any]) -> int:
    """Input plus output tokens of one reply's ``usage`` (a wrong type counts as 0)."""
    return sum(
        int(v)
        for k, v in usage.items()
        if k in ("input_tokens", "output_tokens") and isinstance(v, (int, float))
    )


def input_bound(request: ModelRequest) -> int:
    """Most input tokens ``request`` can bill; see the module docstring."""
    size = len(request.system.encode())
    for m in request.messages:
        size += MESSAGE_FRAMING + len(str(m.get("content") or "").encode())
        if m.get("tool_calls"):
            size += len(json.dumps(m["tool_calls"], ensure_ascii=False).encode())
    for t in request.tools:
        size += len(json.dumps([t.name, t.description, t.schema], ensure_ascii=False).encode())
    return size + (TOOLS_ALLOWANCE if request.tools else 0)


@dataclass
class Grant:
    """One call's reservation: what it may bill in all, and its output limit."""

    tokens: int
    max_output: int


class SharedBudget:
    """``total`` tokens for every call of every branch given this object (thread-safe)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.spent = 0  # billed by calls that returned
        self.reserved = 0  # held by calls in flight
        self._in_flight = 0
        self._cond = threading.Condition()

    @property
    def left(self) -> int:
        with self._cond:
            return self.total - self.spent - self.reserved

    @property
    def exhausted(self) -> bool:
        """No call can be paid for any more, whatever the calls in flight give back."""
        with self._cond:
            return self.total - self.spent < MIN_OUTPUT

    def charge(self, tokens: int) -> None:
        """Tokens spent outside a reservation (an agent re-run's own calls)."""
        with self._cond:
            self.spent += tokens
            self._cond.notify_all()

    def reserve(self, request: ModelRequest, cancel: CancelToken | None = None) -> Grant | None:
        """Reserve ``request``'s worst case, waiting while calls in flight may free some;
        ``None`` when it can never fit (or the wait was cancelled)."""
        need = input_bound(request)
        with self._cond:
            while True:
                room = self.total - self.spent - self.reserved - need
                if room >= MIN_OUTPUT:
                    out = min(room, request.max_tokens)
                    grant = Grant(need + out, out)
                    self.reserved += grant.tokens
                    self._in_flight += 1
                    return grant
                if not self._in_flight or (cancel is not None and cancel.cancelled):
                    return None
                self._cond.wait(0.1)  # woken by ``settle``; the timeout re-reads ``cancel``

    def settle(self, grant: Grant, billed: int) -> None:
        """The call returned (``billed`` tokens) or failed (0: nothing known to be billed)."""
        with self._cond:
            self.reserved -= grant.tokens
            self.spent += billed
            self._in_flight -= 1
            self._cond.notify_all()
