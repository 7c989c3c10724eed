"""Searches that start from the runs' summaries of words (``run_words``, :mod:`.pg_steps`).

Why: a common word is in most of ten million steps. Asking the steps' GIN index for it
hands over every matching step (seconds) before a search can keep its newest hundred,
and a Runs page filtered by it joined every one of them to the runs. Asking the runs'
summaries instead gives the few thousand runs that may match, in milliseconds; each is
then probed through its own steps (the primary key's range), newest first, until the page or the hits are complete. A rare word has few candidate
runs, so it probes few. A summary holds a word wherever in the run it is, so a run it
names may still have no single step that matches (two words in two steps, a phrase):
the probe of the steps decides (:mod:`.pg_match`). A run with no summary (NULL) or one
too big to hold (:data:`~.pg_steps.EVERY_WORD`) is always a candidate; a query whose
every part is negated (``-config``) makes every run one.
"""

from __future__ import annotations

from typing import Any

from loom_core.library.pg_blocks import SPANS_AT_ONCE, run_matches, span_table, spans
from loom_core.library.pg_match import ALL_WEIGHTS, positive, step_match
from loom_core.library.pg_steps import EVERY_WORD

PROBE_RUNS = 127  # runs probed one batch at a time (1, 2, 4 … 64); the rest at once
PAGE_PROBES: int | None = None  # candidates a page probes first (None: its size)
# the runs whose summary may match (%s: the summary query), the unknown ones too
CANDIDATES = (
    f"(SELECT run FROM run_words WHERE doc @@ (%s::tsquery || '{EVERY_WORD}'::tsquery) "
    "UNION ALL SELECT run FROM run_words WHERE doc IS NULL)"
)


def summary_query(canonical: str) -> str | None:
    """A step query as PostgreSQL prints it (``'read':A & 'config':*AD``) as a query on
    the summaries: each lexeme as its weight-prefixed forms (``'A:read'``), a phrase as
    all its words, a part with a negation left out (its word may be elsewhere in a run
    that matches). None when nothing is left: every run is a candidate."""
    out: list[str] = []
    for part in positive(canonical):
        text: list[str] = []
        for kind, raw, flags in part:
            if kind == "op":
                text.append("&" if raw.startswith("<") else raw)
                continue
            star = ":*" if "*" in flags else ""
            weights = [w for w in flags if w != "*"] or list(ALL_WEIGHTS)
            forms = [f"'{w}:{raw}'{star}" for w in weights]
            text.append(forms[0] if len(forms) == 1 else "(" + " | ".join(forms) + ")")
        out.append(" ".join(text).replace("( ", "(").replace(" )", ")"))
    return " & ".join(out) if out else None


def canonical(conn: Any, text: str) -> str:
    """The step query as PostgreSQL's parser makes it (the lexemes the steps hold)."""
    row = conn.execute("SELECT to_tsquery('simple', %s)::text", (text,)).fetchone()
    return str(row[0]) if row else ""


def candidates(conn: Any, summary: str | None, runs: list[str], args: list[Any]) -> list[int]:
    """The runs passing ``runs`` whose summary may match (None: every one), newest
    (highest id) first."""
    if summary is None:
        sql = f"SELECT r.id FROM runs r WHERE {' AND '.join(runs)} ORDER BY r.id DESC"
        return [int(r[0]) for r in conn.execute(sql, args).fetchall()]
    sql = (
        f"SELECT w.run FROM {CANDIDATES} w JOIN runs r ON r.id = w.run "
        f"WHERE {' AND '.join(runs)} ORDER BY w.run DESC"
    )
    return [int(r[0]) for r in conn.execute(sql, (summary, *args)).fetchall()]


def probe_hits(
    conn: Any,
    runs: list[int],
    names: list[str],
    args: list[Any],
    step: tuple[str, str | None],
    limit: int,
) -> list[tuple[Any, ...]]:
    """The newest ``limit`` matching steps of ``runs`` (newest first). ``step``: the
    query as PostgreSQL prints it and its summary query. Batches of runs (1, 2, 4 …
    64, then the rest at once) give the blocks that may match (:mod:`.pg_blocks`), whose
    steps are matched when asked (:mod:`.pg_match`), newest first, until the hits are
    complete."""
    text, summary = step
    match, match_args = step_match(text)
    sql = (
        "SELECT s.run, s.pos, s.seq, s.body, s.tool, s.agent, r.path, s.sample, r.time, "
        "r.host, r.url FROM {} JOIN steps s ON s.run = c.run AND s.pos >= c.lo "
        f"AND s.pos < c.hi JOIN runs r ON r.id = s.run WHERE {' AND '.join([match, *names])} "
        "ORDER BY s.run DESC, s.pos DESC LIMIT %s"
    )
    found: list[tuple[Any, ...]] = []
    done, size = 0, 1
    while done < len(runs) and len(found) < limit:
        batch = runs[done : done + size] if done < PROBE_RUNS else runs[done:]
        chosen = spans(conn, batch, summary)
        for at in range(0, len(chosen), SPANS_AT_ONCE):
            if len(found) >= limit:
                break
            table, table_args = span_table(chosen[at : at + SPANS_AT_ONCE])
            rows = conn.execute(
                sql.format(table), (*table_args, *match_args, *args, limit - len(found))
            )
            found += rows.fetchall()
        done, size = done + len(batch), size * 2
    return found


def page_runs(
    conn: Any,
    ordered: list[int],
    names: list[str],
    args: list[Any],
    step: tuple[str, str | None],
    want: int,
) -> list[int]:
    """The first ``want`` runs of ``ordered`` (candidates in the page's order) that have
    a matching step: the first ``want`` candidates probed one by one (each stops at its
    first matching step, in the blocks that may match), then twice as many at a time
    until the page is full (their blocks that may match found by the blocks' index). Why not one ``EXISTS`` over every candidate: the planner cannot know that most
    candidates match, and would ask every one of them before sorting."""
    text, summary = step
    match, match_args = step_match(text)
    steps = " AND ".join([match, *names])
    first, first_args = run_matches(summary, steps, [*match_args, *args])
    by_run = (
        "SELECT c.run FROM unnest(%s::bigint[]) WITH ORDINALITY c (run, n) "
        f"CROSS JOIN LATERAL ({first}) m ORDER BY c.n LIMIT %s"
    )
    by_span = (
        "SELECT DISTINCT c.run FROM {} WHERE EXISTS (SELECT 1 FROM steps s "
        f"WHERE s.run = c.run AND s.pos >= c.lo AND s.pos < c.hi AND {steps})"
    )
    kept: list[int] = []
    size = max(1, want if PAGE_PROBES is None else PAGE_PROBES)
    done = 0
    while done < len(ordered) and len(kept) < want:
        batch = ordered[done : done + size]
        if not done:  # each run stops at its first match (most runs have one)
            rows = conn.execute(by_run, (batch, *first_args, want)).fetchall()
            kept += [int(r[0]) for r in rows]
        else:  # the blocks that may match, by their index (few runs had a match)
            table, table_args = span_table(spans(conn, batch, summary))
            query = by_span.format(table)
            matched = {int(r[0]) for r in conn.execute(query, (*table_args, *match_args, *args))}
            kept += [run for run in batch if run in matched][: want - len(kept)]
        done, size = done + len(batch), size * 2
    return kept


def tuned(conn: Any) -> None:
    """Plan this transaction's queries for summaries: the planner sees a small
    ``run_words`` table (its summaries live out of line) and would scan it whole,
    reading every summary; JIT compiling costs more than these queries take."""
    conn.execute("SET LOCAL enable_seqscan = off; SET LOCAL jit = off")
