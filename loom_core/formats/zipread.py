"""Members of a zip archive held in memory, including Zstandard-compressed ones.

Why not just :meth:`zipfile.ZipFile.read`: Inspect AI writes its ``.eval`` logs with
Zstandard compression (zip method 93), which the standard library reads only from
Python 3.14. Inspect itself monkey-patches :mod:`zipfile` for it (``zipfile_zstd``);
we must not patch a standard module under every other user of it, so a zstd member's
compressed bytes are located from its local header (APPNOTE.TXT §4.3.7: a 30-byte fixed
part, then the name and the extra field) and decompressed with ``zstandard``, and its
CRC-32 and size are checked as :mod:`zipfile` would. Every failure is a
:class:`~loom_core.errors.LoadError` naming the member.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from typing import Any

from loom_core.errors import LoadError

ZIP_ZSTANDARD = 93  # APPNOTE.TXT §4.4.5 compression method 93: Zstandard
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # APPNOTE.TXT §4.3.7, 30 bytes
_LOCAL_MAGIC = b"PK\x03\x04"
_CHUNK = 1 << 24
_READ_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError)


def open_zip(data: bytes, path: str) -> zipfile.ZipFile:
    """The archive in ``data`` (read from memory, nothing written). An entry that asks for
    a later zip version than :mod:`zipfile` reads raises ``NotImplementedError`` here."""
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (
        zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, ValueError, OSError
    ) as err:  # fmt: skip
        raise LoadError(path, f"not a readable zip archive ({err})") from err


def read_member(zf: zipfile.ZipFile, name: str, data: bytes, path: str) -> bytes:
    """The uncompressed bytes of member ``name`` (the last one of that name, as zipfile does)."""
    try:
        info = zf.getinfo(name)
    except KeyError as err:
        raise LoadError(path, f"the archive has no member {name}") from err
    if info.compress_type == ZIP_ZSTANDARD and not _stdlib_zstd():
        return _read_zstd(info, data, path)
    try:
        return zf.read(info)
    except NotImplementedError as err:
        raise LoadError(path, f"{name}: {err}") from err
    except _READ_ERRORS as err:
        raise LoadError(path, f"{name} is damaged ({err})") from err


def _stdlib_zstd() -> bool:
    """Python 3.14+ reads zstd members itself."""
    return getattr(zipfile, "ZIP_ZSTANDARD", None) == ZIP_ZSTANDARD


def _read_zstd(info: zipfile.ZipInfo, data: bytes, path: str) -> bytes:
    name = info.filename
    start = info.header_offset
    fixed = data[start : start + _LOCAL_HEADER.size]
    if len(fixed) < _LOCAL_HEADER.size or fixed[:4] != _LOCAL_MAGIC:
        raise LoadError(path, f"{name} is damaged (no local header where the directory says)")
    fields = _LOCAL_HEADER.unpack(fixed)
    begin = start + _LOCAL_HEADER.size + fields[10] + fields[11]  # + name + extra field
    packed = data[begin : begin + info.compress_size]
    if len(packed) < info.compress_size:
        raise LoadError(path, f"{name} is damaged (the archive ends inside it)")
    try:
        import zstandard
    except ImportError as err:  # a runtime dependency below Python 3.14 (pyproject.toml)
        raise LoadError(path, f"{name} is Zstandard-compressed and zstandard is missing") from err
    try:
        out = _bounded(
            zstandard.ZstdDecompressor().stream_reader(packed, read_across_frames=True),
            info.file_size,
        )
    except zstandard.ZstdError as err:
        raise LoadError(path, f"{name} is damaged ({err})") from err
    if len(out) != info.file_size or zlib.crc32(out) != info.CRC:
        raise LoadError(path, f"{name} is damaged (its size or CRC-32 does not match)")
    return out


def _bounded(reader: Any, size: int) -> bytes:
    """At most ``size + 1`` bytes from ``reader``: a member that inflates past the size its
    directory entry declares is refused after one byte too many, not held whole in memory."""
    chunks: list[bytes] = []
    got = 0
    while got <= size:
        chunk = reader.read(min(_CHUNK, size + 1 - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
