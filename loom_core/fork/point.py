"""The context at a fork point: what the model saw at one model step, ready to edit and resend.

Two sources, best first. ``request``: the proxy stored the exact request in its
sidecar (``<base>.exchanges.jsonl``), so the fork starts from exactly what was sent,
tools with their real schemas. ``frame``: otherwise the context is reconstructed from
the log (:mod:`loom_core.views.context`), as loom-harness would rebuild it; tools are then
known by name only (a trace never stores their schemas, loom-format.md §3.2).
"""

from __future__ import annotations

from pathlib import Path

from loom_core.fork.apply import apply_edit
from loom_core.fork.context import ForkContext
from loom_core.fork.items import make_item, normal_item, result_content
from loom_core.fork.requests import request_context
from loom_core.fork.snapshot import branch_request, proxy_snapshot_context
from loom_core.formats.canonical import proxy_model_key
from loom_core.formats.document import Document, text_and_calls
from loom_core.formats.wire import response_to_result
from loom_core.providers.base import ToolSpec
from loom_core.proxy.sidecar import read_sidecar
from loom_core.views.context import context_index
from loom_core.views.edit_delta import snapshot_origins
from loom_core.views.frames import Frame, frame_at

__all__ = [
    "ForkContext",
    "apply_edit",
    "context_index",
    "find_model_effect",
    "fork_context",
    "model_turn",
    "sidecar_path",
]


def find_model_effect(doc: Document, seq: int) -> int:
    """The log position of the top-level model step ``seq``; ValueError naming why not."""
    index = next((i for i, e in enumerate(doc.effects) if e.seq == seq), None)
    if index is None:
        raise ValueError(f"{doc.path}: no step {seq} (the log has steps 0..{len(doc.effects) - 1})")
    eff = doc.effects[index]
    if eff.kind != "model":
        raise ValueError(
            f"{doc.path}: step {seq} is a {eff.kind or 'kindless'} step, "
            f"not a model step; fork from a model step"
        )
    if (eff.depth or 0) != 0:
        raise ValueError(
            f"{doc.path}: step {seq} is a sub-agent's model step (depth "
            f"{eff.depth}); fork from a top-level model step"
        )
    return index


def model_turn(doc: Document, index: int) -> int:
    """How many top-level model steps come before log position ``index``."""
    return sum(1 for e in doc.effects[:index] if e.kind == "model" and not e.depth)


def sidecar_path(path: str | Path) -> Path:
    """``<base>.exchanges.jsonl`` beside a trace (``<base>`` = path minus ``.loom.json``)."""
    name = str(path)
    return Path(
        (name[: -len(".loom.json")] if name.endswith(".loom.json") else name) + ".exchanges.jsonl"
    )


def fork_context(doc: Document, path: str | Path, seq: int) -> ForkContext:
    """The context at model step ``seq`` of ``doc`` (read from ``path``)."""
    index = find_model_effect(doc, seq)
    style = "proxy" if doc.is_proxy else "harness"
    meta = doc.meta(index)
    ctx = ForkContext(
        "",
        [],
        [],
        seq=seq,
        index=index,
        turn=model_turn(doc, index),
        style=style,
        agent=str((meta.sys_hash if doc.is_proxy else meta.agent) or ""),
    )
    exact = _recorded_request(doc, path, index) if doc.is_proxy else None
    if exact is not None:
        _fill_from_request(doc, ctx, *exact)
    else:
        _fill_from_frame(doc, ctx)
    return ctx


# -- source "request": the proxy's sidecar ---------------------------------------------


def _recorded_request(
    doc: Document, path: str | Path, index: int
) -> tuple[ForkContext, str] | None:
    """The sidecar's exact request for model effect ``index``, if it is really this one.

    Checked two ways, so a sidecar left over from another session is never trusted:
    the effect's key must be the proxy key of its exchange index, and the recorded
    response must be what the effect holds.
    """
    n = sum(1 for e in doc.effects[:index] if e.kind == "model")
    side = sidecar_path(path)
    if doc.effects[index].key != proxy_model_key(n) or not side.is_file():
        return None
    try:
        exchange = next((x for x in read_sidecar(side).exchanges if x.n == n), None)
    except OSError:
        return None
    if exchange is None:
        return None
    recorded = response_to_result(exchange.response)
    if text_and_calls(recorded) != text_and_calls(doc.result(index)):
        return None
    return request_context(exchange.request, exchange.dialect), exchange.dialect


def _fill_from_request(doc: Document, ctx: ForkContext, req: ForkContext, dialect: str) -> None:
    by_tuid = {
        doc.meta(i).tuid: doc.effects[i].seq
        for i in range(ctx.index)
        if (doc.effects[i].kind or "").startswith("tool:") and doc.meta(i).tuid
    }
    ctx.system, ctx.messages, ctx.tools = req.system, req.messages, req.tools
    ctx.model, ctx.max_tokens, ctx.temperature = req.model, req.max_tokens, req.temperature
    ctx.source, ctx.dialect = "request", dialect
    ctx.origins = [
        by_tuid.get(m["tool_call_id"]) if m["role"] == "tool" else None for m in ctx.messages
    ]


# -- source "frame": reconstructed from the log ------------------------------------------

_USER_SOURCES = {
    "episode": "user",
    "task": "user",
    "clock": "clock",
    "memory": "memory",
    "compaction": "compaction",
}


def _fill_from_frame(doc: Document, ctx: ForkContext) -> None:
    frame = frame_at(context_index(doc), ctx.index)
    if frame is None:  # pragma: no cover - every model effect has a frame
        raise ValueError(f"{doc.path}: no context recorded for step {ctx.seq}")
    restored = proxy_snapshot_context(doc, ctx.index) if doc.is_proxy else None
    if restored is not None:
        ctx.messages, ctx.origins = restored
    else:
        _frame_items(doc, ctx, frame)
    ctx.system = frame.system()[0]
    ctx.tools = [ToolSpec(name) for name in frame.tools()[0]]
    meta = doc.meta(ctx.index)
    ctx.model = str(meta.model or doc.header.model or "")
    request = branch_request(doc, ctx.index)
    if request is not None:  # forking a branch's tail: its tools with their schemas
        ctx.tools = [ToolSpec(**t) for t in request.get("tools") or []]
        ctx.max_tokens, ctx.temperature = request.get("max_tokens"), request.get("temperature")


def _frame_items(doc: Document, ctx: ForkContext, frame: Frame) -> None:
    origins = snapshot_origins(frame.index, frame.ctx)  # what an earlier fork's edit kept
    for k in range(len(frame)):
        raw, msg = frame.ctx.items[k], frame.message(k)
        origin = doc.effects[msg.effect].seq if msg.effect is not None else None
        if raw[0] == "snapshot":  # an earlier fork's edit: keep its Item as written
            item, carried = normal_item(raw[1]), origins.get(k)
            origin = None if carried is None else doc.effects[carried].seq
        elif msg.role == "assistant":
            item = make_item("assistant", msg.text, "model", tool_calls=msg.tool_calls)
        elif msg.role == "tool":
            value = msg.raw_result if msg.source == "tool" else msg.text
            item = make_item(
                "tool",
                result_content(value, ctx.style),
                f"tool:{msg.name}",
                tool_call_id=msg.call_id,
                name=msg.name,
            )
        else:
            source = _USER_SOURCES.get(msg.source, "user")
            item = make_item("user", msg.text, source, pinned=source == "compaction")
        ctx.messages.append(item)
        ctx.origins.append(origin)
