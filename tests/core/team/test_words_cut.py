"""The words the team library indexes: ASCII text cut as bytes gives what the regular
expression gives (the index and the queries both use :func:`~loom_core.library.pg_query.words`,
and the local library's FTS5 cuts the same words), and text PostgreSQL cannot hold is
cleaned while the rest is stored as it is."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loom_core.library.pg_query import words
from loom_core.library.pg_rows import clean
from loom_core.library.pg_steps import _SUMMARY, _as_parsed, summary_statement

_WORD = re.compile(r"[^\W_]+")


def _by_definition(text: str) -> str:
    """Lower case, diacritics off (NFKD, combining marks dropped), letters and digits."""
    folded = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    return " ".join(_WORD.findall(plain))


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_text_is_cut_into_the_words_of_the_definition(text: str) -> None:
    assert words(text) == _by_definition(text)


@given(st.text())
def test_any_text_is_cut_into_the_words_of_the_definition(text: str) -> None:
    assert words(text) == _by_definition(text)


def test_every_ascii_character_between_words() -> None:
    text = "".join(f"a{chr(c)}" for c in range(128)) + "Config.YAML rm -rf x_y"
    assert words(text) == _by_definition(text)
    assert words("Config.YAML rm -rf x_y 1e5 ÉTÉ") == "config yaml rm rf x y 1e5 ete"


def test_text_postgresql_cannot_hold_is_cleaned_and_the_rest_kept() -> None:
    plain = "ls -la /tmp\n\ttotal 0"
    assert clean(plain) is plain
    assert clean("a\x00b") == "a\ufffdb"
    assert clean("é\ud800") == "é\ufffd"


def bare_runs(conn: Any, *paths: str) -> list[int]:
    """New runs' rows with nothing else (for writing their parts directly)."""
    sql = "INSERT INTO runs (host, path) VALUES ('h', %s) RETURNING id"
    return [int(conn.execute(sql, (path,)).fetchone()[0]) for path in paths]


SAFE = ({"bash"}, {"main"}, {"ktool", "ferror"}, {"config", "0x1f", "e5e", "123abc", "007", ""})
CUT_BY_THE_PARSER = [
    ({"bash"}, set(), {"ktool"}, {"5e5e5", "config"}),  # a number with an exponent, then more
    ({"bash"}, set(), {"ktool_call"}, {"config"}),  # tags are not cut by words()
    ({"bash"}, set(), set(), {"été", "config"}),  # not ASCII: the server's parser decides
    ({"bash"}, set(), set(), {"x" * 3000, "config"}),  # too long: the parser skips it
]


@pytest.mark.parametrize("seen", [SAFE, *CUT_BY_THE_PARSER])
def test_a_runs_summary_holds_the_lexemes_the_servers_parser_makes(
    pg_url: str, seen: tuple[set[str], ...]
) -> None:
    from loom_core.library.pg_conn import PgConnections

    db = PgConnections(pg_url)
    try:
        with db.connection() as conn:
            ids = bare_runs(conn, "/a", "/b")
            sql, args = summary_statement(seen)
            conn.execute(sql, (ids[0], *args))
            conn.execute(_SUMMARY, (ids[1], *(" ".join(column) for column in seen)))
            docs = conn.execute(
                "SELECT doc::text FROM run_words WHERE run = ANY(%s) ORDER BY run", (ids,)
            ).fetchall()
    finally:
        db.close()
    assert docs[0] == docs[1] and "'A:bash'" in docs[0][0]
    sent = all(_as_parsed(" ".join(column)) for column in seen)
    assert sent == (seen is SAFE)  # sent as lexemes, or cut by the server's parser
