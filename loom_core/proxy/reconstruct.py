"""Rebuild the final response object from a streamed (SSE) response (loom-format.md §6.5).

Why: a trace's ``wire`` holds one response object per exchange, whatever the
transport; a stream is folded, while it is relayed, into the object the same call
would have returned without streaming. One accumulator per dialect:

* Anthropic Messages: ``message_start`` envelope + usage, ``content_block_*`` (text,
  tool input JSON, thinking + signature, citations), ``message_delta`` stop reason +
  usage; ``ping`` ignored; ends with ``message_stop`` (``error`` = failed).
* OpenAI Chat Completions: chunks merged per choice index, ``tool_calls`` assembled
  by index, last ``finish_reason``, the usage chunk; ends with ``data: [DONE]``.
* OpenAI Responses: ``response.output_item.added/done``, ``content_part.added``,
  ``output_text.delta``, ``function_call_arguments.delta``; ends with
  ``response.completed`` / ``response.incomplete`` (whose ``response`` is taken as the
  final object, its ``output`` filled from the items when omitted), or
  ``response.failed`` / ``error`` (failed, not recorded).

The accumulators live in :mod:`.stream_acc`. Each one's ``feed`` returns True for the
terminal event; ``finished`` says whether what was seen is a complete response worth
recording. Why the stream is folded in bulk (:mod:`.sse_bulk`), not per network read:
parsing each read as it came cost more CPU than relaying it; bytes that cannot hold
the final event are only kept until one that may comes (or the stream ends).
"""

from __future__ import annotations

from typing import Any

from loom_core.proxy.sse_bulk import decode_all, parse_events, split_rest
from loom_core.proxy.stream_acc import AnthropicStream, ChatStream, ResponsesStream

__all__ = [
    "AnthropicStream",
    "ChatStream",
    "ResponsesStream",
    "StreamReconstructor",
    "path_dialect",
    "reconstruct",
    "sniff_dialect",
]

ANTHROPIC_EVENTS = frozenset(
    (
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    )
)
# Every final event (and every failure event) of the three dialects names one of these;
# bytes without any of them cannot complete one, so they are kept unparsed until one comes.
MARKERS = (
    b"message_stop",
    b"[DONE]",
    b"response.completed",
    b"response.incomplete",
    b"response.failed",
    b"error",
)
_TAIL = max(map(len, MARKERS)) - 1  # bytes kept before a chunk searched too (split marker)
# Fold what a stream holds unparsed past this many bytes while it flows (it cannot end
# there: no marker). Why not all at the end: persist before answer holds a stream's
# last event until its record is written, so what is left to parse then delays that
# client's end -- and, at concurrency, every other client's next request and first
# byte. A paced stream is folded in its gaps; one read of a whole answer, as before.
_EAGER = 4096


# Once the first event has named the dialect, only its own markers are searched: a
# Chat Completions stream ends only at [DONE], an Anthropic one at message_stop or an
# error; each search is a pass over every byte relayed.
_DIALECT_MARKERS = {
    "anthropic": (b"message_stop", b"error"),
    "openai": (b"[DONE]",),
    "responses": (b"response.completed", b"response.incomplete", b"response.failed", b"error"),
}


def may_end(data: bytes | bytearray, markers: tuple[bytes, ...] = MARKERS, start: int = 0) -> bool:
    """True when ``data`` (from ``start`` on) names one of ``markers`` (final or failure
    events): it may complete the stream."""
    find = data.find  # (find is twice as fast as ``in`` on short bytes)
    for marker in markers:
        if find(marker, start) >= 0:
            return True
    return False


def sniff_dialect(path: str, data: Any) -> str:
    """The stream's dialect from its first JSON event, else from the request path."""
    if isinstance(data, dict):
        kind = str(data.get("type") or "")
        if kind.startswith("response."):
            return "responses"
        if kind in ANTHROPIC_EVENTS:
            return "anthropic"
        if "choices" in data or data.get("object") == "chat.completion.chunk":
            return "openai"
    return path_dialect(path)


def path_dialect(path: str) -> str:
    """loom-harness decides by path (§6.2); we add ``/responses``."""
    p = path.split("?", 1)[0].lower()
    if p.endswith("/responses") or "/responses/" in p:
        return "responses"
    return "openai" if "chat/completions" in p else "anthropic"


