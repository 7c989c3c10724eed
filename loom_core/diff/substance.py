"""Comparing runs from different producers by what each step did.

Why: loom-harness's statuses (key and result equal) suit two loom runs, whose keys hash
what the step was asked. A foreign reader's keys hash what identifies the step in its
source (a call number, the producer's tool-call id), and its results carry the producer's
ids and usage members (``toolu_…`` in a Claude Code transcript, ``call_…`` in an OpenAI
span; ``cache_read_input_tokens: 0`` in one, absent in the other). Compared that way, a
Claude Code run and an OpenTelemetry run of the same task differ at every step. So when
either run is foreign the steps are compared by substance: a model call by its text and
the tool calls it asked for (name and arguments); a tool or human step by the arguments
of the call it answers and by what it returned. Ids and usage are left aside (the token
and cost deltas still report usage). Two loom runs keep loom-harness's statuses, so the
first divergence agrees with ``loom diff``.

Tool names: Claude Code reaches any tool of its own through MCP, and names it
``mcp__<server>__<tool>`` (Claude Code's documentation on MCP tools in permissions and
hooks); an SDK agent calls the same tool by its own name. Compared by substance, a name is
taken without that prefix, so ``mcp__travel__search`` is the ``search`` of the other run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from loom_core.formats.document import Document, text_and_calls
from loom_core.views.context import ContextIndex, build_context

TEXT_KINDS = ("model", "sample")
_MCP_PREFIX = re.compile(r"^mcp__.+?__(?=.)")


def tool_name(name: str) -> str:
    """A tool's name without Claude Code's ``mcp__<server>__`` prefix."""
    return _MCP_PREFIX.sub("", name)


def plain_kind(kind: str) -> str:
    """A step kind with its tool named as :func:`tool_name` does."""
    return "tool:" + tool_name(kind[5:]) if kind.startswith("tool:") else kind


def by_substance(a: Document, b: Document) -> bool:
    """Whether ``a`` and ``b`` are compared by substance (either came from another tool)."""
    return a.is_foreign or b.is_foreign


def call_of(doc: Document, index: ContextIndex, i: int) -> dict[str, Any] | None:
    """The tool call (``{id, name, input}``) that effect ``i`` answers, when it can be told."""
    model_eff = index.result_pairs.get(i)
    if model_eff is None:
        return None
    calls = text_and_calls(doc.result(model_eff))[1]
    kind = doc.effects[i].kind or ""
    if doc.is_proxy:
        tuid = doc.meta(i).tuid
        return next((c for c in calls if c.get("id") == tuid), None)
    name = kind[5:] if kind.startswith("tool:") else "ask_human"
    earlier = sum(
        1
        for j in range(model_eff + 1, i)
        if index.result_pairs.get(j) == model_eff and (doc.effects[j].kind or "") == kind
    )
    same = [c for c in calls if c.get("name") == name]
    return same[earlier] if earlier < len(same) else None


def as_structure(value: Any) -> Any:
    """A dict/list as is, a string holding a JSON object/array decoded, else ``None``."""
    if isinstance(value, (dict, list)):
        return value
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            decoded = json.loads(value)
        except ValueError:
            return None
        return decoded if isinstance(decoded, (dict, list)) else None
    return None


def _plain(value: Any) -> Any:
    """A result as compared across producers: JSON text decoded, other text stripped."""
    structure = as_structure(value)
    if structure is not None:
        return structure
    return value.strip() if isinstance(value, str) else value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def model_substance(value: Any) -> tuple[str, list[tuple[str, Any]]]:
    """A model result without ids or usage: its text and the calls (name, arguments)."""
    text, calls = text_and_calls(value)
    return text.strip(), [
        (tool_name(str(c.get("name", ""))), _plain(c.get("input", {}))) for c in calls
    ]


@dataclass
class Substance:
    """Compares steps of ``a`` and ``b`` by substance; context indexes built once, in
    ``cache`` (the diff's, under ``"a"`` / ``"b"``, which the pair details share)."""

    a: Document
    b: Document
    cache: dict[str, Any] = field(default_factory=dict)

    def index(self, side: str) -> ContextIndex:
        found = self.cache.get(side)
        if found is None:
            found = self.cache[side] = build_context(self.a if side == "a" else self.b)
        return found

    def _args(self, side: str, i: int) -> Any:
        doc = self.a if side == "a" else self.b
        call = call_of(doc, self.index(side), i)
        return None if call is None else _plain(call.get("input", {}))

    def tokens(self, side: str, keep: list[int]) -> list[Hashable]:
        """What the aligner matches steps ``keep`` of a side by: kind and depth, and for a
        tool or human step the arguments of its call (when it can be told)."""
        doc = self.a if side == "a" else self.b
        out: list[Hashable] = []
        for i in keep:
            effect = doc.effects[i]
            kind, depth = plain_kind(effect.kind or ""), effect.depth or 0
            args = self._args(side, i) if kind.startswith("tool:") or kind == "human" else None
            out.append((kind, depth) if args is None else (kind, depth, _canonical(args)))
        return out

    def same_kind(self, i: int, j: int) -> bool:
        """Same kind, a tool named with or without Claude Code's MCP prefix."""
        return plain_kind(self.a.effects[i].kind or "") == plain_kind(self.b.effects[j].kind or "")

    def same_inputs(self, i: int, j: int) -> bool:
        """Same arguments of the call a tool/human step answers (unknown on a side: same)."""
        kind = self.a.effects[i].kind or ""
        if not (kind.startswith("tool:") or kind == "human"):
            return True
        args_a, args_b = self._args("a", i), self._args("b", j)
        return args_a is None or args_b is None or args_a == args_b

    def same_results(self, i: int, j: int) -> bool:
        """Same model text and calls, or the same returned value."""
        ra, rb = self.a.result(i), self.b.result(j)
        if (self.a.effects[i].kind or "") in TEXT_KINDS:
            return model_substance(ra) == model_substance(rb)
        return bool(_plain(ra) == _plain(rb))
