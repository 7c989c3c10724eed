"""Inspect AI ``.eval`` logs: a zip of a header and one JSON member per sample and epoch.

Layout (inspect-ai's ``log/_recorders/eval.py``): ``header.json`` (``{version, status,
eval: {task, model, created, …}, plan, results, stats}``) once the eval finished, or
``_journal/start.json`` (``{version, eval, plan}``) while it runs; one
``samples/<id>_epoch_<n>.json`` per sample run; ``summaries.json`` (or
``_journal/summaries/<k>.json``) with each sample's id, epoch, input and scores. The
members are Zstandard- or deflate-compressed (:mod:`loom_core.formats.zipread`).

Each sample is a run. Only the header, the summaries and the chosen sample are read (a
sample can hold hundreds of thousands of events; a log, thousands of samples). Which
one: the first in inspect's own order (epoch, then id) unless :func:`load_sample` is
told; ``Document.extra["samples"]`` lists them all so a face can offer the others.
:func:`each_sample` yields every sample in turn (the run library indexes them all).
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

from loom_core.errors import LoadError
from loom_core.formats.document import Document
from loom_core.formats.foreign import ForeignReader
from loom_core.formats.inspect_sample import walk
from loom_core.formats.inspect_values import resolve, text_of
from loom_core.formats.zipread import open_zip, read_member

HEADER = "header.json"
START = "_journal/start.json"
SUMMARIES = "summaries.json"
_JOURNAL_SUMMARIES = "_journal/summaries/"
_SAMPLE = re.compile(r"samples/(.+)_epoch_(\d+)\.json")
_ZIP_MAGIC = b"PK\x03\x04"
_FIRST_MEMBERS = (b"_journal/", b"samples/", b"header.json", b"summaries", b"reductions.json")
_LABEL_CHARS = 60


class _Eval(msgspec.Struct):
    task: Any = None
    model: Any = None
    created: Any = None
    run_id: Any = None


class _Header(msgspec.Struct):
    status: Any = None
    eval: _Eval | None = None


def sniff(head: bytes, path: str) -> bool:
    """A zip whose first member is one inspect writes, or any file named ``*.eval``."""
    if head[:4] == _ZIP_MAGIC and len(head) >= 30:
        size = int.from_bytes(head[26:28], "little")  # APPNOTE.TXT §4.3.7: name length
        if head[30 : 30 + size].startswith(_FIRST_MEMBERS):
            return True
    return path.lower().endswith(".eval")


def load(data: bytes, path: str) -> Document:
    """The log's first sample as a run."""
    return load_sample(data, path)


def parse_sample_spec(spec: str) -> tuple[str, int | None]:
    """``ID[:EPOCH]`` as the command line takes it: ``"7"``, ``"7:2"``, ``"a:b:3"``."""
    head, sep, tail = spec.rpartition(":")
    if sep and tail.isdigit() and head:
        return head, int(tail)
    return spec, None


def load_sample(
    data: bytes, path: str, sample_id: str | int | None = None, epoch: int | None = None
) -> Document:
    """Sample ``sample_id`` (its ``epoch``, else its first) of the log as a run."""
    log = _open_log(data, path)
    return _document(log, _choose(log.members, sample_id, epoch, path))


def each_sample(data: bytes, path: str) -> Iterator[Document]:
    """Every sample of the log as a run, in inspect's order, one at a time.

    Why not :func:`load_sample` per sample: that opens the zip and reads the header and
    the summaries again for each; here they are read once and each sample's member once
    (the run library indexes every sample of a log). The caller drops each document
    before asking for the next, so only one sample is in memory at a time.
    """
    log = _open_log(data, path)
    for member in log.members:
        yield _document(log, member)


@dataclass
class _Log:
    """An opened log: what every sample's document shares (read once)."""

    zf: zipfile.ZipFile
    data: bytes
    path: str
    header: _Header
    members: list[tuple[str, int, str]]
    listing: list[dict[str, Any]]


def _open_log(data: bytes, path: str) -> _Log:
    if data[:4] != _ZIP_MAGIC and data[:4] != b"PK\x05\x06":
        raise LoadError(path, "not an Inspect AI log (an .eval log is a zip archive)")
    zf = open_zip(data, path)
    names = set(zf.namelist())
    if HEADER not in names and START not in names:
        raise LoadError(path, f"a zip archive, but not an Inspect AI log (no {HEADER})")
    header = _header(zf, data, path, HEADER if HEADER in names else START)
    members = sample_members(names)
    if not members:
        raise LoadError(path, "the log holds no samples (run with log_samples off, or unfinished)")
    return _Log(zf, data, path, header, members, _listing(zf, data, path, names, members))


