"""Server-Sent Events parsed in bulk: many events per call, only their data and start.

Why bulk: the relay used to parse each network read as it came (a Python loop per
line, an object per event), which cost more CPU than relaying the bytes. Now it
keeps the raw bytes and parses them here only when the stream may have ended (a
final-event marker was seen, see :mod:`.reconstruct`) or at its end: one regex pass
cutting out the usual events (an optional ``event:`` line and one ``data:`` line),
used when they tile the buffer, else a pass block by block (line by line when a CR
is present), then one ``map`` of the JSON decoder over all payloads. Only what the reconstruction needs is
kept: each event's ``data`` (its lines joined with LF, as bytes) and the stream
offset of its first byte (the relay holds the final event's bytes from there).

The rules are the WHATWG event-stream ones (lines ending LF or CRLF, comments,
multi-line ``data:``, one space after the colon dropped); the tests check that this
agrees with a plain incremental reference parser at every chunking. Events without
a ``data`` field are dropped: the reconstruction ignores them. Only complete events
are cut out, so a UTF-8 character split across reads is decoded whole.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any

import msgspec

_decode = msgspec.json.Decoder().decode
# The usual event: an optional ``event:`` line, one ``data:`` line, a blank line.
_USUAL = re.compile(rb"(event: [^\n]*\n|)data: ([^\n]*)\n\n")
# An Anthropic text delta as the API spells it (compact, or with json.dumps's spaces),
# up to its string's first byte (the index is a group).
_TEXT_HEAD = (
    rb'(?:event: content_block_delta\n)?data: \{"type": ?"content_block_delta", ?'
    rb'"index": ?(0|[1-9][0-9]{0,8}), ?"delta": ?\{"type": ?"text_delta", ?"text": ?"'
)
_STRING = rb'[^"\\\n]*+(?:\\.[^"\\\n]*+)*+'  # a JSON string's content (no raw LF in one)
_TEXT_END = b'"}}\n\n'
# A run of text deltas of one block, every head the same bytes (the backreference), or
# one usual event: (run, head, index, event line, data) per match.
_TOKENS = re.compile(
    rb"((" + _TEXT_HEAD + rb")" + _STRING + rb'"\}\}\n\n(?:\2' + _STRING + rb'"\}\}\n\n)*+)'
    rb"|(event: [^\n]*\n|)data: ([^\n]*)\n\n"
)
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


class _Done:
    """The ``data: [DONE]`` payload (Chat Completions' final event), decoded."""

    def __repr__(self) -> str:
        return "DONE"


DONE: Any = _Done()

Events = tuple[list[bytes], list[int]]  # data payloads, start offsets (same length)


def split_events(buf: bytes, base: int) -> tuple[list[bytes], list[int], int]:
    """The complete events at the start of ``buf`` (whose first byte is at stream offset
    ``base``): their payloads, start offsets and how many bytes of ``buf`` they use."""
    if b"\r" in buf:
        return _split_lines(buf, base)
    cut = buf.rfind(b"\n\n")
    if cut < 0:
        return [], [], 0
    used = cut + 2
    region = buf[:used]
    found = _USUAL.findall(region)  # (event line or b"", data) per usual event, in C
    sizes = [len(e) + len(p) + 8 for e, p in found]  # 8 = "data: " + "\n\n"
    starts = list(accumulate(sizes, initial=base))
    if starts[-1] == base + used:  # they tile the region: every event is a usual one
        starts.pop()
        return [p for _, p in found], starts, used
    payloads, starts = _split_blocks(region, base)
    return payloads, starts, used


def parse_events(buf: bytes, base: int) -> tuple[list[Any], list[int], int]:
    """:func:`split_events` and :func:`decode_all` at once, a run of text deltas as one.

    Why: most of an Anthropic stream is text deltas, and each one cost a decode into
    two dicts and a step of the accumulator. A run of them for one block (identical
    bytes but the string) is cut out by the same regex pass, its strings joined and
    decoded once, and it becomes one delta event holding the whole text -- what
    folding the deltas one by one gives. The run's start is its first event's (no
    text delta is ever a final event). Whatever the run path cannot vouch for (a
    string that does not decode alone, an escaped surrogate that joining could pair)
    takes the event-by-event path."""
    if b"text_delta" not in buf or b"\r" in buf:
        payloads, starts, used = split_events(buf, base)
        return decode_all(payloads), starts, used
    cut = buf.rfind(b"\n\n")
    if cut < 0:
        return [], [], 0
    used = cut + 2
    found = _TOKENS.findall(buf[:used])
    starts = list(
        accumulate((len(r) or len(e) + len(p) + 8 for r, _, _, e, p in found), initial=base)
    )
    if starts.pop() == base + used:  # the matches tile the region
        plain = iter(decode_all([p for r, _, _, _, p in found if not r]))
        events = [_text_run(r, h, int(i)) if r else next(plain) for r, h, i, _, _ in found]
        if all(e is not _UNSURE for e in events):
            return events, starts, used
    payloads, starts, used = split_events(buf, base)
    return decode_all(payloads), starts, used


_UNSURE: Any = object()


def _text_run(run: bytes, head: bytes, index: int) -> Any:
    """One text-delta event holding a run's joined text; :data:`_UNSURE` when the
    joined string could decode differently from the strings one by one."""
    n = len(head)
    joined = b"".join([piece[n:] for piece in run.split(_TEXT_END)[:-1]])
    if b"\\u" in joined and _SURROGATE.search(joined):
        return _UNSURE  # a pair split across two deltas: each half alone is refused
    try:
        text = _decode(b'"' + joined + b'"')
    except ValueError:
        return _UNSURE  # invalid UTF-8, a control character...: each event decides alone
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "text_delta", "text": text},
    }


