"""The search language on PostgreSQL: a parsed query as a ``tsquery`` and SQL conditions.

Why words are cut here and not by PostgreSQL's parser: the local library's FTS5 index
splits text into runs of letters and digits (``config.yaml`` is ``config`` and ``yaml``,
``rm -rf`` is ``rm rf``), while PostgreSQL's default parser keeps file names, hosts and
URLs whole. A search must find the same steps in both libraries, so both the indexed text
and the query are cut into the same words first (:func:`words`), lower-cased and without
diacritics, and PostgreSQL's ``simple`` configuration then takes each word as it is.

One ``tsvector`` per step holds its columns as weights -- tool ``A``, agent ``B``, tags
``C``, body ``D`` -- so a column-scoped term is a weight-restricted lexeme (``'bash':A``)
and one GIN index answers every term. Tool globs and agent substrings the index cannot
narrow are matched with ``ILIKE`` on the trigram-indexed columns; run keys are conditions
on the runs table.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from loom_core.library.query import Alternative, Atom, Clause, SearchQuery

WEIGHTS = {"tool": "A", "agent": "B", "tags": "C", "body": "D"}
_WORDS = re.compile(r"[^\W_]+")
# ASCII letters and digits are what ``_WORDS`` keeps of ASCII text; every other byte parts words
_ASCII_KEPT = bytes(c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256))


def words(text: str) -> str:
    """``text`` as the words the index holds: lower case, no diacritics, one space apart.
    ASCII text has no diacritics to take off (its NFKD form is itself): most of what is
    indexed, and the per-character pass was most of the client's time per step. Its
    words are cut as bytes (a table maps every byte but a-z and 0-9 to a space), a third
    of the regular expression's time: the same words, one pass in C."""
    if text.isascii():
        return b" ".join(text.encode().lower().translate(_ASCII_KEPT).split()).decode()
    folded = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    return " ".join(_WORDS.findall(plain))


def _lexeme(word: str) -> str:
    """A tsquery lexeme literal (quoted; the words hold no quote, but be exact)."""
    return "'" + word.replace("'", "''").replace("\\", "\\\\") + "'"


def _atom(atom: Atom) -> str | None:
    """One atom as tsquery text: a word, a phrase (``<->``), a prefix (``:*``)."""
    cut = words(atom.text).split()
    if not cut:
        return None
    weights = "".join(sorted(WEIGHTS[c] for c in atom.columns))
    terms = [f"{_lexeme(w)}:{weights}" for w in cut]
    if atom.prefix:
        terms[-1] = f"{_lexeme(cut[-1])}:*{weights}"
    return terms[0] if len(terms) == 1 else "(" + " <-> ".join(terms) + ")"


def _alternative(alternative: Alternative) -> str | None:
    terms = [t for t in (_atom(a) for a in alternative) if t is not None]
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else "(" + " & ".join(terms) + ")"


def _clause(clause: Clause) -> str | None:
    terms = [t for t in (_alternative(a) for a in clause) if t is not None]
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else "(" + " | ".join(terms) + ")"


def tsquery(q: SearchQuery) -> str:
    """The step terms as ``to_tsquery('simple', …)`` text ("": no step term)."""
    parts = [t for t in (_clause(c) for c in q.clauses) if t is not None]
    return " & ".join(parts)


def like_pattern(glob: str) -> str:
    """A shell glob as an ``ILIKE`` pattern (``*`` any run, ``?`` one character)."""
    out = []
    for ch in glob:
        if ch == "*":
            out.append("%")
        elif ch == "?":
            out.append("_")
        elif ch in "%_\\":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def name_conditions(q: SearchQuery) -> tuple[list[str], list[Any]]:
    """Exact tool-glob and agent-substring tests on ``s`` (the steps table), trigram
    indexed: what the index's words cannot tell (``tool:*sh``)."""
    where: list[str] = []
    args: list[Any] = []
    if q.tools:
        # a step's tool column holds its names one space apart: a glob matches one name
        tests = " OR ".join("(' ' || s.tool || ' ') ILIKE %s" for _ in q.tools)
        where.append(f"({tests})")
        args += [f"% {like_pattern(t)} %" for t in q.tools]
    if q.agents:
        where.append("(" + " OR ".join("s.agent ILIKE %s" for _ in q.agents) + ")")
        args += [f"%{like_pattern(a)}%" for a in q.agents]
    return where, args


def run_conditions(q: SearchQuery) -> tuple[list[str], list[Any]]:
    """Run keys as conditions on ``r`` (the runs table)."""
    where: list[str] = ["r.state = 'ok'"]
    args: list[Any] = []
    for column, values in (("r.models", q.models), ("r.author", q.authors), ("r.host", q.hosts)):
        if values:
            where.append("(" + " OR ".join(f"{column} ILIKE %s" for _ in values) + ")")
            args += [f"%{like_pattern(v)}%" for v in values]
    if q.sources:
        where.append("r.source = ANY(%s)")
        args.append(list(q.sources))
    if q.after is not None:
        where.append("r.time >= %s")
        args.append(q.after)
    if q.before is not None:
        where.append("r.time < %s")
        args.append(q.before)
    return where, args


SNIPPET_WORDS = 16


def query_words(q: SearchQuery) -> set[str]:
    """The words a search looks for in a step's text (what a snippet marks)."""
    return {
        w for clause in q.clauses for alt in clause for atom in alt
        if "body" in atom.columns for w in words(atom.text).split()
    }  # fmt: skip


def snippet(body: str, wanted: set[str]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Up to :data:`SNIPPET_WORDS` words of ``body`` around its first wanted word, with the
    spans of the wanted words in it (what FTS5's ``snippet`` gives the local library)."""
    found = list(_WORDS.finditer(body))
    keys = [words(m.group()) for m in found]
    hit = next((i for i, k in enumerate(keys) if _wanted(k, wanted)), 0)
    first = max(0, hit - SNIPPET_WORDS // 2)
    chosen = found[first : first + SNIPPET_WORDS]
    if not chosen:
        return body[:200], ()
    start, end = chosen[0].start(), chosen[-1].end()
    text = ("…" if start else "") + body[start:end] + ("…" if end < len(body) else "")
    shift = (1 if start else 0) - start
    marks = tuple(
        (m.start() + shift, m.end() + shift)
        for m, k in zip(chosen, keys[first : first + SNIPPET_WORDS], strict=False)
        if _wanted(k, wanted)
    )
    return text, marks


def _wanted(word: str, wanted: set[str]) -> bool:
    return word in wanted or any(w and word.startswith(w) and len(w) > 2 for w in wanted)