def _document(log: _Log, chosen: tuple[str, int, str]) -> Document:
    """Sample ``chosen`` (``(id, epoch, member)``) of ``log`` as a run."""
    path = log.path
    state, sample = walk(read_member(log.zf, chosen[2], log.data, path), path, chosen[2])
    ev = log.header.eval or _Eval()
    run = state.run
    run.model = ev.model if isinstance(ev.model, str) else ""
    run.extra.update(
        started=ev.created,  # the Runs page's "When" (ISO 8601)
        inputs=state.inputs,
        records=state.records,
        samples=[dict(s) for s in log.listing],
        sample={"id": chosen[0], "epoch": chosen[1], "events": dict(state.counts)},
        eval={
            "task": ev.task,
            "model": ev.model,
            "created": ev.created,
            "status": log.header.status,
        },
        ended=_ended(sample),  # how Inspect says the sample ended (the run library's outcome)
    )
    return run.document(path, READER.name, tuple(state.warnings) + _sample_notes(sample))


def sample_members(names: set[str]) -> list[tuple[str, int, str]]:
    """``(id, epoch, member)`` of every sample, in inspect's order (epoch, then id)."""
    found = []
    for name in names:
        match = _SAMPLE.fullmatch(name)
        if match:
            found.append((match[1], int(match[2]), name))
    return sorted(found, key=lambda s: (s[1], s[0].zfill(20) if s[0].isdigit() else s[0]))


def _choose(
    members: list[tuple[str, int, str]], sample_id: str | int | None, epoch: int | None, path: str
) -> tuple[str, int, str]:
    if sample_id is None:
        return members[0]
    for member in members:
        if member[0] == str(sample_id) and (epoch is None or member[1] == epoch):
            return member
    have = ", ".join(f"{m[0]}:{m[1]}" for m in members[:20])
    wanted = f"{sample_id}" + (f" epoch {epoch}" if epoch is not None else "")
    raise LoadError(path, f"the log has no sample {wanted} (it has {have})")


def _header(zf: zipfile.ZipFile, data: bytes, path: str, member: str) -> _Header:
    try:
        return msgspec.json.decode(read_member(zf, member, data, path), type=_Header)
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


def _listing(
    zf: zipfile.ZipFile, data: bytes, path: str, names: set[str], members: list[Any]
) -> list[dict[str, Any]]:
    by_key = {
        (str(s.get("id")), s.get("epoch")): s
        for s in _summaries(zf, data, path, names)
        if isinstance(s, dict)
    }
    return [
        {"id": sid, "epoch": ep, "label": _label(sid, ep, by_key.get((sid, ep)))}
        for sid, ep, _ in members
    ]


def _label(sample_id: str, epoch: int, summary: Any) -> str:
    """``7 · epoch 2 · What is 2+3? · match: C``: what a chooser shows for a sample (a
    score by its scorer's name: a bare ``C`` or ``I`` said nothing to who had not run it)."""
    parts = [sample_id, f"epoch {epoch}"]
    if isinstance(summary, dict):
        value = summary.get("input")
        text = value if isinstance(value, str) else text_of_first_user(value)
        if text:
            text = " ".join(text.split())
            parts.append(text[:_LABEL_CHARS] + ("…" if len(text) > _LABEL_CHARS else ""))
        scores = summary.get("scores")
        if isinstance(scores, dict):
            scored = [f"{k}: {s.get('value')}" for k, s in scores.items() if isinstance(s, dict)]
            parts += scored[:2]
        if summary.get("error"):
            parts.append("error")
    return " · ".join(parts)


def text_of_first_user(messages: Any) -> str:
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, dict) and message.get("role") == "user":
                return text_of(message.get("content"))
    return ""


def _ended(sample: Any) -> dict[str, str]:
    """``{"error": …}`` or ``{"limit": …}`` when the sample ended with one, else ``{}``."""
    if isinstance(sample.error, dict):
        return {
            "error": f"the sample ended with an error: {resolve(sample.error.get('message'), {})}"
        }
    if isinstance(sample.limit, dict):
        return {"limit": f"{sample.limit.get('type')} ({sample.limit.get('limit')})"}
    return {}


def _sample_notes(sample: Any) -> tuple[str, ...]:
    """Why a sample stopped early, as warnings the faces show."""
    notes = []
    if isinstance(sample.error, dict):
        notes.append(f"the sample ended with an error: {resolve(sample.error.get('message'), {})}")
    if isinstance(sample.limit, dict):
        notes.append(
            f"the sample hit its {sample.limit.get('type')} limit ({sample.limit.get('limit')})"
        )
    return tuple(notes)


READER = ForeignReader(
    name="inspect",
    label="Inspect AI log",
    patterns=("*.eval",),
    sniff=sniff,
    load=load,
    follow=False,  # a sample is written once, whole; the tab offers the others instead
)
