"""Word-level diff of two texts, as ops a view can colour and a terminal can print.

Words, runs of whitespace and punctuation marks are the tokens, so joining the ``a`` sides of all ops gives back text A exactly and joining the
``b`` sides gives text B: a GUI colours spans without re-tokenising anything.
Long texts (tool results can be megabytes) are diffed line by line first and
word by word only inside changed lines, which keeps ``difflib`` off quadratic
inputs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Sequence

_WORD = re.compile(r"\s+|\w+|[^\w\s]")
_MAX_TOKENS = 3000  # per side, for a direct word-level SequenceMatcher


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
    ops: list[WordOp] = []
    _diff_tokens(split_words(a), split_words(b), ops, allow_lines=True)
    return _merge(ops)


def _emit(ops: list[WordOp], op: str, a: Sequence[str], b: Sequence[str]) -> None:
    if a or b:
        ops.append(WordOp(op, "".join(a), "".join(b)))


def _diff_tokens(ta: list[str], tb: list[str], ops: list[WordOp], allow_lines: bool) -> None:
    p = 0
    n = min(len(ta), len(tb))
    while p < n and ta[p] == tb[p]:
        p += 1
    s = 0
    while s < n - p and ta[-1 - s] == tb[-1 - s]:
        s += 1
    _emit(ops, "equal", ta[:p], ta[:p])
    ma, mb = ta[p:len(ta) - s], tb[p:len(tb) - s]
    if not ma or not mb:
        _emit(ops, "delete" if ma else "insert", ma, mb)
    elif len(ma) <= _MAX_TOKENS and len(mb) <= _MAX_TOKENS:
        _by_matcher(ma, mb, ops)
    elif allow_lines:
        _by_lines(ma, mb, ops)
    else:
        _emit(ops, "replace", ma, mb)
    _emit(ops, "equal", ta[len(ta) - s:], ta[len(ta) - s:])


def _by_matcher(ma: list[str], mb: list[str], ops: list[WordOp]) -> None:
    matcher = SequenceMatcher(None, ma, mb, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        _emit(ops, tag, ma[i1:i2], mb[j1:j2])


def _lines(tokens: list[str]) -> list[list[str]]:
    """Group tokens into lines (a token holding a newline ends its line)."""
    lines: list[list[str]] = [[]]
    for t in tokens:
        lines[-1].append(t)
        if "\n" in t:
            lines.append([])
    return [line for line in lines if line]


def _by_lines(ma: list[str], mb: list[str], ops: list[WordOp]) -> None:
    la, lb = _lines(ma), _lines(mb)
    keys_a, keys_b = ["".join(x) for x in la], ["".join(x) for x in lb]
    matcher = SequenceMatcher(None, keys_a, keys_b, autojunk=len(la) * len(lb) > 10**7)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        wa = [t for line in la[i1:i2] for t in line]
        wb = [t for line in lb[j1:j2] for t in line]
        if tag == "replace":
            _diff_tokens(wa, wb, ops, allow_lines=False)
        else:
            _emit(ops, tag, wa, wb)


def _merge(ops: list[WordOp]) -> list[WordOp]:
    """Join neighbours of one kind; a delete next to an insert becomes a replace.

    Blanks that merely separate two changes join them (``[-a b-]``, not ``[-a-] [-b-]``).
    """
    out: list[WordOp] = []
    for k, op in enumerate(ops):
        if (op.op == "equal" and not op.a.strip() and 0 < k < len(ops) - 1
                and ops[k - 1].op != "equal" and ops[k + 1].op != "equal"):
            op = WordOp("replace", op.a, op.b)
        if out and (out[-1].op == op.op or {out[-1].op, op.op} <= {"insert", "delete", "replace"}):
            prev = out[-1]
            kind = prev.op if prev.op == op.op else "replace"
            out[-1] = WordOp(kind, prev.a + op.a, prev.b + op.b)
        else:
            out.append(op)
    return out


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
