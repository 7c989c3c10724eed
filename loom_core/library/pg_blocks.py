"""Summaries of words per block of a run's steps: which steps a search parses at all.

Why: with no index over the steps' own words (schema 3, :mod:`.pg_match`), a search whose
words are each in most runs but seldom in one step together (two rarer words, a phrase)
would parse every step of every run its summaries name. A summary per block of
:data:`BLOCK` steps (``step_words``: each word of the block's steps once, prefixed by
its weight, as a run's summary is) under a GIN index names the blocks that may hold a
match; only their steps are read. It costs a fraction of a per-step index to write (a
block's distinct words, not each step's), and a run's summary is the union of its
blocks'. A block whose words the parser would cut differently (:func:`~.pg_steps.
_as_parsed`) or too many to hold is :data:`~.pg_steps.EVERY_WORD`: a candidate of every
search. A run written before schema 3 has no blocks (``run_words.blocks`` false): each
of its steps is a candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loom_core.library.pg_rows import with_run
from loom_core.library.pg_steps import EVERY_WORD, SUMMARY_BYTES, _as_parsed, as_lexemes

BLOCK = 64  # steps per block summary
WHOLE = 2**31 - 1  # a range's end that takes every step of a run
SPANS_AT_ONCE = 512  # block ranges verified in one query, newest first


def block_doc(seen: Sequence[set[str]], as_parsed: bool | None = None) -> str:
    """A block's summary as ``tsvector`` text from its distinct words per column.
    ``as_parsed``: already known whether every word is one the parser takes as it is
    (:func:`~.pg_steps._as_parsed`, a property of each word: true of a run's words is
    true of each block's); None: looked at here."""
    texts = [" ".join(column) for column in seen]
    size = sum(len(t) for t in texts) + 8 * sum(len(c) for c in seen)
    if as_parsed is None:
        as_parsed = all(map(_as_parsed, texts))
    if size > SUMMARY_BYTES or not as_parsed:
        return EVERY_WORD
    return as_lexemes(seen)


def blocks_text(cuts: Sequence[list[str]]) -> tuple[str, tuple[set[str], ...]]:
    """A run's block summaries as ``COPY`` text without the run's id, from its words as
    cut per column (:func:`~.pg_steps.steps_text`); and the run's distinct words per
    column. Whether the parser takes every word as it is is asked once of all the run's
    words, not of each block's (most runs: then no block needs asking)."""
    every: tuple[set[str], ...] = tuple(set() for _ in cuts)
    plain = all(_as_parsed(" ".join(column)) for column in cuts) or None
    lines = []
    for block, lo in enumerate(range(0, len(cuts[0]), BLOCK)):
        # each step's words once (a column's steps often repeat: a tool's name)
        seen = [set(" ".join(set(column[lo : lo + BLOCK])).split(" ")) for column in cuts]
        lines.append(f"{block}\t{block_doc(seen, plain)}\n")  # no escape: words
        for mine, theirs in zip(every, seen, strict=True):
            mine |= theirs
    return "".join(lines), every


def send_blocks(conn: Any, run: int, text: str) -> None:
    """Copy the block summaries of run ``run`` in from their text (:func:`blocks_text`)."""
    with conn.cursor().copy("COPY step_words (run, block, doc) FROM STDIN") as copy:
        copy.write(with_run(text, run))


def spans(conn: Any, runs: list[int], summary: str | None) -> list[tuple[int, int, int]]:
    """The step ranges ``(run, first, end)`` of ``runs`` that may hold a match, newest
    first: the blocks whose summary may match, every step of a run without blocks (or of
    every run when ``summary`` is None: no word to narrow by)."""
    if summary is None:
        return [(run, 0, WHOLE) for run in runs]
    rows = conn.execute(
        f"SELECT run, block * {BLOCK}, block * {BLOCK} + {BLOCK} FROM step_words "
        f"WHERE run = ANY(%s) AND doc @@ (%s::tsquery || '{EVERY_WORD}'::tsquery) "
        f"UNION ALL SELECT run, 0, {WHOLE} FROM run_words WHERE run = ANY(%s) AND NOT blocks "
        "ORDER BY 1 DESC, 2 DESC",
        (runs, summary, runs),
    ).fetchall()
    return [(int(r), int(lo), int(hi)) for r, lo, hi in rows]


def span_table(chosen: Sequence[tuple[int, int, int]]) -> tuple[str, list[Any]]:
    """``chosen`` as a table ``c (run, lo, hi)`` for a query's FROM, and its arguments."""
    columns = [list(c) for c in zip(*chosen, strict=True)] if chosen else [[], [], []]
    return "unnest(%s::bigint[], %s::int[], %s::int[]) c (run, lo, hi)", columns


def run_matches(summary: str | None, steps: str, step_args: list[Any]) -> tuple[str, list[Any]]:
    """A query of one row when run ``c.run`` has a step passing ``steps`` (conditions
    on ``s``), read block by block in order and stopping at the first: only the blocks
    whose summary may match, every step of a run without blocks. For a ``LATERAL`` join:
    as an ``EXISTS`` the planner hashed it, reading every candidate block of every run."""
    if summary is None:
        return f"SELECT 1 FROM steps s WHERE s.run = c.run AND {steps} LIMIT 1", step_args
    in_blocks = (
        f"SELECT 1 FROM step_words b JOIN steps s ON s.run = b.run "
        f"AND s.pos >= b.block * {BLOCK} AND s.pos < b.block * {BLOCK} + {BLOCK} "
        f"WHERE b.run = c.run AND b.doc @@ (%s::tsquery || '{EVERY_WORD}'::tsquery) AND {steps}"
    )
    unblocked = (
        "SELECT 1 FROM run_words w JOIN steps s ON s.run = w.run "
        f"WHERE w.run = c.run AND NOT w.blocks AND {steps}"
    )
    query = f"({in_blocks} LIMIT 1) UNION ALL ({unblocked} LIMIT 1) LIMIT 1"
    return query, [summary, *step_args, *step_args]
