"""A run's steps written to the team library, with the run's summary of words.

Why ``COPY`` straight into ``steps``: one round trip per step would make ingestion slower
than the local library's. The words are cut here (:func:`~.pg_query.words`) and stored as
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
from collections.abc import Iterable
from typing import Any

from loom_core.library.extract import StepText
from loom_core.library.pg_query import words

STEP_COLUMNS = "run, pos, seq, body, tool, agent, tags, sample, wtool, wagent, wbody"
INT64 = 2**63 - 1
SUMMARY_BYTES = 700_000  # a summary's words beyond this: EVERY_WORD (a tsvector < 1 MB)
EVERY_WORD = "all"  # the summary of a run with too many words: a candidate of every search
_SUMMARY = (
    "INSERT INTO run_words (run, doc) SELECT %s, array_to_tsvector(ARRAY("
    "SELECT v.w || l FROM (VALUES ('A:', to_tsvector('simple', %s)), "
    "('B:', to_tsvector('simple', %s)), ('C:', to_tsvector('simple', %s)), "
    "('D:', to_tsvector('simple', %s))) v (w, d), unnest(tsvector_to_array(v.d)) l)) "
    "ON CONFLICT (run) DO UPDATE SET doc = EXCLUDED.doc"
)


def clamp(value: int | None) -> int | None:
    """A count a BIGINT holds (a hand-edited file can hold any integer)."""
    return None if value is None else max(-INT64 - 1, min(INT64, value))


def delete_steps(conn: Any, run: int) -> None:
    """A run's steps and its summary gone (it is re-indexed, forgotten or missing)."""
    conn.execute("DELETE FROM steps WHERE run = %s", (run,))
    conn.execute("DELETE FROM step_words WHERE run = %s", (run,))
    conn.execute("DELETE FROM run_words WHERE run = %s", (run,))


def insert_steps(conn: Any, run: int, rows: Iterable[StepText]) -> list[list[str]]:
    """Copy a run's steps in, each with its words as cut (the search makes their
    ``tsvector``: :mod:`.pg_match`); the cut words per column (tool, agent, tags, body),
    from which the run's block summaries and summary are made (:mod:`.pg_blocks`)."""
    cuts: list[list[str]] = [[], [], [], []]
    with conn.cursor().copy(f"COPY steps ({STEP_COLUMNS}) FROM STDIN") as copy:
        for pos, r in enumerate(rows):
            cut = (words(r.tool), words(r.agent), _clean(r.tags), words(r.body))
            for column, text in zip(cuts, cut, strict=True):
                column.append(text)
            copy.write_row(
                (run, pos, clamp(r.seq), _clean(r.body), _clean(r.tool), _clean(r.agent),
                 cut[2], _clean(r.sample), cut[0], cut[1], cut[3])
            )  # fmt: skip
    return cuts


def write_summary(conn: Any, run: int, seen: tuple[set[str], ...]) -> None:
    """The run's summary from its distinct words per column (tool, agent, tags, body).
    Words the parser takes as they are (:func:`_as_parsed`) are sent as the summary's
    lexemes; any other word makes the server's parser cut them all, as the steps' were."""
    size = sum(len(w.encode()) + 8 for column in seen for w in column)
    if size > SUMMARY_BYTES:
        conn.execute(
            "INSERT INTO run_words (run, doc) VALUES (%s, %s::tsvector) "
            "ON CONFLICT (run) DO UPDATE SET doc = EXCLUDED.doc",
            (run, EVERY_WORD),
        )
        return
    texts = [" ".join(column) for column in seen]
    if all(map(_as_parsed, texts)):
        weighted = zip("ABCD", seen, strict=True)
        lexemes = [f"{w}:{word}" for w, column in weighted for word in column if word]
        conn.execute(
            "INSERT INTO run_words (run, doc) VALUES (%s, array_to_tsvector(%s::text[])) "
            "ON CONFLICT (run) DO UPDATE SET doc = EXCLUDED.doc",
            (run, lexemes),
        )
        return
    conn.execute(_SUMMARY, (run, *texts))


_PLAIN = re.compile(r"[a-z0-9 ]*")
_CUT_BY_PARSER = re.compile(r"(?:^| )\d+e\d")  # 5e5e5 is 5e5 and e5 (a number first)
LONGEST_WORD = 2046  # the parser skips longer words (PostgreSQL's MAXSTRLEN)


def _as_parsed(text: str) -> bool:
    """Whether PostgreSQL's parser (``simple``) makes each space-separated word of
    ``text`` one lexeme, itself: lower-case ASCII letters and digits are one token each
    (checked against ``ts_debug``), except a number with an exponent followed by more
    (``5e5e5``, ``1e5x``) and words too long to index. The parser is not asked, saving
    the server a pass over the run's words."""
    return (
        _PLAIN.fullmatch(text) is not None
        and _CUT_BY_PARSER.search(text) is None
        and (len(text) <= LONGEST_WORD or max(map(len, text.split(" "))) <= LONGEST_WORD)
    )


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _clean(text: str) -> str:
    """PostgreSQL's text holds no NUL and UTF-8 no lone surrogate (a tool result or a
    broken file may hold either): each becomes U+FFFD. ASCII text without a NUL is
    returned as it is, without a pass of the expression (most text; two tests in C)."""
    if text.isascii() and "\x00" not in text:
        return text
    return _UNSTORABLE.sub("\ufffd", text)
