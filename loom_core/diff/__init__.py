"""Compare two runs: aligned steps, first divergence, token/cost deltas, pair details.

The Compare view and ``python -m loom_core diff`` both use this API::

    diff = compare(load(a_path), load(b_path))
    diff.rows, diff.first_divergence, diff.totals, diff.to_dict()
    pair_detail(diff, row)  # word diff of texts, structural diffs of args and results
"""

from __future__ import annotations

from loom_core.diff.compare import (
    EDITED,
    IDENTICAL,
    INPUTS,
    KINDS,
    ONLY_A,
    ONLY_B,
    RESULTS,
    STATUSES,
    Delta,
    Divergence,
    Row,
    RunDiff,
    Totals,
    aligned_pairs,
    compare,
    pair_status,
)
from loom_core.diff.detail import PairDetail, effect_text, pair_detail
from loom_core.diff.structdiff import Change, struct_diff
from loom_core.diff.substance import call_of
from loom_core.diff.textdiff import WordOp, changed_words, render, word_diff
from loom_core.diff.usage import SideTotals

__all__ = [
    "EDITED",
    "IDENTICAL",
    "INPUTS",
    "KINDS",
    "ONLY_A",
    "ONLY_B",
    "RESULTS",
    "STATUSES",
    "Change",
    "Delta",
    "Divergence",
    "PairDetail",
    "Row",
    "RunDiff",
    "SideTotals",
    "Totals",
    "WordOp",
    "aligned_pairs",
    "call_of",
    "changed_words",
    "compare",
    "effect_text",
    "pair_detail",
    "pair_status",
    "render",
    "struct_diff",
    "word_diff",
]
