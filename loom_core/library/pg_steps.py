"""A run's steps written to the team library, with the run's summary of words.

Why ``COPY`` straight into ``steps``: one round trip per step would make ingestion slower
than the local library's. The words are cut (:func:`~.pg_query.words`, called by
:func:`.pg_rows.step_lines`, which makes the ``COPY`` text a column at a time) and stored as
cut; no ``tsvector`` is made per step when it is written (the parser and a GIN index were
half of the server's work per step): a search makes it from these words on the steps it
asks (:mod:`.pg_match`).

Why a summary per run (``run_words``): a common word is in most steps of most runs, and
the steps' GIN index hands over every one of them before a search can stop at its first
hundred hits. The summary holds each word of the run's steps once, prefixed by the weight
(column) it has there (``A:bash``, ``D:config``), so a search finds the runs that may
hold a match among thousands of summaries, then probes only those
(:mod:`.pg_runwords`). The summary is made by the server's own parser from the run's
distinct words, one space apart, so it holds exactly the lexemes the steps' own
``tsvector`` hold (the parser cuts each space-separated word the same wherever it stands);
when every word is one the parser takes as it is (:func:`_as_parsed`: most runs), the
words are sent as the summary's lexemes and the parser is not asked.
A summary PostgreSQL cannot hold (a ``tsvector`` is at most 1 MB) is stored as the one
lexeme :data:`EVERY_WORD` (no word has a weight prefix): a candidate of every search.
NULL is a run indexed before summaries existed; its next index pass writes one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from loom_core.library.extract import StepText
from loom_core.library.pg_rows import CHUNK, step_lines, with_run

STEP_COLUMNS = "run, pos, seq, body, tool, agent, tags, sample, wtool, wagent, wbody"
SUMMARY_BYTES = 700_000  # a summary's words beyond this: EVERY_WORD (a tsvector < 1 MB)
EVERY_WORD = "all"  # the summary of a run with too many words: a candidate of every search
_SUMMARY = (
    "INSERT INTO run_words (run, doc) SELECT %s, array_to_tsvector(ARRAY("
    "SELECT v.w || l FROM (VALUES ('A:', to_tsvector('simple', %s)), "
    "('B:', to_tsvector('simple', %s)), ('C:', to_tsvector('simple', %s)), "
    "('D:', to_tsvector('simple', %s))) v (w, d), unnest(tsvector_to_array(v.d)) l)) "
    "ON CONFLICT (run) DO UPDATE SET doc = EXCLUDED.doc"
)


# a run's steps, blocks and summary deleted by one statement (a round trip): each
# data-modifying WITH query runs whether the statement reads it or not
STEPS_GONE = (
    "s AS (DELETE FROM steps WHERE run = %(run)s), "
    "w AS (DELETE FROM step_words WHERE run = %(run)s), "
    "r AS (DELETE FROM run_words WHERE run = %(run)s)"
)


def delete_steps(conn: Any, run: int) -> None:
    """A run's steps and its summary gone (it is re-indexed, forgotten, missing or
    deleted). Nothing cascades from ``runs`` to its steps and blocks (schema 4): whatever
    removes or replaces a run calls this (or uses :data:`STEPS_GONE`) in the same
    transaction."""
    conn.execute(f"WITH {STEPS_GONE} SELECT 1", {"run": run})


def steps_text(rows: Sequence[StepText]) -> tuple[list[str], list[list[str]]]:
    """A run's steps as ``COPY`` text without the run's id, :data:`CHUNK` steps a piece
    (:mod:`.pg_rows`), each with its words as cut (the search makes their ``tsvector``:
    :mod:`.pg_match`); and the cut words per column (tool, agent, tags, body), from which
    the run's block summaries and summary are made (:mod:`.pg_blocks`)."""
    chunks: list[str] = []
    cuts: list[list[str]] = [[], [], [], []]
    for first in range(0, len(rows), CHUNK):
        text, cut = step_lines(first, rows[first : first + CHUNK])
        chunks.append(text)
        for column, part in zip(cuts, cut, strict=True):
            column += part
    return chunks, cuts


