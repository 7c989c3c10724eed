"""Whether a step matches a search, decided when the search asks (schema 3).

Why no ``tsvector`` is stored per step: making it (PostgreSQL's parser, four columns) and
indexing it (GIN) were half of the server's work for each step written, and a search
never needs it for most steps: the runs' summaries of words (:mod:`.pg_runwords`) name
the runs that may match, and only their steps are asked, newest first, until the search
has its hits. So a step keeps its words as cut (:func:`~.pg_query.words`; ``wtool``,
``wagent``, ``wbody``, and ``tags`` that are words already) and :func:`step_match` makes
the same ``tsvector`` from them, with the same weights, as ingestion made before: the
same lexemes and positions, so every answer is what the stored one gave. A step written
before schema 3 keeps its stored ``doc`` and is matched on it.

Two things keep a probe cheap: the columns after the last weight a query names are left
out (``is:error`` asks the tags, not the body: the columns before it are kept so that
positions, and so phrases, are unchanged), and a word the step must hold is first looked
for as a substring of its text (``strpos``, about 30 times cheaper than the parser), only
a step holding every such word is parsed. A lexeme is always a substring of the lower-case
words it was parsed from, so that test never loses a match.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

LEXEME = re.compile(r"'((?:[^'\\]|''|\\.)*)'(?::([*A-D]+))?")
OPERATOR = re.compile(r"\s+|<->|<\d+>|[&|!()]")
ALL_WEIGHTS = "ABCD"
# each weight's column, as ingestion made the stored doc (pg_query.WEIGHTS); tags may
# hold capitals (a tag is not cut by ``words``), so its substring test is on lower()
COLUMNS = (("s.wtool", "A"), ("s.wagent", "B"), ("s.tags", "C"), ("s.wbody", "D"))
_SUBSTRING_OF = {"A": "s.wtool", "B": "s.wagent", "C": "lower(s.tags)", "D": "s.wbody"}
_PLAIN_WORD = re.compile(r"[a-z0-9]+")


def tokens(canonical: str) -> Iterator[tuple[str, str, str]]:
    """A query as PostgreSQL prints it, as ``("lexeme", text, weights)`` and
    ``("op", operator, "")``; ValueError on anything else."""
    pos = 0
    while pos < len(canonical):
        lexeme = LEXEME.match(canonical, pos)
        if lexeme:
            yield "lexeme", lexeme.group(1), lexeme.group(2) or ""
            pos = lexeme.end()
            continue
        operator = OPERATOR.match(canonical, pos)
        if operator is None:
            raise ValueError(canonical)
        if operator.group().strip():
            yield "op", operator.group(), ""
        pos = operator.end()


def conjuncts(canonical: str) -> list[list[tuple[str, str, str]]]:
    """The query's parts joined by a top-level ``&`` (``&`` binds tighter than ``|``,
    so a top-level ``|`` makes the whole query one part)."""
    every = list(tokens(canonical))
    parts: list[list[tuple[str, str, str]]] = [[]]
    depth = 0
    for token in every:
        kind, text, _ = token
        if kind == "op":
            depth += (text == "(") - (text == ")")
            if depth == 0 and text == "|":
                return [every]
            if depth == 0 and text == "&":
                parts.append([])
                continue
        parts[-1].append(token)
    return [p for p in parts if p]


def positive(canonical: str) -> list[list[tuple[str, str, str]]]:
    """The parts a matching step must satisfy without a negation in them: what a run's
    summary can be asked (a negated word may be in a run and not in its matching step)."""
    return [p for p in conjuncts(canonical) if ("op", "!", "") not in p]


def _last_weight(canonical: str) -> int:
    """How many columns the query needs, tool first (a lexeme without weights: all)."""
    used = [
        max(ALL_WEIGHTS.index(w) for w in (flags.replace("*", "") or "D"))
        for kind, _, flags in tokens(canonical)
        if kind == "lexeme"
    ]
    return max(used, default=len(COLUMNS) - 1) + 1


def step_doc(canonical: str) -> str:
    """The step's ``tsvector`` as ingestion made it, up to the last column the query asks."""
    parts = [
        f"setweight(to_tsvector('simple', {column}), '{weight}')"
        for column, weight in COLUMNS[: _last_weight(canonical)]
    ]
    return " || ".join(parts)


def _required(canonical: str) -> list[tuple[str, str]]:
    """(word, weights) a matching step holds: each lexeme of a part without ``!`` or ``|``
    (plain ASCII words only: the substring test is exact for those)."""
    out: list[tuple[str, str]] = []
    for part in positive(canonical):
        if any(kind == "op" and text == "|" for kind, text, _ in part):
            continue
        for kind, text, flags in part:
            if kind == "lexeme" and _PLAIN_WORD.fullmatch(text):
                out.append((text, flags.replace("*", "") or ALL_WEIGHTS))
    return out


def step_match(canonical: str) -> tuple[str, list[Any]]:
    """The condition on ``s`` (a step) that it matches ``canonical`` (a ``tsquery``'s
    text as PostgreSQL prints it), and its arguments."""
    tests: list[str] = []
    args: list[Any] = []
    for word, weights in _required(canonical):
        tests.append(
            "(" + " OR ".join(f"strpos({_SUBSTRING_OF[w]}, %s) > 0" for w in weights) + ")"
        )
        args += [word] * len(weights)
    parsed = f"{step_doc(canonical)} @@ %s::tsquery"
    fresh = " AND ".join([*tests, parsed])
    condition = f"(CASE WHEN s.doc IS NULL THEN {fresh} ELSE s.doc @@ %s::tsquery END)"
    return condition, [*args, canonical, canonical]
