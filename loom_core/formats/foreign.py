"""Runs written by other tools (OpenTelemetry, Claude Code, Inspect …): one reader interface.

Why this shape: every view, ``convert``, fork and diff already work on a loom trace, so a
foreign reader's only job is to say whether bytes are its format (:attr:`ForeignReader.sniff`,
from the first bytes, cheaply: it runs before every load) and to turn them into a
:class:`~loom_core.formats.document.Document` whose effects are loom effects
(:class:`RunBuilder`). What loom has no member for (the source records, the exact input
messages a producer recorded) travels in ``Document.extra``. Adding the next format is one
module with a ``READER`` and one line in :data:`READER_MODULES`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import msgspec

from loom_core.formats.document import LOOM_FORMATS, Document
from loom_core.formats.entries import effect_entry, finished_run
from loom_core.formats.reader import SNIFF_BYTES as SNIFF_BYTES  # re-exported
from loom_core.formats.reader import Reader

# One module per format; each defines ``READER: ForeignReader``. Imported on first use only.
READER_MODULES: tuple[str, ...] = (
    "loom_core.formats.inspect_eval",  # first: a zip's magic is the cheapest, surest test
    "loom_core.formats.otlp_reader",
    "loom_core.formats.claude_code",
)

# A foreign format's reader is a reader like loom's own (:mod:`.reader`): the name stays
# for the modules that define one.
ForeignReader = Reader


@cache
def readers() -> tuple[ForeignReader, ...]:
    """Every foreign reader, in :data:`READER_MODULES` order."""
    return tuple(importlib.import_module(m).READER for m in READER_MODULES)


def reader_named(name: str | None) -> ForeignReader | None:
    """The foreign reader of format ``name`` (a ``Document.format``), or None. A loom
    format's name answers None without importing every foreign reader: the status bar
    asks for each run shown, and that import (0.18 s) froze a live journal's first rows."""
    if name is None or name in LOOM_FORMATS:
        return None
    return next((r for r in readers() if r.name == name), None)


def format_label(doc: Document) -> str:
    """What the status bar and ``summary`` name a run's file as: ``trace v2``, ``journal v1``;
    a foreign file by its format's name (its ``version`` is that of the loom trace it was read
    into, not the producer's: "otlp v2" named a version OTLP does not have)."""
    reader = reader_named(doc.format)
    if reader is not None:
        return reader.label
    return f"{doc.format} v{doc.extra.get('journal_version', doc.version)}"


def with_article(noun: str) -> str:
    """``an Inspect AI log``, ``a Claude Code transcript``."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def reader_for(head: bytes, path: str) -> ForeignReader | None:
    """The foreign reader that claims a file from its first bytes, or None (a loom format)."""
    head = head[:SNIFF_BYTES]
    return next((r for r in readers() if r.sniff(head, path)), None)


def run_part_of(path: str) -> str | None:
    """The run (its path) that the file at ``path`` is a part of by its place, when a
    reader says so (a Claude Code sub-agent's file: its session), else None."""
    for reader in readers():
        owner = reader.part_of(path) if reader.part_of is not None else None
        if owner is not None:
            return owner
    return None


def open_patterns() -> list[str]:
    """File-dialog patterns of every foreign format."""
    return [p for r in readers() for p in r.patterns]


@dataclass
class RunBuilder:
    """Collects a foreign run as loom effects and makes the harness-shaped trace of it.

    Harness-shaped (not proxy-shaped) because foreign runs have depth (sub-agents) and the
    harness context builder rebuilds what each model call saw from the effects before it.
    Keys hash what identifies the step in the source (call number, tool-call id), so a
    re-read gives the same keys; the checksum is stamped so loom-harness verifies it.
    """

    model: str = ""
    system: str = ""
    episodes: list[str] = field(default_factory=list)
    output: str = ""
    log: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    _calls: int = 0

    def add_model(
        self,
        text: str,
        tool_calls: list[dict[str, Any]],
        usage: dict[str, Any],
        *,
        depth: int = 0,
        stop_reason: str = "",
        meta: dict[str, Any] | None = None,
    ) -> int:
        """Append a model call; ``tool_calls`` are ``{id, name, input}``. Returns its seq."""
        self._calls += 1
        result = {
            "text": text,
            "tool_calls": tool_calls,
            "stop_reason": stop_reason or ("tool_use" if tool_calls else "end_turn"),
            "usage": usage,
        }
        if text:
            self.output = text
        return self._append("model", {"n": self._calls}, result, depth, meta)

    def add_tool(
        self,
        name: str,
        call_id: str,
        result: Any,
        *,
        depth: int = 0,
        meta: dict[str, Any] | None = None,
    ) -> int:
        """Append a tool execution (``result`` as the tool returned it). Returns its seq."""
        return self._append(f"tool:{name or 'tool'}", {"id": call_id}, result, depth, meta)

    def add_human(self, question: str, answer: str, *, depth: int = 0) -> int:
        """Append a human answer (``ask_human`` shape). Returns its seq."""
        return self._append("human", {"question": question}, answer, depth, None)

    def add_call_step(
        self,
        kind: str,
        payload: Any,
        result: Any,
        usage: dict[str, Any] | None,
        *,
        depth: int = 0,
        meta: dict[str, Any] | None = None,
    ) -> int:
        """Append a step loom records by what a call made, not as the call (``compact``: a
        summary, ``critic``: a grader's score), the call's ``usage`` in ``meta.usage``
        (:mod:`loom_core.views.billed`: counted and priced, never an agent's turn and never
        the run's output; None: the call's usage was not recorded). Returns its seq."""
        billed = {"usage": usage} if usage is not None else {}
        return self._append(kind, payload, result, depth, {**(meta or {}), **billed})

    def add_episode(self, text: str) -> None:
        """A user message that starts (or continues) the run, once per distinct text."""
        if text and text not in self.episodes:
            self.episodes.append(text)

    def _append(
        self, kind: str, payload: Any, result: Any, depth: int, meta: dict[str, Any] | None
    ) -> int:
        seq = len(self.log)
        self.log.append(effect_entry(seq, kind, payload, result, depth, meta))
        return seq

    def trace(self) -> dict[str, Any]:
        """The loom trace (harness member order, checksum stamped last)."""
        from loom_core.formats.save import stamp

        return stamp(
            {**finished_run(self.model, self.system, self.episodes, self.output), "log": self.log}
        )

    def document(self, path: str, fmt: str, warnings: tuple[str, ...] = ()) -> Document:
        """The run as a :class:`Document` of format ``fmt`` (its source: the loom trace)."""
        from loom_core.formats.trace import load_trace_bytes

        loaded = load_trace_bytes(msgspec.json.encode(self.trace()), path)
        return Document(
            path=path,
            format=fmt,
            header=loaded.header,
            effects=loaded.effects,
            source=loaded.source,
            warnings=loaded.warnings + warnings,
            extra=self.extra,
        )