def send_steps(conn: Any, run: int, chunks: Sequence[str]) -> None:
    """Copy the steps of run ``run`` in from their text (:func:`steps_text`)."""
    with conn.cursor().copy(f"COPY steps ({STEP_COLUMNS}) FROM STDIN") as copy:
        for text in chunks:
            copy.write(with_run(text, run))


def summary_statement(seen: tuple[set[str], ...]) -> tuple[str, tuple[Any, ...]]:
    """The statement that writes a run's summary from its distinct words per column (tool,
    agent, tags, body), and its arguments but the first, the run's id. Words the parser
    takes as they are (:func:`_as_parsed`) are sent as the summary's lexemes; any other
    word makes the server's parser cut them all, as the steps' were."""
    texts = [" ".join(column) for column in seen]
    # each word's UTF-8 bytes and 8 more: the joined text less its spaces
    spaces = [max(len(column) - 1, 0) for column in seen]
    size = sum(len(t.encode()) - n for t, n in zip(texts, spaces, strict=True))
    size += 8 * sum(map(len, seen))
    if size > SUMMARY_BYTES:
        doc = EVERY_WORD
    elif all(map(_as_parsed, texts)):
        doc = as_lexemes(seen)
    else:
        return _SUMMARY, tuple(texts)
    return (
        "INSERT INTO run_words (run, doc) VALUES (%s, %s::tsvector) "
        "ON CONFLICT (run) DO UPDATE SET doc = EXCLUDED.doc",
        (doc,),
    )


def as_lexemes(seen: Sequence[set[str]]) -> str:
    """Distinct words per column (tool, agent, tags, body) as the ``tsvector`` text of
    their weight-prefixed lexemes (``'A:bash' 'D:config'``), for words the parser takes
    as they are (:func:`_as_parsed`: no quote to escape). One text made by joins, not
    a lexeme at a time (psycopg dumps a list of strings one by one, in Python)."""
    parts = []
    for weight, column in zip("ABCD", seen, strict=True):
        kept = column - {""} if "" in column else column
        if kept:
            parts.append(f"'{weight}:" + f"' '{weight}:".join(kept) + "'")
    return " ".join(parts)


_CUT_BY_PARSER = re.compile(r"(?:^| )\d+e\d")  # 5e5e5 is 5e5 and e5 (a number first)
LONGEST_WORD = 2046  # the parser skips longer words (PostgreSQL's MAXSTRLEN)
# each byte as a class: a digit 0, e itself, another letter a, a space, anything else NUL
_CLASSES = bytes(
    48 if 48 <= c <= 57 else c if c in (32, 101) else 97 if 97 <= c <= 122 else 0
    for c in range(256)
)


def _as_parsed(text: str) -> bool:
    """Whether PostgreSQL's parser (``simple``) makes each space-separated word of
    ``text`` one lexeme, itself: lower-case ASCII letters and digits are one token each
    (checked against ``ts_debug``), except a number with an exponent followed by more
    (``5e5e5``, ``1e5x``) and words too long to index. The parser is not asked, saving
    the server a pass over the run's words. A property of each word, tested by passes in C
    over the text (its bytes mapped to classes, then looked for)."""
    if not text.isascii():
        return False
    classes = text.encode().translate(_CLASSES)
    return (
        b"\x00" not in classes
        and (b"0e0" not in classes or _CUT_BY_PARSER.search(text) is None)
        and (len(text) <= LONGEST_WORD or not _too_long(text))
    )


def _too_long(text: str) -> bool:
    """Whether a space-separated word of ``text`` is longer than :data:`LONGEST_WORD`.
    Such a word holds a whole aligned stretch of half its length, so only a text with a
    stretch that has no space is split."""
    half = (LONGEST_WORD + 1) // 2
    stretches = range(0, len(text) - half + 1, half)
    if all(" " in text[at : at + half] for at in stretches):
        return False
    return max(map(len, text.split(" "))) > LONGEST_WORD