class StreamReconstructor:
    """The raw stream kept as it is relayed, parsed in bulk when it may have ended.

    ``add`` only stores a chunk and says whether it may complete the final event (a
    marker is among the unparsed bytes); ``parse`` then folds every complete event
    into the dialect's accumulator and returns the final event's start offset once
    it is complete. ``feed`` is both at once; ``close`` parses the rest at the end.
    """

    __slots__ = (
        "path",
        "acc",
        "dialect",
        "terminal_at",
        "size",
        "_buf",
        "_base",
        "_wary",
        "_markers",
    )

    def __init__(self, path: str) -> None:
        self.path = path
        self.acc: AnthropicStream | ChatStream | ResponsesStream | None = None
        self.dialect = path_dialect(path)
        self.terminal_at: int | None = None  # stream offset where the final event began
        self.size = 0  # bytes added so far
        self._buf = bytearray()  # unparsed bytes, from an event boundary on
        self._base = 0  # stream offset of _buf[0]
        self._wary = False  # a marker is among the unparsed bytes
        self._markers: tuple[bytes, ...] = (
            MARKERS  # those that may end the stream (its dialect's, once known)
        )

    def add(self, chunk: bytes) -> bool:
        """Keep ``chunk`` unparsed; True when the final event may complete in it (call
        ``parse`` before sending it). After the final event, chunks are not kept."""
        self.size += len(chunk)
        if self.terminal_at is not None:
            return False
        buf = self._buf
        buf += chunk
        if self._wary:
            return True
        # A marker may begin in earlier reads (none spans a blank line, so none begins
        # before _buf): search the chunk and the end of what came before it.
        self._wary = may_end(buf, self._markers, max(0, len(buf) - len(chunk) - _TAIL))
        if not self._wary and (len(buf) > _EAGER or (self.acc is None and len(buf) > len(chunk))):
            # No marker among them: this cannot end the stream. The first event is
            # parsed with the second read (the first one's bytes leave untouched): it
            # names the dialect, whose markers are fewer.
            self.parse()
        return self._wary or self.terminal_at is not None

    def parse(self) -> int | None:
        """Fold the complete events kept so far; the final event's offset once seen."""
        if self.terminal_at is None and self._buf:
            events, starts, used = parse_events(bytes(self._buf), self._base)
            del self._buf[:used]
            self._base += used
            self._wary = may_end(self._buf, self._markers)  # in the incomplete last event
            self._events(events, starts)
        return self.terminal_at

    def feed(self, chunk: bytes) -> int | None:
        """Consume a chunk; returns the terminal event's start offset once it completes."""
        return self.parse() if self.add(chunk) else self.terminal_at

    def close(self) -> None:
        """End of stream: parse everything kept (the last event may lack its blank line)."""
        if self.terminal_at is None and self._buf:
            raw = bytes(self._buf)
            events, starts, used = parse_events(raw, self._base)
            rest, rest_starts = split_rest(raw[used:], self._base + used)
            self._events(events + decode_all(rest), starts + rest_starts)
        self._buf.clear()

    def _events(self, events: list[Any], starts: list[int]) -> None:
        first = 0
        if self.acc is None:  # the first JSON event (or [DONE]) decides the dialect
            while first < len(events) and events[first] is None:
                first += 1
            if first == len(events):
                return
            self.dialect = sniff_dialect(self.path, events[first])
            kinds: dict[str, type[AnthropicStream | ChatStream | ResponsesStream]] = {
                "anthropic": AnthropicStream,
                "openai": ChatStream,
                "responses": ResponsesStream,
            }
            self.acc = kinds[self.dialect]()
            self._markers = _DIALECT_MARKERS[self.dialect]
        end = self.acc.feed_all(events, first)
        if end >= 0:
            self.terminal_at = starts[end]
            self._buf.clear()  # what follows the final event is not parsed

    @property
    def finished(self) -> bool:
        """A complete response was seen (its final event, or a finish indicator)."""
        return self.acc is not None and self.acc.finished

    def result(self) -> dict[str, Any]:
        if self.acc is None:
            raise ValueError("no event in the stream")
        return self.acc.result()


def reconstruct(path: str, raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """A whole buffered stream -> (final object or None when incomplete, dialect)."""
    rec = StreamReconstructor(path)
    rec.feed(raw)
    rec.close()
    return (rec.result() if rec.finished else None), rec.dialect
