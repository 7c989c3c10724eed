"""The JSON container of an Inspect AI log (``inspect eval --log-format json``).

One JSON object (inspect-ai's ``log/_recorders/json.py`` writes ``EvalLog`` whole):
``{version, status, eval, plan, results, stats, …, samples: [EvalSample, …],
reductions}``, each sample the same object an ``.eval`` log keeps in its own member.

Lazily: the file is decoded once into its header and a list of *raw* samples -- msgspec
steps over each sample's bytes (checking them) without building a Python object for
any of it -- and each sample then gives only what its label needs (id, epoch, input,
scores; its events are stepped over again, not built). The chosen sample alone is
decoded whole, when it is shown. Why not stop reading after the first sample (a
streaming parser): the sample bar lists every sample, so every sample's id and label
must be found anyway, and the file is already in memory (it is read once, like any run:
:mod:`loom_core.formats.loader`); what costs is building objects, and nothing is built
for a sample nobody looks at.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from loom_core.errors import LoadError
from loom_core.formats.inspect_log import EvalInfo, Header, Log, in_order, listing

# how inspect's JSON logs begin: EvalLog's first members, in its field order
HEAD = re.compile(rb'\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"[a-z_]*"\s*,\s*"eval"\s*:')


class _JsonLog(msgspec.Struct):
    status: Any = None
    eval: EvalInfo | None = None
    samples: list[msgspec.Raw] | None = None


class _Head(msgspec.Struct):
    """What a sample's label needs; the rest of the sample is stepped over, not built."""

    id: Any = None
    epoch: Any = None
    input: Any = None
    scores: Any = None
    error: Any = None


_log_decoder = msgspec.json.Decoder(_JsonLog)
_head_decoder = msgspec.json.Decoder(_Head)


def is_json_log(head: bytes) -> bool:
    """``head`` (a file's first bytes) starts the way inspect writes a JSON log."""
    return HEAD.match(head) is not None


def open_json_log(data: bytes, path: str) -> Log:
    """The log in ``data`` (inspect's JSON container); LoadError when it is not one."""
    try:
        log = _log_decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as err:
        raise LoadError(path, f"not a readable Inspect AI JSON log ({err})") from err
    raws = log.samples or []
    if not raws:
        raise LoadError(path, "the log holds no samples (run with log_samples off, or unfinished)")
    found, heads = [], []
    for i, raw in enumerate(raws):
        try:
            head = _head_decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            head = _Head(id=f"#{i + 1}")  # not a sample object: it opens as one with an error
        epoch = head.epoch if type(head.epoch) is int else 1
        found.append((str(head.id), epoch, str(i)))
        heads.append(
            {
                "id": str(head.id),
                "epoch": epoch,
                "input": head.input,
                "scores": head.scores,
                "error": head.error,
            }
        )
    members = in_order(found)
    return Log(
        path,
        Header(status=log.status, eval=log.eval),
        members,
        listing(members, heads),
        lambda key: bytes(raws[int(key)]),
    )
