"""Searches that start from the runs' summaries of words (``run_words``, :mod:`.pg_steps`).

Why: a common word is in most of ten million steps. Asking the steps' GIN index for it
hands over every matching step (seconds) before a search can keep its newest hundred,
and a Runs page filtered by it joined every one of them to the runs. Asking the runs'
summaries instead gives the few thousand runs that may match, in milliseconds; each is
then probed through its own steps (the primary key's range, about a microsecond a step),
newest first, until the page or the hits are complete. A rare word has few candidate
runs, so it probes few. A summary holds a word wherever in the run it is, so a run it
names may still have no single step that matches (two words in two steps, a phrase):
the probe of the steps decides, with the same conditions as before, and every answer is
what the steps' index gave. A run with no summary (NULL) or one too big to hold
(:data:`~.pg_steps.EVERY_WORD`) is always a candidate.
"""

from __future__ import annotations

import re
from typing import Any

from loom_core.library.pg_steps import EVERY_WORD

_LEXEME = re.compile(r"'((?:[^'\\]|''|\\.)*)'(?::([*A-D]+))?")
_OPERATOR = re.compile(r"\s+|<->|<\d+>|[&|()]")
ALL_WEIGHTS = "ABCD"
PROBE_RUNS = 127  # runs probed one batch at a time (1, 2, 4 … 64); the rest by the index
PAGE_PROBES: int | None = None  # candidates a page probes before the index (None: its size)
# the runs whose summary may match (%s: the summary query), the unknown ones too
CANDIDATES = (
    f"(SELECT run FROM run_words WHERE doc @@ (%s::tsquery || '{EVERY_WORD}'::tsquery) "
    "UNION ALL SELECT run FROM run_words WHERE doc IS NULL)"
)


def summary_query(canonical: str) -> str | None:
    """A step query as PostgreSQL prints it (``'read':A & 'config':*AD``) as a query on
    the summaries: each lexeme as its weight-prefixed forms (``'A:read'``), a phrase as
    all its words. None when it cannot be one (a negation, or no lexeme)."""
    out: list[str] = []
    pos, lexemes = 0, 0
    while pos < len(canonical):
        lexeme = _LEXEME.match(canonical, pos)
        if lexeme:
            raw, flags = lexeme.group(1), lexeme.group(2) or ""
            star = ":*" if "*" in flags else ""
            weights = [w for w in flags if w != "*"] or list(ALL_WEIGHTS)
            forms = [f"'{w}:{raw}'{star}" for w in weights]
            out.append(forms[0] if len(forms) == 1 else "(" + " | ".join(forms) + ")")
            lexemes += 1
            pos = lexeme.end()
            continue
        operator = _OPERATOR.match(canonical, pos)
        if operator is None:
            return None  # "!" or anything this does not know: no summary search
        text = operator.group()
        out.append("&" if text.startswith("<") else text)
        pos = operator.end()
    return "".join(out) if lexemes else None


def canonical(conn: Any, text: str) -> str:
    """The step query as PostgreSQL's parser makes it (the lexemes the steps hold)."""
    row = conn.execute("SELECT to_tsquery('simple', %s)::text", (text,)).fetchone()
    return str(row[0]) if row else ""


def candidates(conn: Any, summary: str, runs: list[str], args: list[Any]) -> list[int]:
    """The runs passing ``runs`` whose summary may match, newest (highest id) first."""
    sql = (
        f"SELECT w.run FROM {CANDIDATES} w JOIN runs r ON r.id = w.run "
        f"WHERE {' AND '.join(runs)} ORDER BY w.run DESC"
    )
    return [int(r[0]) for r in conn.execute(sql, (summary, *args)).fetchall()]


def probe_hits(
    conn: Any, runs: list[int], names: list[str], args: list[Any], text: str, limit: int
) -> list[tuple[Any, ...]]:
    """The newest ``limit`` matching steps of ``runs`` (newest first): batches of runs
    probed through their steps (``ts_match_vq`` is not the indexed ``@@``, so the steps'
    GIN index is not asked), past :data:`PROBE_RUNS` runs the index for the rest."""
    found: list[tuple[Any, ...]] = []
    done, size = 0, 1
    while done < len(runs) and len(found) < limit:
        if done >= PROBE_RUNS:
            batch, match = runs[done:], "s.doc @@ %s::tsquery"
        else:
            batch, match = runs[done : done + size], "ts_match_vq(s.doc, %s::tsquery)"
        sql = (
            "SELECT s.run, s.pos, s.seq, s.body, s.tool, s.agent, r.path, s.sample, r.time, "
            "r.host, r.url FROM steps s JOIN runs r ON r.id = s.run "
            f"WHERE s.run = ANY(%s) AND {' AND '.join([match, *names])} "
            "ORDER BY s.run DESC, s.pos DESC LIMIT %s"
        )
        found += conn.execute(sql, (batch, text, *args, limit - len(found))).fetchall()
        done, size = done + len(batch), size * 2
    return found


def page_runs(
    conn: Any, ordered: list[int], names: list[str], args: list[Any], text: str, want: int
) -> list[int]:
    """The first ``want`` runs of ``ordered`` (candidates in the page's order) that have
    a matching step. The first ``want`` candidates are probed through their own steps
    (each stops at its first match); if that does not fill the page (a word in few of
    the runs its summaries name, or runs without a summary), the steps' index answers
    for the rest. Why not one ``EXISTS`` join: the planner cannot know that most
    candidates match, and joined every one of them before sorting."""
    kept: list[int] = []
    probed = want if PAGE_PROBES is None else PAGE_PROBES
    for batch, match in (
        (ordered[:probed], "ts_match_vq(s.doc, %s::tsquery)"),
        (ordered[probed:], "s.doc @@ %s::tsquery"),
    ):
        if not batch or len(kept) >= want:
            break
        steps = " AND ".join([match, *names])
        sql = (
            "SELECT c.run FROM unnest(%s::bigint[]) WITH ORDINALITY c (run, n) WHERE EXISTS "
            f"(SELECT 1 FROM steps s WHERE s.run = c.run AND {steps}) ORDER BY c.n LIMIT %s"
        )
        rows = conn.execute(sql, (batch, text, *args, want - len(kept))).fetchall()
        kept += [int(r[0]) for r in rows]
    return kept


def tuned(conn: Any) -> None:
    """Plan this transaction's queries for summaries: the planner sees a small
    ``run_words`` table (its summaries live out of line) and would scan it whole,
    reading every summary; JIT compiling costs more than these queries take."""
    conn.execute("SET LOCAL enable_seqscan = off; SET LOCAL jit = off")
