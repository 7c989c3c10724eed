"""One model call reported by several instrumentations, recognised and kept as one step.

Why: the normal set-up reports a call more than once. The Anthropic SDK (2.x) opens its own
GenAI span (scope ``com.anthropic.sdk.python``, ``anthropic.messages.create``) through the
global tracer provider, and ``phoenix.otel.register()`` or ``Traceloop.init()`` set that
provider while their instrumentation wraps the same client; OpenInference and OpenLLMetry
can both wrap one client; the OpenAI Agents SDK's response span sits around the OpenAI
client's. Shown as they come, each call would be two or three steps, its tokens and cost
counted as often -- a plausible wrong number. So the reports of one call are grouped:

- **nesting**: a model span whose model spans below are all one call is that call (an
  instrumentation around another); one with several calls below is a container, no call;
- **same time**: spans that overlap in time, from different instrumentation scopes (one
  instrumentation reports a call once), that agree on the response id, the output tokens,
  the text or the tool-call ids, and contradict each other on none of them. OpenLLMetry's
  span is not made current around the call, so its sibling reports sit beside it, even in
  another trace.

The richest report (output content, then input content, then usage) is the step; what it
lacks (usage, model) is taken from the others, and the others travel with it for the raw
view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loom_core.formats.otlp_decode import Span
from loom_core.formats.otlp_genai import ModelCall


@dataclass
class Call:
    """One model call: the report shown as the step, and the same call's other reports."""

    span: Span
    call: ModelCall
    others: list[Span] = field(default_factory=list)

    @property
    def start_ns(self) -> int:
        return min([self.span.start_ns, *(s.start_ns for s in self.others)])


def group_calls(
    spans: list[Span],
    read: Callable[[Span], ModelCall],
    ancestors: Callable[[Span], list[Span]],
) -> list[Call]:
    """The model ``spans`` (time order) as calls; ``read`` reads one span, ``ancestors``
    gives a span's ancestors (nearest first). Containers are left out."""
    calls = {s.span_id: read(s) for s in spans}
    groups = _Groups({s.span_id: s for s in spans})
    _join_overlapping(spans, calls, groups)
    containers = _join_nested(spans, calls, groups, ancestors)
    members: dict[str, list[Span]] = {}
    for span in spans:
        if span.span_id not in containers:
            members.setdefault(groups.find(span.span_id), []).append(span)
    out = [_merged(group, calls) for group in members.values()]
    return sorted(out, key=lambda c: (c.start_ns, c.span.end_ns))


class _Groups:
    """Union-find over span ids, each group knowing its spans' scopes."""

    def __init__(self, spans: dict[str, Span]) -> None:
        self.parent = {i: i for i in spans}
        self.scopes = {i: {s.scope} for i, s in spans.items()}

    def find(self, i: str) -> str:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra
            self.scopes[ra] |= self.scopes.pop(rb)


def _join_overlapping(spans: list[Span], calls: dict[str, ModelCall], groups: _Groups) -> None:
    """Group spans of different scopes that overlap in time and agree (see module doc)."""
    for i, a in enumerate(spans):
        for b in spans[i + 1 :]:
            if b.start_ns > a.end_ns:
                break  # time order: nothing later overlaps ``a``
            ra, rb = groups.find(a.span_id), groups.find(b.span_id)
            if ra == rb or groups.scopes[ra] & groups.scopes[rb]:
                continue
            ca, cb = calls[a.span_id], calls[b.span_id]
            if _agree(ca, cb) and not _conflict(ca, cb):
                groups.join(a.span_id, b.span_id)


def _join_nested(
    spans: list[Span],
    calls: dict[str, ModelCall],
    groups: _Groups,
    ancestors: Callable[[Span], list[Span]],
) -> set[str]:
    """Join each model span to the one call below it; the ids of containers."""
    ids = {s.span_id for s in spans}
    below: dict[str, list[Span]] = {}
    depth: dict[str, int] = {}
    for span in spans:
        chain = [a for a in ancestors(span) if a.span_id in ids]
        depth[span.span_id] = len(chain)
        for up in chain:
            below.setdefault(up.span_id, []).append(span)
    containers: set[str] = set()
    for span in sorted(spans, key=lambda s: -depth[s.span_id]):  # innermost first
        inner = below.get(span.span_id)
        if not inner:
            continue
        roots = {groups.find(s.span_id) for s in inner if s.span_id not in containers}
        one = calls[inner[0].span_id]
        if len(roots) == 1 and not _conflict(calls[span.span_id], one):
            groups.join(roots.pop(), span.span_id)
        else:
            containers.add(span.span_id)
    return containers


def _tool_ids(call: ModelCall) -> tuple[str, ...]:
    return tuple(str(c.get("id") or "") for c in call.tool_calls)


def _agree(a: ModelCall, b: ModelCall) -> bool:
    """Some fact both reports hold is the same."""
    return bool(
        (a.response_id and a.response_id == b.response_id)
        or (a.usage["output_tokens"] and a.usage["output_tokens"] == b.usage["output_tokens"])
        or (a.text.strip() and a.text.strip() == b.text.strip())
        or (any(_tool_ids(a)) and _tool_ids(a) == _tool_ids(b))
    )


def _conflict(a: ModelCall, b: ModelCall) -> bool:
    """A fact both reports hold differs: they are two calls."""
    return bool(
        (a.response_id and b.response_id and a.response_id != b.response_id)
        or (
            a.usage["output_tokens"]
            and b.usage["output_tokens"]
            and a.usage["output_tokens"] != b.usage["output_tokens"]
        )
        or (a.text.strip() and b.text.strip() and a.text.strip() != b.text.strip())
    )


def _richness(span: Span, call: ModelCall) -> tuple[int, ...]:
    return (
        int(bool(call.text or call.tool_calls)),
        int(call.inputs is not None),
        int(bool(call.usage["input_tokens"] or call.usage["output_tokens"])),
        len(span.attributes),
    )


def _merged(group: list[Span], calls: dict[str, ModelCall]) -> Call:
    """The group's richest report, completed from the others."""
    best = max(group, key=lambda s: _richness(s, calls[s.span_id]))
    call = calls[best.span_id]
    others = [s for s in group if s is not best]
    for other in (calls[s.span_id] for s in others):
        if not (call.usage["input_tokens"] or call.usage["output_tokens"]):
            call.usage = other.usage
        call.model = call.model or other.model
        call.response_id = call.response_id or other.response_id
        call.tools = call.tools or other.tools
        call.problems += [p for p in other.problems if p not in call.problems]
    return Call(best, call, others)


def same_call_records(call: Call) -> list[dict[str, Any]]:
    """The other reports of ``call`` as the raw view shows them."""
    return [s.record() for s in call.others]
