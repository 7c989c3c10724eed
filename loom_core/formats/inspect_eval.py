"""Inspect AI logs: each sample (and epoch) of an ``.eval`` or JSON log is a run.

inspect writes a log as a zip (``.eval``, :mod:`.inspect_zip`) or, with ``--log-format
json``, as one JSON object (:mod:`.inspect_json`); either opens as a
:class:`~.inspect_log.Log`. Only the header, the sample list and the chosen sample are
read (a sample can hold hundreds of thousands of events; a log, thousands of samples).
Which one: the first in inspect's own order (epoch, then id) unless :func:`load_sample`
is told; ``Document.extra["samples"]`` lists them all so a face can offer the others.
:func:`each_sample` yields every sample in turn (the run library indexes them all;
``summary --sample all`` prints them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from loom_core.errors import LoadError
from loom_core.formats.document import Document, whole
from loom_core.formats.foreign import SNIFF_BYTES, ForeignReader
from loom_core.formats.inspect_json import is_json_log, open_json_log
from loom_core.formats.inspect_log import EvalInfo, Log, score_values
from loom_core.formats.inspect_sample import walk
from loom_core.formats.inspect_values import resolve
from loom_core.formats.inspect_zip import ZIP_MAGIC, open_zip_log

_FIRST_MEMBERS = (b"_journal/", b"samples/", b"header.json", b"summaries", b"reductions.json")


def sniff(head: bytes, path: str) -> bool:
    """A zip whose first member is one inspect writes, a JSON object that begins as
    inspect's JSON logs do, or any file named ``*.eval``."""
    if head[:4] == ZIP_MAGIC and len(head) >= 30:
        size = int.from_bytes(head[26:28], "little")  # APPNOTE.TXT §4.3.7: name length
        if head[30 : 30 + size].startswith(_FIRST_MEMBERS):
            return True
    return is_json_log(head) or path.lower().endswith(".eval")


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
    log = open_log(data, path)
    return _document(log, _choose(log.members, sample_id, epoch, path))


def each_sample(data: bytes, path: str) -> Iterator[Document]:
    """Every sample of the log as a run, in inspect's order, one at a time.

    Why not :func:`load_sample` per sample: that opens the log and reads the header and
    the sample list again for each; here they are read once and each sample once. The
    caller drops each document before asking for the next, so only one sample is in
    memory at a time.
    """
    log = open_log(data, path)
    for member in log.members:
        yield _document(log, member)


def sample_list(data: bytes, path: str) -> list[dict[str, Any]]:
    """Every sample of the log in inspect's order, with what its run shows: model steps
    (the agent's calls), scorer steps (graders' calls), tool steps, tokens, scores.

    Each sample's events are walked as for its run, but no loom trace is made of them (a
    tenth of the time), so a log of thousands of samples is listed in seconds; the counts
    are those of the run's effects, so they are what ``summary`` of that sample says.
    A sample that cannot be read is listed with its ``error``.
    """
    log = open_log(data, path)
    out = []
    for sid, epoch, key in log.members:
        entry: dict[str, Any] = {"id": sid, "epoch": epoch}
        try:
            state, sample = walk(log.read(key), path, _name(log, (sid, epoch, key)))
        except LoadError as err:
            out.append({**entry, "error": err.cause})
            continue
        entry.update(run_counts(state.run.log))
        entry["scores"] = score_values(sample.scores)
        out.append(entry)
    return out


def run_counts(log: list[dict[str, Any]]) -> dict[str, int]:
    """Steps by kind and tokens of a run's effects (``RunBuilder.log``), counted as
    ``summary`` counts them: a model call's usage, or the usage a step carries for a
    call it stands for (``meta.usage``)."""
    counts = {"model_steps": 0, "scorer_steps": 0, "tool_steps": 0}
    tokens = [0, 0]
    for entry in log:
        kind = entry["kind"]
        if kind == "model":
            counts["model_steps"] += 1
            usage = entry["result"].get("usage")
        else:
            counts["scorer_steps"] += kind == "critic"
            counts["tool_steps"] += kind.startswith("tool:")
            usage = (entry.get("meta") or {}).get("usage")
        if isinstance(usage, dict):
            tokens[0] += whole(usage.get("input_tokens"))
            tokens[1] += whole(usage.get("output_tokens"))
    return {**counts, "input_tokens": tokens[0], "output_tokens": tokens[1]}


def open_log(data: bytes, path: str) -> Log:
    """The log in ``data``, whichever container inspect wrote it in."""
    if is_json_log(data[:SNIFF_BYTES]):
        return open_json_log(data, path)
    return open_zip_log(data, path)


def _document(log: Log, chosen: tuple[str, int, str]) -> Document:
    """Sample ``chosen`` (``(id, epoch, key)``) of ``log`` as a run."""
    path = log.path
    state, sample = walk(log.read(chosen[2]), path, _name(log, chosen))
    ev = log.header.eval or EvalInfo()
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


def _name(log: Log, chosen: tuple[str, int, str]) -> str:
    """How errors name a sample: its zip member, or its place in a JSON log."""
    key = chosen[2]
    return key if key.startswith("samples/") else f"sample {chosen[0]} epoch {chosen[1]}"


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
    patterns=("*.eval",),  # a JSON log is recognised by its content (no bare *.json here)
    sniff=sniff,
    load=load,
    follow=False,  # a sample is written once, whole; the tab offers the others instead
)
