"""A run's steps as ``COPY`` text made a column at a time: the text cleaned and escaped in
a few passes over each whole column, and sent as one text, not a row at a time.

Why: the client's Python work per step (four calls to clean text, a row of eleven values
handed to psycopg to format) was a large part of the team library's write on the client,
which the wall clock waited on once the server's share had shrunk (schema 3). Each
column's texts are joined once, tested or escaped by ``str`` methods that run in C over
the whole column, and split back; the rows are joined by ``str.join``. The values are
the ones the calls per step made (:func:`clean`, ``COPY``'s text format): a column that
is not all ASCII without a NUL is cleaned a step at a time. Cutting words stays a call
per step (:func:`~.pg_query.words`): cutting a whole column at once was measured slower
(every word is split and joined either way).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from loom_core.library.extract import StepText
from loom_core.library.pg_query import words

CHUNK = 1024  # steps made into text at once: a huge run is not held as text whole
INT64 = 2**63 - 1
NULL = "\\N"  # how COPY's text format writes NULL
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_ESCAPED = ("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r")  # COPY's text format


def clean(text: str) -> str:
    """PostgreSQL's text holds no NUL and UTF-8 no lone surrogate (a tool result or a
    broken file may hold either): each becomes U+FFFD. ASCII text without a NUL is
    returned as it is, without a pass of the expression (most text; two tests in C)."""
    if text.isascii() and "\x00" not in text:
        return text
    return _UNSTORABLE.sub("\ufffd", text)


def clean_column(texts: Sequence[str]) -> list[str]:
    """``[clean(t) for t in texts]``; the column as it is when all of it is ASCII
    without a NUL (two tests over the whole column)."""
    whole = "".join(texts)
    if whole.isascii() and "\x00" not in whole:
        return list(texts)
    return [clean(t) for t in texts]


def escape_column(texts: Sequence[str]) -> list[str]:
    """Cleaned texts (no NUL) as ``COPY``'s text format writes a value: backslash, tab,
    newline and carriage return escaped, the whole column at once."""
    joined = "\x00".join(texts)
    if not any(c in joined for c, _ in _ESCAPED):
        return list(texts)
    for char, escaped in _ESCAPED:
        joined = joined.replace(char, escaped)
    return joined.split("\x00")


def copy_text(columns: Sequence[Sequence[str]]) -> str:
    """Rows of ``COPY`` text from values already escaped (:func:`escape_column`; NULL
    as ``\\N``), one column per sequence."""
    if not columns or not columns[0]:
        return ""
    return "\n".join(map("\t".join, zip(*columns, strict=True))) + "\n"


def clamp(value: int | None) -> int | None:
    """A count a BIGINT holds (a hand-edited file can hold any integer)."""
    return None if value is None else max(-INT64 - 1, min(INT64, value))


def _within(value: int) -> int | None:
    """:func:`clamp` without its call for the common value already in range."""
    return value if -INT64 - 1 <= value <= INT64 else clamp(value)


def _cut_few(texts: Sequence[str]) -> list[str]:
    """``[words(t) for t in texts]`` for a column of few distinct values (a run's tools,
    its agents): each value cut once."""
    cut = {text: words(text) for text in set(texts)}
    return [cut[text] for text in texts]


def with_run(text: str, run: int) -> str:
    """``COPY`` text made without its first column, the run's id (its lines were made
    before the id was known: :mod:`.pg_runtext`), with it. A value's newline is
    escaped, so every newline ends a line."""
    if not text:
        return text
    head = f"{run}\t"
    return head + text[:-1].replace("\n", "\n" + head) + "\n"


def step_lines(first: int, rows: Sequence[StepText]) -> tuple[str, list[list[str]]]:
    """``rows`` (a run's steps from position ``first``) as ``COPY`` text for the columns
    of :data:`~.pg_steps.STEP_COLUMNS` but the first, the run's id (:func:`with_run`),
    and their words as cut per column (tool, agent, tags, body; tags are words already
    and stored as they are)."""
    tools, agents, bodies = [r.tool for r in rows], [r.agent for r in rows], [r.body for r in rows]
    tags = clean_column([r.tags for r in rows])
    cuts = [_cut_few(tools), _cut_few(agents), tags, list(map(words, bodies))]
    texts = [clean_column(c) for c in (bodies, tools, agents)] + [tags]
    columns = [
        list(map(str, range(first, first + len(rows)))),
        [NULL if r.seq is None else str(_within(r.seq)) for r in rows],
        *map(escape_column, texts),
        escape_column(clean_column([r.sample for r in rows])),
        *map(escape_column, (cuts[0], cuts[1], cuts[3])),
    ]
    return copy_text(columns), cuts
