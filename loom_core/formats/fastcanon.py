"""The canonical JSON text of decoded JSON, several times faster than ``json.dumps``.

Why: a trace's checksum (loom-format.md §2) is SHA-256 over ``json.dumps(doc,
sort_keys=True)`` with Python's defaults, and that encoder was most of the time
``summary --json`` spends on a big trace. msgspec decodes and encodes the same
values in C: ``order="sorted"`` sorts keys by code point as Python does,
``msgspec.json.format(indent=0)`` puts in Python's ``", "`` / ``": "`` separators
(it copies string contents as they are), and what is left differs from Python's
output in two places, both fixed here:

- floats: the decoder hands each float's text to :func:`_float`, which keeps
  Python's spelling (``repr``) as a raw value;
- non-ASCII: msgspec writes UTF-8 and leaves DEL (0x7f) unescaped where Python
  writes ``\\uXXXX`` (surrogate pairs above U+FFFF); both occur only inside strings.

Anything msgspec refuses (a lone surrogate, ``NaN`` literals, ``1e400``) raises
:class:`FastCanonError`; callers then use ``json.dumps``. A property test keeps the
two byte-identical.
"""

from __future__ import annotations

import codecs
import math

import msgspec

ERRORS = "loom-json-escape"  # codec error handler: \uXXXX escapes, as json.dumps writes


class FastCanonError(ValueError):
    """The fast path cannot encode this input; use ``json.dumps`` instead."""


def _float(text: str) -> msgspec.Raw:
    """A float as ``json.dumps`` spells it (a raw value: encoded verbatim). One too big
    for a float (``1e400``) Python writes as ``Infinity``, which is not JSON and so
    cannot pass through the formatter: that input takes Python's path."""
    value = float(text)
    if not math.isfinite(value):
        raise FastCanonError(f"{text} is not a finite float")
    return msgspec.Raw(float.__repr__(value).encode("ascii"))


def _escape(err: UnicodeError) -> tuple[str, int]:
    """Codec error handler: non-ASCII as ``\\uXXXX``, astral characters as surrogate pairs."""
    if not isinstance(err, UnicodeEncodeError):
        raise err
    out = []
    for ch in err.object[err.start : err.end]:
        code = ord(ch)
        if code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out), err.end


codecs.register_error(ERRORS, _escape)
_decoder = msgspec.json.Decoder(float_hook=_float)
_encoder = msgspec.json.Encoder(order="sorted")


def canonical_text(data: bytes) -> bytes:
    """``json.dumps(json.loads(data), sort_keys=True).encode()`` for the JSON in ``data``.

    Raises :class:`FastCanonError` where only Python's own reader can go on.
    """
    try:
        value = _decoder.decode(data)
        text = msgspec.json.format(_encoder.encode(value), indent=0)
    except (msgspec.DecodeError, msgspec.ValidationError, msgspec.EncodeError) as err:
        raise FastCanonError(str(err)) from err
    if not text.isascii():
        text = text.decode("utf-8").encode("ascii", ERRORS)
    if b"\x7f" in text:
        text = text.replace(b"\x7f", b"\\u007f")
    return text
