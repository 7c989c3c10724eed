"""Compare two runs: aligned rows, first divergence, token and cost deltas.

The statuses are loom-harness's (loom-format.md §10.4), applied to *aligned*
pairs instead of positions: a pair is ``identical`` when kind, key and result are
equal, ``results-differ`` / ``inputs-differ`` / ``kinds-differ`` otherwise; a step
with no partner is ``only-a`` / ``only-b``. Results are compared as raw bytes
first and decoded (Python equality, ``1 == 1.0``) only when the bytes differ, so
two 100,000-effect runs diff without decoding what they share.

Fork edits: a branch holds an ``edit`` effect (the edited context) right before its
first live model call, where its parent has that model call. The steps are aligned
without the edits, so the parent's call at the fork point pairs with the branch's
call after the edit (status ``edited``: its context was changed there), the shared
prefix stays identical and the tails line up after it. Each edit then comes back as
its own row just before that call: it is the first divergence, at the same seq
where loom-harness's positional ``loom diff`` puts it.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any, NamedTuple

from loom_core.diff.align import Pair, align, intern_tokens
from loom_core.diff.substance import Substance, by_substance
from loom_core.diff.usage import RunUsage, SideTotals, run_usage
from loom_core.formats.document import Document, decode_raw

IDENTICAL, RESULTS, INPUTS, KINDS = "identical", "results-differ", "inputs-differ", "kinds-differ"
ONLY_A, ONLY_B = "only-a", "only-b"
EDITED = "edited"  # the model calls at a fork point: one side's context was edited before it
STATUSES = (IDENTICAL, EDITED, RESULTS, INPUTS, KINDS, ONLY_A, ONLY_B)
EDIT_KIND = "edit"


class Row(NamedTuple):
    """One aligned step: effect indices in A and B (``None``: no partner) and the status."""

    a: int | None
    b: int | None
    status: str


@dataclass(frozen=True)
class Divergence:
    """The first aligned row that is not identical, with the seqs on each side."""

    row: int
    status: str
    a_seq: int | None
    b_seq: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"row": self.row, "status": self.status, "a_seq": self.a_seq, "b_seq": self.b_seq}


@dataclass(frozen=True)
class Delta:
    """B minus A: tokens and USD (``None`` when either side's cost is unknown)."""

    input_tokens: int
    output_tokens: int
    cost: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost,
        }


@dataclass(frozen=True)
class Totals:
    """Row counts per status and each side's tokens and cost."""

    statuses: dict[str, int]
    a: SideTotals
    b: SideTotals

    @property
    def delta(self) -> Delta:
        cost = None if self.a.cost is None or self.b.cost is None else self.b.cost - self.a.cost
        return Delta(
            self.b.input_tokens - self.a.input_tokens,
            self.b.output_tokens - self.a.output_tokens,
            cost,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "statuses": dict(self.statuses),
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "delta": self.delta.to_dict(),
        }


@dataclass(frozen=True, eq=False)
class RunDiff:
    """The comparison of run ``a`` with run ``b`` (immutable; rows in alignment order)."""

    a: Document
    b: Document
    rows: list[Row]
    identical_prefix: int
    first_divergence: Divergence | None
    totals: Totals
    usage_a: RunUsage
    usage_b: RunUsage
    cache: dict[str, Any] = field(default_factory=dict, repr=False)  # lazy per-run indexes
    by_substance: bool = False  # steps compared by what they did (substance.py), not keys

    @property
    def identical(self) -> bool:
        return self.first_divergence is None

    def row_delta(self, row: int | Row) -> Delta:
        """Tokens and USD of B's step minus A's step (a missing side counts as zero)."""
        r = self.rows[row] if isinstance(row, int) else row
        ua, ub = self.usage_a, self.usage_b
        ia = ua.tokens_in[r.a] if r.a is not None else 0
        oa = ua.tokens_out[r.a] if r.a is not None else 0
        ca = ua.cost[r.a] if r.a is not None else 0.0
        ib = ub.tokens_in[r.b] if r.b is not None else 0
        ob = ub.tokens_out[r.b] if r.b is not None else 0
        cb = ub.cost[r.b] if r.b is not None else 0.0
        cost = None if math.isnan(ca) or math.isnan(cb) else cb - ca
        return Delta(ib - ia, ob - oa, cost)

    def to_dict(self, rows: bool = True) -> dict[str, Any]:
        """A JSON-ready report (rows hold effect indices, which are the seqs of a dense log)."""
        out: dict[str, Any] = {
            "a": self.a.path,
            "b": self.b.path,
            "identical": self.identical,
            "identical_prefix": self.identical_prefix,
            "by_substance": self.by_substance,
            "first_divergence": self.first_divergence.to_dict() if self.first_divergence else None,
            "totals": self.totals.to_dict(),
        }
        if rows:
            out["rows"] = [
                {"a": r.a, "b": r.b, "status": r.status, **self.row_delta(r).to_dict()}
                for r in self.rows
            ]
        return out


def _tokens(doc: Document, keep: list[int]) -> list[tuple[str, int]]:
    effects = doc.effects
    return [(effects[i].kind or "", effects[i].depth or 0) for i in keep]


