"""Read a whole input file, OS errors turned into a :class:`LoadError` naming the cause.

A leaf apart from :mod:`.loader` (which brings the schema, pydantic and every reader)
so that ``summary --json`` can read a big trace and fork its checksum child before
paying for those imports.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, overload

from loom_core.errors import LoadError


def _read_buffer(path: str | Path) -> bytearray:
    with open(path, "rb") as fh:
        buf = bytearray(os.fstat(fh.fileno()).st_size)
        got = fh.readinto(buf)
        if got < len(buf):  # the file shrank meanwhile
            del buf[got:]
        buf += fh.read()  # or grew
        return buf


@overload
def read_bytes(path: str | Path, mutable: Literal[False] = False) -> bytes: ...
@overload
def read_bytes(path: str | Path, mutable: Literal[True]) -> bytearray: ...


def read_bytes(path: str | Path, mutable: bool = False) -> bytes | bytearray:
    """Read a file, turning OS errors into a :class:`LoadError` with the cause.

    ``mutable`` returns a bytearray (see :mod:`loom_core.formats.progressive` for why).
    """
    try:
        return _read_buffer(path) if mutable else Path(path).read_bytes()
    except FileNotFoundError as err:
        raise LoadError(path, "no such file") from err
    except IsADirectoryError as err:
        raise LoadError(path, "is a directory, not a file") from err
    except PermissionError as err:
        raise LoadError(path, "permission denied") from err
    except OSError as err:
        raise LoadError(path, os.strerror(err.errno or 0) or str(err)) from err
