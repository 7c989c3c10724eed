"""A run's steps made a column at a time (loom_core/library/pg_rows.py) are the rows the
calls per step made: the same words, the same cleaned text, the same values on the server
after ``COPY``, and the same block summaries (loom_core/library/pg_blocks.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom_core.library import pg_steps
from loom_core.library.extract import StepText
from loom_core.library.pg_blocks import BLOCK, block_doc, blocks_text, send_blocks
from loom_core.library.pg_query import words
from loom_core.library.pg_rows import clamp, clean, clean_column, escape_column
from loom_core.library.pg_steps import (
    LONGEST_WORD,
    STEP_COLUMNS,
    _as_parsed,
    send_steps,
    steps_text,
)
from tests.core.team.test_words_cut import bare_runs


@given(st.lists(st.text(), max_size=6))
@settings(max_examples=50)
def test_any_column_is_cleaned_and_escaped_as_each_text_is(texts: list[str]) -> None:
    assert clean_column(texts) == [clean(t) for t in texts]
    cleaned = clean_column(texts)
    escaped = [t.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n") for t in cleaned]
    assert escape_column(cleaned) == [t.replace("\r", "\\r") for t in escaped]


TRICKY = [
    StepText(None, "line\none\ttab \\N back\\slash\r\n\\.\n", "bash", "main", "kmodel"),
    StepText(2**70, "nul\x00 and \ud800 lone", "read_file", "sub agent", "ktool ferror"),
    StepText(3, "été Ünïcode 東京 config.yaml", "Tool.Name", "", "", "7:2"),
    StepText(4, "", "", "", ""),
    StepText(5, "bell\a back\b feed\f vtab\v esc\x1b del\x7f", "a\tb", "c\nd", "x\\y", "1:1"),
]


def _by_rows(conn: Any, run: int, rows: list[StepText]) -> None:
    """The steps as the calls per step wrote them (psycopg formatting each row)."""
    with conn.cursor().copy(f"COPY steps ({STEP_COLUMNS}) FROM STDIN") as copy:
        for pos, r in enumerate(rows):
            copy.write_row(
                (run, pos, clamp(r.seq), clean(r.body), clean(r.tool), clean(r.agent),
                 clean(r.tags), clean(r.sample), words(r.tool), words(r.agent), words(r.body))
            )  # fmt: skip


def test_the_steps_copied_as_one_text_hold_what_rows_copied_one_by_one_hold(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom_core.library.pg_conn import PgConnections

    monkeypatch.setattr(pg_steps, "CHUNK", 3)  # two chunks: the positions go on

    db = PgConnections(pg_url)
    try:
        with db.connection() as conn:
            ids = bare_runs(conn, "/a", "/b")
            chunks, cuts = steps_text(TRICKY)
            send_steps(conn, ids[0], chunks)
            _by_rows(conn, ids[1], TRICKY)
            stored = [
                conn.execute(
                    f"SELECT {STEP_COLUMNS.replace('run, ', '')} FROM steps WHERE run = %s "
                    "ORDER BY pos",
                    (run,),
                ).fetchall()
                for run in ids
            ]
    finally:
        db.close()
    assert stored[0] == stored[1] and len(stored[0]) == len(TRICKY)
    assert stored[0][0][1] is None and stored[0][1][1] == 2**63 - 1  # NULL and clamped
    assert cuts[3] == [words(r.body) for r in TRICKY]


def test_a_block_the_parser_would_cut_is_every_words_and_the_others_keep_theirs(
    pg_url: str,
) -> None:
    from loom_core.library.pg_conn import PgConnections

    plain = ["config value"] * BLOCK
    cuts = [["bash"] * (2 * BLOCK), ["main"] * (2 * BLOCK), ["ktool"] * (2 * BLOCK)]
    cuts.append(plain + ["été 5e5e5"] + plain[1:])
    db = PgConnections(pg_url)
    try:
        with db.connection() as conn:
            run = bare_runs(conn, "/a")[0]
            text, every = blocks_text(cuts)
            send_blocks(conn, run, text)
            docs = conn.execute(
                "SELECT doc::text FROM step_words WHERE run = %s ORDER BY block", (run,)
            ).fetchall()
    finally:
        db.close()
    first = [set(" ".join(column[:BLOCK]).split(" ")) for column in cuts]
    assert docs[0][0] == "'A:bash' 'B:main' 'C:ktool' 'D:config' 'D:value'"
    assert block_doc(first) == block_doc(first, True)
    assert docs[1][0] == "'all'"
    assert every[3] == {"config", "value", "été", "5e5e5"}


def _as_parsed_by_definition(text: str) -> bool:
    """Only a-z, 0-9 and spaces; no word a number with an exponent and more; none longer
    than the parser takes (the expressions ``_as_parsed`` stands for)."""
    return (
        re.fullmatch(r"[a-z0-9 ]*", text) is not None
        and re.search(r"(?:^| )\d+e\d", text) is None
        and max(map(len, text.split(" "))) <= LONGEST_WORD
    )


WORDISH = st.text(alphabet="ae0159 xZé\t_", max_size=40)


@given(st.lists(WORDISH, max_size=6), st.sampled_from([0, 1, 2045, 2046, 2047, 3000]))
@settings(max_examples=200)
def test_whether_the_parser_takes_words_as_they_are_is_the_definitions_answer(
    parts: list[str], long: int
) -> None:
    text = " ".join(parts)
    assert _as_parsed(text) == _as_parsed_by_definition(text)
    longer = f"{text} {'a' * long} {text}"
    assert _as_parsed(longer) == _as_parsed_by_definition(longer)