def _edits(doc: Document) -> tuple[list[int], list[int]]:
    """(indices of ``edit`` effects, indices of every other effect)."""
    edits: list[int] = []
    keep: list[int] = []
    for i, e in enumerate(doc.effects):
        (edits if e.kind == EDIT_KIND else keep).append(i)
    return edits, keep


def _with_edits(pairs: list[Pair], edits_a: list[int], edits_b: list[int]) -> list[Pair]:
    """Put each edit back just before the first aligned step that follows it on its side
    (edits meeting at the same place are paired with each other)."""
    out: list[Pair] = []
    ea, eb = deque(edits_a), deque(edits_b)
    for i, j in pairs:
        out.extend(zip_longest(_take_before(ea, i), _take_before(eb, j)))
        out.append((i, j))
    out.extend(zip_longest(ea, eb))
    return out


def _take_before(queue: deque[int], limit: int | None) -> list[int]:
    """Pop the queued indices below ``limit`` (none when this side has no step here)."""
    taken: list[int] = []
    while limit is not None and queue and queue[0] < limit:
        taken.append(queue.popleft())
    return taken


def aligned_pairs(a: Document, b: Document, sub: Substance | None = None) -> list[Pair]:
    """Every effect of both runs in aligned pairs: by kind and depth, fork edits aside; with
    ``sub`` (runs of different producers) a tool step also by its call's arguments, so an
    extra call on one side does not shift the same calls apart."""
    edits_a, keep_a = _edits(a)
    edits_b, keep_b = _edits(b)
    if sub is None:
        ta, tb = intern_tokens(_tokens(a, keep_a), _tokens(b, keep_b))
    else:
        ta, tb = intern_tokens(sub.tokens("a", keep_a), sub.tokens("b", keep_b))
    pairs: list[Pair] = [
        (None if i is None else keep_a[i], None if j is None else keep_b[j])
        for i, j in align(ta, tb)
    ]
    return _with_edits(pairs, edits_a, edits_b) if edits_a or edits_b else pairs


def _after_edit(doc: Document, i: int | None) -> bool:
    return i is not None and i > 0 and doc.effects[i - 1].kind == EDIT_KIND


def _same_result(ra: Any, rb: Any) -> bool:
    if ra is None or rb is None:
        return bool(decode_raw(ra) == decode_raw(rb))
    if ra == rb:  # msgspec.Raw compares its bytes without copying them
        return True
    return bool(decode_raw(ra) == decode_raw(rb))


def pair_status(a: Document, b: Document, i: int | None, j: int | None) -> str:
    """The §10.4 status of one aligned pair."""
    if i is None:
        return ONLY_B
    if j is None:
        return ONLY_A
    ea, eb = a.effects[i], b.effects[j]
    if (ea.kind or "") != (eb.kind or ""):
        return KINDS
    if (ea.key or "") != (eb.key or ""):
        return INPUTS
    return IDENTICAL if _same_result(ea.result, eb.result) else RESULTS


def substance_status(sub: Substance, i: int | None, j: int | None) -> str:
    """The status of one aligned pair of runs from different producers (substance.py)."""
    if i is None:
        return ONLY_B
    if j is None:
        return ONLY_A
    if not sub.same_kind(i, j):
        return KINDS
    if not sub.same_inputs(i, j):
        return INPUTS
    return IDENTICAL if sub.same_results(i, j) else RESULTS


def _status(
    a: Document, b: Document, i: int | None, j: int | None, sub: Substance | None = None
) -> str:
    """:func:`pair_status` (or by substance, with ``sub``), except that a pair of model
    calls of which only one follows an edit is ``edited`` (proxy keys count exchanges, so
    the key alone would not tell)."""
    status = pair_status(a, b, i, j) if sub is None else substance_status(sub, i, j)
    if status in (ONLY_A, ONLY_B, KINDS) or _after_edit(a, i) == _after_edit(b, j):
        return status
    return EDITED


def _seq(doc: Document, i: int | None) -> int | None:
    if i is None:
        return None
    seq = doc.effects[i].seq
    return i if seq is None else seq


def compare(a: Document, b: Document) -> RunDiff:
    """Align and compare two loaded runs (traces, journals, wirelogs or foreign runs)."""
    cache: dict[str, Any] = {}
    sub = Substance(a, b, cache) if by_substance(a, b) else None
    rows = [Row(i, j, _status(a, b, i, j, sub)) for i, j in aligned_pairs(a, b, sub)]
    prefix = next((k for k, r in enumerate(rows) if r.status != IDENTICAL), len(rows))
    first = None
    if prefix < len(rows):
        r = rows[prefix]
        first = Divergence(prefix, r.status, _seq(a, r.a), _seq(b, r.b))
    counts = Counter(r.status for r in rows)
    usage_a, usage_b = run_usage(a), run_usage(b)
    totals = Totals(
        {s: counts[s] for s in STATUSES if counts[s]}, usage_a.totals(), usage_b.totals()
    )
    return RunDiff(a, b, rows, prefix, first, totals, usage_a, usage_b, cache, sub is not None)
