"""The ``.eval`` container of an Inspect AI log: a zip of a header and one member per sample.

Layout (inspect-ai's ``log/_recorders/eval.py``): ``header.json`` (``{version, status,
eval: {task, model, created, …}, plan, results, stats}``) once the eval finished, or
``_journal/start.json`` (``{version, eval, plan}``) while it runs; one
``samples/<id>_epoch_<n>.json`` per sample run; ``summaries.json`` (or
``_journal/summaries/<k>.json``) with each sample's id, epoch, input and scores. The
members are Zstandard- or deflate-compressed (:mod:`loom_core.formats.zipread`). Only
the header and the summaries are read on open; a sample's member when it is asked for.
"""

from __future__ import annotations

import re
import zipfile
from typing import Any

import msgspec

from loom_core.errors import LoadError
from loom_core.formats.inspect_log import Header, Log, in_order, listing
from loom_core.formats.zipread import open_zip, read_member

HEADER = "header.json"
START = "_journal/start.json"
SUMMARIES = "summaries.json"
_JOURNAL_SUMMARIES = "_journal/summaries/"
_SAMPLE = re.compile(r"samples/(.+)_epoch_(\d+)\.json")
ZIP_MAGIC = b"PK\x03\x04"
_EMPTY_ZIP = b"PK\x05\x06"


def open_zip_log(data: bytes, path: str) -> Log:
    """The log in ``data`` (a zip); LoadError when it is not one inspect wrote."""
    if data[:4] != ZIP_MAGIC and data[:4] != _EMPTY_ZIP:
        raise LoadError(path, "not an Inspect AI log (an .eval log is a zip archive)")
    zf = open_zip(data, path)
    names = set(zf.namelist())
    if HEADER not in names and START not in names:
        raise LoadError(path, f"a zip archive, but not an Inspect AI log (no {HEADER})")
    header = _header(zf, data, path, HEADER if HEADER in names else START)
    members = sample_members(names)
    if not members:
        raise LoadError(path, "the log holds no samples (run with log_samples off, or unfinished)")
    return Log(
        path,
        header,
        members,
        listing(members, _summaries(zf, data, path, names)),
        lambda key: read_member(zf, key, data, path),
    )


def sample_members(names: set[str]) -> list[tuple[str, int, str]]:
    """``(id, epoch, member)`` of every sample, in inspect's order (epoch, then id)."""
    found = []
    for name in names:
        match = _SAMPLE.fullmatch(name)
        if match:
            found.append((match[1], int(match[2]), name))
    return in_order(found)


def _header(zf: zipfile.ZipFile, data: bytes, path: str, member: str) -> Header:
    try:
        return msgspec.json.decode(read_member(zf, member, data, path), type=Header)
    except (msgspec.DecodeError, msgspec.ValidationError) as err:
        raise LoadError(path, f"{member} is not an Inspect header ({err})") from err


def _summaries(zf: zipfile.ZipFile, data: bytes, path: str, names: set[str]) -> list[Any]:
    """Every sample summary the log holds (small: id, epoch, input, scores), or []."""
    members = (
        [SUMMARIES]
        if SUMMARIES in names
        else sorted(
            (n for n in names if n.startswith(_JOURNAL_SUMMARIES) and n.endswith(".json")),
            key=lambda n: (
                int(n.rsplit("/", 1)[1][:-5]) if n.rsplit("/", 1)[1][:-5].isdigit() else 0
            ),
        )
    )
    found: list[Any] = []
    for member in members:
        try:
            value = msgspec.json.decode(read_member(zf, member, data, path))
        except (LoadError, msgspec.DecodeError):
            continue  # the labels are a convenience: the samples themselves still open
        found.extend(value if isinstance(value, list) else [])
    return found
