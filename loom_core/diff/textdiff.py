"""Word-level diff of two texts, as ops a view can colour and a terminal can print.

Words, runs of whitespace and punctuation marks are the tokens, so joining the
``a`` sides of all ops gives back text A exactly and joining the ``b`` sides gives
text B: a GUI colours spans without re-tokenising anything. The tokens are
aligned with the run aligner (:mod:`loom_core.diff.align`): an exact
longest-common-subsequence diff when the changed middle is small, a linear
greedy resync when it is large. ``difflib`` is not used because it goes
quadratic on repetitive text (a 3,000-word tool result took seconds).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from loom_core.diff.align import Pair, align, intern_tokens

_WORD = re.compile(r"\s+|\w+|[^\w\s]")
_LINE = re.compile(r"[^\n]*\n|[^\n]+")
MAX_WORD_TOKENS = 200_000  # per side; longer texts are diffed line by line


@dataclass(frozen=True)
class WordOp:
    """One span: ``equal`` (a == b), ``insert`` (b only), ``delete`` (a only) or ``replace``."""

    op: str
    a: str
    b: str

    def to_dict(self) -> dict[str, str]:
        return {"op": self.op, "a": self.a, "b": self.b}


def split_words(text: str) -> list[str]:
    """Words, whitespace runs and single punctuation marks, in order."""
    return _WORD.findall(text)


def word_diff(a: str, b: str) -> list[WordOp]:
    """The ops turning ``a`` into ``b`` (adjacent ops of one kind merged)."""
    wa, wb = split_words(a), split_words(b)
    if max(len(wa), len(wb)) > MAX_WORD_TOKENS:
        wa, wb = _LINE.findall(a), _LINE.findall(b)
    ia, ib = intern_tokens(wa, wb)
    pairs = align(ia, ib, substitution=2)
    same = [i is not None and j is not None and ia[i] == ib[j] for i, j in pairs]
    _join_changes(pairs, same, wa)
    return _group(pairs, same, wa, wb)


def _join_changes(pairs: list[Pair], same: list[bool], wa: list[str]) -> None:
    """Blanks that merely separate two changes join them (``[-a b-]``, not ``[-a-] [-b-]``)."""
    for k in range(1, len(pairs) - 1):
        i = pairs[k][0]
        # a kept pair (same[k]) has both sides, so i is an index there
        if same[k] and i is not None and not same[k - 1] and not same[k + 1] and not wa[i].strip():
            same[k] = False


def _group(pairs: list[Pair], same: list[bool], wa: list[str], wb: list[str]) -> list[WordOp]:
    """One op per run of equal tokens or of changed ones (joined once: no quadratic concat)."""
    ops: list[WordOp] = []
    k, n = 0, len(pairs)
    while k < n:
        end = k
        while end < n and same[end] == same[k]:
            end += 1
        run = pairs[k:end]
        text_a = "".join(wa[i] for i, _ in run if i is not None)
        text_b = "".join(wb[j] for _, j in run if j is not None)
        if same[k]:
            ops.append(WordOp("equal", text_a, text_b))
        else:
            ops.append(
                WordOp(
                    "replace" if text_a and text_b else "delete" if text_a else "insert",
                    text_a,
                    text_b,
                )
            )
        k = end
    return ops


def changed_words(ops: Sequence[WordOp]) -> tuple[list[str], list[str]]:
    """(words only in A, words only in B), without whitespace: for tests and summaries."""
    gone = [w for op in ops if op.op in ("delete", "replace") for w in op.a.split()]
    new = [w for op in ops if op.op in ("insert", "replace") for w in op.b.split()]
    return gone, new


def render(ops: Sequence[WordOp], context: int = 4, limit: int = 240) -> str:
    """One line like ``the answer is [-42-]{+43+} ...``: changes with a few words around."""
    parts: list[str] = []
    last = len(ops) - 1
    for k, op in enumerate(ops):
        if op.op == "equal":
            words = op.a.split()
            head = words[:context] if k > 0 else []
            tail = words[-context:] if k < last else []
            if len(words) > 2 * context or k in (0, last):
                gap = len(words) > len(head) + len(tail)
                parts.extend([*head, *(["…"] if gap else []), *tail])
            else:
                parts.extend(words)
            continue
        if op.a.strip():
            parts.append("[-" + " ".join(op.a.split()) + "-]")
        if op.b.strip():
            parts.append("{+" + " ".join(op.b.split()) + "+}")
    line = " ".join(parts)
    return line if len(line) <= limit else line[: limit - 1] + "…"
