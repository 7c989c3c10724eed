"""``json.dumps(value)`` (and with ``sort_keys``) as Python writes it, in C where exact.

Why: every journal line must be what loom-harness's ``Journal`` writes -- compact
``json.dumps`` with ``", "`` / ``": "`` separators and ASCII escapes -- and the
recording proxy writes two per exchange. The standard encoder was a fifth of what
recording an exchange cost; msgspec encodes the same value several times faster,
and :mod:`.fastcanon` already knows how to turn its output into Python's spelling
(separators by ``msgspec.json.format(indent=0)``, non-ASCII and DEL escaped).

Where the two encoders can disagree the value takes Python's path: floats (msgspec
spells exponents and small numbers differently: ``1e-05`` vs ``0.00001``), values
msgspec writes but does not read back as equal (``NaN`` becomes ``null``, integer
dict keys become strings), and values it refuses (ints past 64 bits, lone
surrogates). Each fast result is decoded once more -- with any float refused --
and compared with the value, so the fast path is taken only when it is exact. A
property test keeps the two byte-identical. :func:`canonical` is the same for the
sorted form a checksum hashes (the recording proxy's trace serializes each entry
both ways, :mod:`loom_core.proxy.tracefile`).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from loom_core.formats.fastcanon import ERRORS

_encoder = msgspec.json.Encoder()
_sorted = msgspec.json.Encoder(order="sorted")  # keys by code point, as sort_keys does


class _Float(Exception):
    """A float in the value: Python spells some of them differently."""


def _no_float(_text: str) -> Any:
    raise _Float


_check = msgspec.json.Decoder(float_hook=_no_float)


def dumps(value: Any) -> bytes:
    """``json.dumps(value).encode("ascii")``, byte for byte."""
    fast = exact(value)
    return json.dumps(value).encode("ascii") if fast is None else python_text(fast[0])


def canonical(value: Any) -> bytes:
    """``json.dumps(value, sort_keys=True, default=str).encode("ascii")``, byte for byte."""
    fast = exact(value)
    if fast is None:
        return json.dumps(value, sort_keys=True, default=str).encode("ascii")
    return sorted_text(fast[1])


def sorted_text(back: Any) -> bytes:
    """The canonical text of the decoded value :func:`exact` returned."""
    return python_text(_sorted.encode(back))


def exact(value: Any) -> tuple[bytes, Any] | None:
    """msgspec's compact JSON of ``value`` and that JSON decoded (equal to ``value``),
    when Python's text can be made from it (:func:`python_text`); else None."""
    try:
        compact = _encoder.encode(value)
        back = _check.decode(compact)
    except (_Float, TypeError, ValueError, OverflowError, msgspec.MsgspecError):
        return None
    return (compact, back) if back == value else None


def python_text(compact: bytes, indent: int = 0) -> bytes:
    """Python's layout (``indent=0``: its one-line separators) and ASCII escapes on
    msgspec's JSON of a value :func:`exact` accepted."""
    text = msgspec.json.format(compact, indent=indent)
    if not text.isascii():
        text = text.decode("utf-8").encode("ascii", ERRORS)
    if b"\x7f" in text:
        text = text.replace(b"\x7f", b"\\u007f")
    return text
