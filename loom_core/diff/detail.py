"""What differs inside one aligned pair: texts word by word, arguments and results by path.

Computed on demand for the pair a user selects (never for all rows). A tool
effect does not store its arguments; they are in the tool call of the model
effect that asked for it, found through the context index (proxy traces pair by
``meta.tuid``, harness traces FIFO by name, loom-format.md §15). That index is
built once per run and kept in the diff's cache.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from loom_core.diff.compare import EDIT_KIND, Row, RunDiff
from loom_core.diff.structdiff import Change, struct_diff
from loom_core.diff.substance import TEXT_KINDS, Substance, as_structure, call_of, tool_name
from loom_core.diff.textdiff import WordOp, word_diff
from loom_core.fork.edits import edit_summary
from loom_core.formats.document import Document, text_and_calls
from loom_core.views.context import ContextIndex

_TEXT_KINDS = TEXT_KINDS


@dataclass(frozen=True)
class PairDetail:
    """The selected pair's texts, their word diff, and structural diffs of args and results."""

    row: Row
    a_text: str | None
    b_text: str | None
    text_diff: list[WordOp]
    a_args: Any = None
    b_args: Any = None
    args_diff: list[Change] = field(default_factory=list)
    result_diff: list[Change] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.row.a,
            "b": self.row.b,
            "status": self.row.status,
            "a_text": self.a_text,
            "b_text": self.b_text,
            "text_diff": [op.to_dict() for op in self.text_diff],
            "a_args": self.a_args,
            "b_args": self.b_args,
            "args_diff": [c.to_dict() for c in self.args_diff],
            "result_diff": [c.to_dict() for c in self.result_diff],
        }


def effect_text(kind: str, value: Any, doc: Document | None = None, i: int = -1) -> str:
    """The text a person reads for a step: model text, a tool's string, a fork's edit in
    words (with ``doc`` and its index ``i``), else its JSON."""
    if kind in _TEXT_KINDS:
        return text_and_calls(value)[0]
    if kind == "edit" and doc is not None:
        return edit_summary(doc, i, value)
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _context(diff: RunDiff, side: str) -> ContextIndex:
    return Substance(diff.a, diff.b, diff.cache).index(side)


def _args(diff: RunDiff, side: str, i: int | None) -> Any:
    """A step's inputs as JSON: a model step's calls, a tool/human step's call arguments."""
    if i is None:
        return None
    doc = diff.a if side == "a" else diff.b
    kind = doc.effects[i].kind or ""
    if kind in _TEXT_KINDS:
        calls = text_and_calls(doc.result(i))[1]
        name = tool_name if diff.by_substance else str  # Claude Code's MCP prefix aside
        return {
            "tool_calls": [
                {"name": name(str(c.get("name", ""))), "args": c.get("input", {})} for c in calls
            ]
        }
    if kind.startswith("tool:") or kind == "human":
        call = call_of(doc, _context(diff, side), i)
        return None if call is None else {"args": call.get("input", {})}
    return None


def pair_detail(diff: RunDiff, row: int | Row) -> PairDetail:
    """Word diff of the texts and structural diffs of args and results for one row."""
    r = diff.rows[row] if isinstance(row, int) else row
    va = diff.a.result(r.a) if r.a is not None else None
    vb = diff.b.result(r.b) if r.b is not None else None
    ka = (diff.a.effects[r.a].kind or "") if r.a is not None else ""
    kb = (diff.b.effects[r.b].kind or "") if r.b is not None else ""
    a_text = effect_text(ka, va, diff.a, r.a) if r.a is not None else None
    b_text = effect_text(kb, vb, diff.b, r.b) if r.b is not None else None
    text_ops = word_diff(a_text or "", b_text or "")
    a_args, b_args = _args(diff, "a", r.a), _args(diff, "b", r.b)
    args_diff = struct_diff(a_args, b_args) if (a_args is not None or b_args is not None) else []
    sa, sb = as_structure(va), as_structure(vb)
    lone_edit = EDIT_KIND in (ka, kb) and (r.a is None or r.b is None)  # its words say it all
    # across producers a model result's ids and usage are noise: its words and calls above
    # say what changed
    noise = diff.by_substance and ka in _TEXT_KINDS and kb in _TEXT_KINDS
    result_diff = (
        []
        if (sa is None and sb is None) or lone_edit or noise
        else struct_diff(va if sa is None else sa, vb if sb is None else sb)
    )
    return PairDetail(r, a_text, b_text, text_ops, a_args, b_args, args_diff, result_diff)