def _split_blocks(region: bytes, base: int) -> Events:
    """Complete events (LF only, ``region`` ends with a blank line), block by block."""
    payloads: list[bytes] = []
    starts: list[int] = []
    pos = base
    blocks = region.split(b"\n\n")
    blocks.pop()  # "" or "\n": what follows the last separator
    for block in blocks:
        size = len(block) + 2
        if block[:1] == b"\n":  # a blank line before the event (three LFs in a row)
            block, pos = block[1:], pos + 1
            size -= 1
        payload = _payload(block)
        if payload is not None:
            payloads.append(payload)
            starts.append(pos)
        pos += size
    return payloads, starts


def split_rest(buf: bytes, base: int) -> Events:
    """End of stream: the events in ``buf``, the last one maybe without its blank line."""
    payloads, starts, _ = _split_lines(buf + b"\n\n", base)
    return payloads, starts


def _payload(block: bytes) -> bytes | None:
    """The data of one event block (LF-separated lines, none blank), None without any."""
    if block.startswith(b"data: ") and b"\n" not in block:
        return block[6:]  # OpenAI's shape: one data line
    if block.startswith(b"event: "):  # Anthropic's and Responses': event line + data line
        nl = block.find(b"\n")
        if nl > 0 and block.startswith(b"data: ", nl + 1) and block.find(b"\n", nl + 1) < 0:
            return block[nl + 7 :]
    values = [v for v in map(_data_value, block.split(b"\n")) if v is not None]
    return b"\n".join(values) if values else None


def _data_value(line: bytes) -> bytes | None:
    """The value of a ``data`` field line, None for any other line (comments too)."""
    if not line.startswith(b"data"):
        return None
    name, _, value = line.partition(b":")
    if name != b"data":
        return None
    return value[1:] if value[:1] == b" " else value


def _split_lines(buf: bytes, base: int) -> tuple[list[bytes], list[int], int]:
    """Line by line (any CR present): lines end with LF, trailing CRs are dropped."""
    payloads: list[bytes] = []
    starts: list[int] = []
    pos = used = 0
    start, values = -1, []
    while True:
        nl = buf.find(b"\n", pos)
        if nl < 0:
            break
        line = buf[pos:nl].rstrip(b"\r")
        line_start, pos = pos, nl + 1
        if line:
            if start < 0:
                start = line_start
            value = _data_value(line)
            if value is not None:
                values.append(value)
            continue
        if values:
            payloads.append(b"\n".join(values))
            starts.append(base + start)
        start, values, used = -1, [], pos
    return payloads, starts, used


def decode_all(payloads: list[bytes]) -> list[Any]:
    """Each payload decoded as JSON; :data:`DONE` for ``[DONE]``, None for other non-JSON."""
    if payloads and payloads[-1] == b"[DONE]":  # Chat's last event: keep the fast path
        return decode_all(payloads[:-1]) + [DONE]
    try:
        return list(map(_decode, payloads))  # one C-level pass (no Python frame per event)
    except ValueError:
        return [_decode_one(p) for p in payloads]


def _decode_one(payload: bytes) -> Any:
    if payload == b"[DONE]":
        return DONE
    try:
        return _decode(payload)
    except ValueError:
        pass
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError:  # invalid UTF-8: read with replacement characters
        try:
            return _decode(payload.decode("utf-8", "replace"))
        except ValueError:
            return None
    return None
