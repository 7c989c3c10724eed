"""Read a line-based foreign file (Claude Code, OTLP JSON lines) as it grows: appended lines only.

Why: a live tab re-read its file whole on every change (:mod:`loom_core.live.reread`); a
43 MB Claude Code session took 0.6 s of CPU per read, half of it decoding JSON lines that
had not changed, so a long session being written kept a core busy. A format whose reader
has a :class:`~loom_core.formats.reader.LineParser` (``Reader.lines``) is read here by
offset instead, as the journal tail does: only the bytes past the offset are read and
decoded, and the run is built from every line decoded so far by the reader's own logic.
The file is read from its start again only when it was rewritten (truncated, replaced,
its first or last read bytes changed: :class:`~loom_core.live.prefix.ReadPrefix`), so what
this gives is what a whole read of the same bytes gives.
"""

from __future__ import annotations

import os

from loom_core.formats.document import Document
from loom_core.formats.reader import LineParser, Reader
from loom_core.live.prefix import ReadPrefix, read_at

__all__ = ["AppendedReader"]


class AppendedReader:
    """One file read by offset through ``reader.lines``; see the module docstring."""

    def __init__(self, path: str, reader: Reader) -> None:
        if reader.lines is None:
            raise ValueError(f"the {reader.name} reader is not line-based")
        self.path = path
        self._new_parser = reader.lines
        self._parser: LineParser = reader.lines()
        self._prefix = ReadPrefix()
        self._partial = b""  # the last line read, not complete yet
        self.rewrites = 0  # times the file was found rewritten and read from its start

    def read(self) -> Document:
        """The run as the file holds it now (``OSError``, or ``LoadError`` as the reader's
        ``load`` raises it). After a failure the next read starts from the file's start."""
        try:
            self._take()
        except BaseException:
            self._restart()  # nothing half-taken is kept
            raise
        return self._parser.document(self.path, self._partial)

    def _take(self) -> None:
        """Read from the offset (from the start when the file was rewritten); feed the
        complete lines to the parser, keep the partial last one."""
        with open(self.path, "rb") as f:
            st = os.fstat(f.fileno())
            if self._prefix.rewritten(f, st):
                self.rewrites += 1
                self._restart()
            data = read_at(f, self._prefix.pos, -1)
        self._prefix.took(data, st)
        chunk = self._partial + data if self._partial else data
        cut = chunk.rfind(b"\n") + 1
        if cut:
            self._parser.add(chunk[:cut])
        self._partial = chunk[cut:]

    def _restart(self) -> None:
        self._parser, self._prefix, self._partial = self._new_parser(), ReadPrefix(), b""
