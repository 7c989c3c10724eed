"""What a reader of the library hands out: a run's row and a search's hit, as plain values.

Why a module of their own: the Runs page, the CLI and any other library (issue 25's shared
one) hand out the same rows; what a row says of itself -- its cost in the app's words, a
hit's place in its run -- is decided here once, not by each face.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from loom_core.formats.inspect_eval import parse_sample_spec
from loom_core.views.pricing import cost_words, is_offline

OPEN_MARK, CLOSE_MARK = "\x02", "\x03"  # what FTS5 puts around a match; see Hit.marks
RUN_COLUMNS = (
    "id, path, format, title, models, steps, tokens_in, tokens_out, cost, errors, outcome, "
    "why, started, ended, time, parent, fork_seq, healed_by, state, cause, source, size, "
    "host, author, url"
)


@dataclass(frozen=True)
class RunRow:
    """One run as the Runs page lists it (see the ``runs`` table in :mod:`.db`)."""

    id: int
    path: str
    format: str
    title: str
    models: tuple[str, ...]
    steps: int
    tokens_in: int
    tokens_out: int
    cost: float | None
    errors: int
    outcome: str  # loom_core.live.outcome.OUTCOMES ("" before its first index)
    why: str  # what the outcome rests on, when that is not obvious
    started: float | None
    ended: float | None
    time: float | None
    parent: str | None
    fork_seq: int | None
    healed_by: str | None
    state: str  # ok | missing | unreadable (forgotten runs are never listed)
    cause: str
    source: str  # found | opened | recorded | forked | healed
    size: int | None
    host: str = ""  # the machine its file is on
    author: str = ""  # who indexed or published it
    url: str | None = None  # its published copy in the library's run store

    @classmethod
    def of(cls, row: tuple[Any, ...]) -> RunRow:
        values = list(row)
        values[4] = tuple(m for m in (values[4] or "").split("\n") if m)
        return cls(*values)

    def as_json(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}

    def cost_text(self) -> str:
        """The run's cost in the words the app's status bar uses: ``$0.1302``, ``$0 offline``
        (answered by an offline model: the demo's, the scripted provider), ``?`` (a model
        with no price); "" for a run that is missing or unreadable (nothing is known)."""
        if self.state != "ok":
            return ""
        if self.cost is None or math.isnan(self.cost):
            return "?"
        return cost_words(self.cost, any(is_offline(m) for m in self.models))


@dataclass(frozen=True)
class Hit:
    """One step that matched: open ``path`` at step ``seq`` (None: a user prompt, the run's
    start), in its sample ``sample`` (``ID:EPOCH`` of an Inspect log, as ``--sample`` takes
    it; "": a file of one run). ``snippet`` is plain text; ``marks`` are the matched spans."""

    path: str
    seq: int | None
    snippet: str
    marks: tuple[tuple[int, int], ...]
    tool: str
    agent: str
    run_id: int
    sample: str = ""
    time: float | None = None  # the run's (when it started, else its file's last change)
    host: str = ""  # the machine the run's file is on
    url: str | None = None  # its published copy, for a machine that does not have the file

    def sample_label(self) -> str:
        """``sample 7 · epoch 2`` ("" when the file holds one run): how a hit names it."""
        if not self.sample:
            return ""
        sample_id, epoch = parse_sample_spec(self.sample)
        return f"sample {sample_id}" + (f" · epoch {epoch}" if epoch is not None else "")

    def marked(self, open_: str = "[", close: str = "]") -> str:
        """The snippet with each match between ``open_`` and ``close``."""
        out, last = [], 0
        for start, end in self.marks:
            out += [self.snippet[last:start], open_, self.snippet[start:end], close]
            last = end
        return "".join(out) + self.snippet[last:]

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "seq": self.seq,
            "snippet": self.snippet,
            "marks": [list(m) for m in self.marks],
            "tool": self.tool,
            "agent": self.agent,
            "sample": self.sample or None,
            "time": self.time,
            "host": self.host,
            "url": self.url,
        }


def split_marks(text: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """FTS5's snippet with its mark characters, as plain text and the marked spans."""
    plain: list[str] = []
    marks: list[tuple[int, int]] = []
    size, start = 0, None
    for piece in re.split(f"([{OPEN_MARK}{CLOSE_MARK}])", text):
        if piece == OPEN_MARK:
            start = size
        elif piece == CLOSE_MARK:
            if start is not None and size > start:
                marks.append((start, size))
            start = None
        else:
            plain.append(piece)
            size += len(piece)
    return "".join(plain), tuple(marks)
