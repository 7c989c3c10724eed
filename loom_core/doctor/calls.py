"""Tool calls paired with their results, as the loop and staleness checks need them.

A model effect lists the calls it made (name, arguments); the result is a later
``tool:<name>`` effect (or a ``human`` effect for ``ask_human``). Pairing follows
the trace's own rules (§15): proxy results by ``meta.tuid``, harness results
FIFO by name among the calls of the model effect the context index paired them
with. A call with no result (a sub-agent delegation, a paused or blocked call)
keeps ``result = None``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from loom_core.formats.document import Document, text_and_calls
from loom_core.views.context import ContextIndex

_ERROR_PREFIXES = ("error:",)


@dataclass
class ToolUse:
    """One requested call: the model effect that asked, what it asked, what came back."""

    model: int  # effect index of the requesting model call
    call_id: str
    name: str
    args: Any
    result: int | None = None  # effect index of the result

    @property
    def signature(self) -> tuple[str, str]:
        """(tool, canonical JSON of the arguments): equal for the same call repeated."""
        return self.name, canonical_args(self.args)


def canonical_args(args: Any) -> str:
    """Arguments as sorted-key JSON, so ``{"a":1,"b":2}`` equals ``{"b":2,"a":1}``."""
    return json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


def reads_as_error(value: Any) -> bool:
    """A result that says the call failed: an ``ERROR:``-style string (§1.5), a dict
    with a truthy ``error`` member, or an ``is_error``/``isError`` flag."""
    if isinstance(value, str):
        return value.lstrip()[:6].lower().startswith(_ERROR_PREFIXES)
    if isinstance(value, dict):
        return (
            bool(value.get("error"))
            or value.get("is_error") is True
            or value.get("isError") is True
        )
    return False


def tool_uses(doc: Document, index: ContextIndex, model_values: dict[int, Any]) -> list[ToolUse]:
    """Every requested tool call in log order, each with its result effect when paired."""
    uses: list[ToolUse] = []
    by_model: dict[int, list[ToolUse]] = {}
    for m in sorted(model_values):
        calls = text_and_calls(model_values[m])[1]
        mine = [
            ToolUse(
                m,
                str(c.get("id") or ""),
                str(c.get("name") or ""),
                c.get("input") if isinstance(c.get("input"), dict) else {},
            )
            for c in calls
        ]
        if mine:
            by_model[m] = mine
            uses.extend(mine)
    for i, m in sorted(index.result_pairs.items()):
        use = _match(doc, index, i, by_model.get(m, []))
        if use is not None:
            use.result = i
    return uses


def _match(doc: Document, index: ContextIndex, i: int, calls: list[ToolUse]) -> ToolUse | None:
    kind = doc.effects[i].kind or ""
    if doc.is_proxy:
        tuid = index.meta_of(i).tuid or ""
        return next((u for u in calls if u.result is None and u.call_id == tuid), None)
    name = kind[5:] if kind.startswith("tool:") else "ask_human"
    return next((u for u in calls if u.result is None and u.name == name), None)
