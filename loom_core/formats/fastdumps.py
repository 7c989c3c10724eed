"""``json.dumps(value)`` with Python's defaults, produced in C where the value allows.

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
property test keeps the two byte-identical.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from loom_core.formats.fastcanon import ERRORS

_encoder = msgspec.json.Encoder()


class _Float(Exception):
    """A float in the value: Python spells some of them differently."""


def _no_float(_text: str) -> Any:
    raise _Float


_check = msgspec.json.Decoder(float_hook=_no_float)


def dumps(value: Any) -> bytes:
    """``json.dumps(value).encode("ascii")``, byte for byte."""
    try:
        compact = _encoder.encode(value)
        if _check.decode(compact) != value:
            raise _Float
    except (_Float, TypeError, ValueError, OverflowError, msgspec.MsgspecError):
        return json.dumps(value).encode("ascii")
    text = msgspec.json.format(compact, indent=0)
    if not text.isascii():
        text = text.decode("utf-8").encode("ascii", ERRORS)
    if b"\x7f" in text:
        text = text.replace(b"\x7f", b"\\u007f")
    return text
