"""A run's rows for the team library, made before its write begins and without its id.

Why before: a run's write is one transaction on a writer thread (:mod:`.pg_later`). When
the rows were made inside it, in Python, the server sat idle in the transaction while the
thread made them, and the thread waited for the interpreter lock the indexer's thread
held; the two cores were each busy about three quarters of the time. Made by the
indexer's thread when the run is handed in, the write is only sending: the server works
on one run while the indexer reads (or makes) the next.

Why without the id: a run's id is known for sure only inside the transaction (a path
indexed before keeps its id; another process may index the same path meanwhile), so the
lines are made without it and get it as they are sent (:func:`~.pg_rows.with_run`, one
pass in C).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from loom_core.library.extract import StepText
from loom_core.library.pg_blocks import blocks_text, send_blocks
from loom_core.library.pg_steps import send_steps, steps_text, summary_statement


@dataclass(frozen=True)
class RunText:
    """A run's steps, block summaries and summary, as the server is sent them."""

    steps: list[str]  # COPY text, a chunk of steps a piece
    blocks: str  # COPY text
    summary: tuple[str, tuple[Any, ...]]  # the statement and its arguments after the id

    @classmethod
    def of(cls, rows: Sequence[StepText]) -> RunText:
        chunks, cuts = steps_text(rows)
        blocks, every = blocks_text(cuts)
        return cls(chunks, blocks, summary_statement(every))

    def send(self, conn: Any, run: int) -> None:
        """Copy the rows in as run ``run``'s (in the caller's transaction)."""
        send_steps(conn, run, self.steps)
        send_blocks(conn, run, self.blocks)
        sql, args = self.summary
        conn.execute(sql, (run, *args))
