"""An Inspect AI log damaged anywhere, or with any JSON value in any field, opens or is a
LoadError -- never another exception (hypothesis, starting from a log inspect-ai wrote)."""

from __future__ import annotations

import functools
import io
import json
import zipfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom_core.errors import LoadError
from loom_core.formats.loader import load_bytes
from loom_core.formats.zipread import read_member
from loom_core.views.timeline import build_timeline
from tests.core.fuzz.surfaces import exercise
from tests.inspect_producer import eval_log, json_log

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_FIELDS = [
    "event", "span_id", "id", "parent_id", "type", "name", "model", "input", "input_refs",
    "output", "error", "function", "arguments", "result", "call", "decision", "approver",
    "events", "action", "score", "intermediate",
]  # fmt: skip
_SAMPLE_FIELDS = [
    "id", "epoch", "input", "events", "attachments", "events_data", "error", "limit", "output",
    "scores",
]  # fmt: skip
_LOG_FIELDS = ["version", "status", "eval", "samples"]  # a JSON log's own members


@functools.cache
def _log() -> tuple[bytes, dict[str, bytes]]:
    path = eval_log()
    data = path.read_bytes()
    with zipfile.ZipFile(path) as zf:
        return data, {n: read_member(zf, n, data, str(path)) for n in zf.namelist()}


def _opens_or_refuses(data: bytes, name: str = "fuzz.eval") -> None:
    try:
        doc = load_bytes(data, name)
    except LoadError:
        return
    build_timeline(doc)
    for seq in range(len(doc.effects)):
        doc.extra["inputs"].get(seq)
        doc.extra["records"].get(seq)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), max_size=6),
    cut=st.none() | st.floats(0, 1),
)
def test_a_damaged_archive_opens_or_is_a_load_error(flips: list[Any], cut: float | None) -> None:
    data = bytearray(_log()[0])
    for where, byte in flips:
        data[int(where * len(data))] = byte
    if cut is not None:
        del data[int(cut * len(data)) :]
    _opens_or_refuses(bytes(data))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    field=st.sampled_from(_FIELDS + ["(sample) " + f for f in _SAMPLE_FIELDS]),
    value=_json,
    which=st.integers(0, 80),
)
def test_any_json_in_any_field_opens_or_is_a_load_error(field: str, value: Any, which: int) -> None:
    _, members = _log()
    name = "samples/7_epoch_1.json"
    sample = json.loads(members[name])
    if field.startswith("(sample) "):
        sample[field.removeprefix("(sample) ")] = value
    else:
        events = sample["events"]
        events[which % len(events)][field] = value
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:  # stored: fast, and the path zipfile reads itself
        for member, data in members.items():
            out.writestr(member, json.dumps(sample).encode() if member == name else data)
    _opens_or_refuses(buf.getvalue())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    field=st.sampled_from(
        _LOG_FIELDS + ["(sample) " + f for f in _SAMPLE_FIELDS] + ["(event) " + f for f in _FIELDS]
    ),
    value=_json,
    which=st.integers(0, 80),
)
def test_a_json_log_with_any_json_anywhere_opens_or_is_a_load_error(
    field: str, value: Any, which: int
) -> None:
    """``--log-format json``: one object, so its own members can be anything too."""
    log = json.loads(_json_log())
    sample = log["samples"][which % len(log["samples"])]
    if field.startswith("(sample) "):
        sample[field.removeprefix("(sample) ")] = value
    elif field.startswith("(event) "):
        sample["events"][which % len(sample["events"])][field.removeprefix("(event) ")] = value
    else:
        log[field] = value
    _opens_or_refuses(json.dumps(log).encode(), "fuzz.json")


@functools.cache
def _json_log() -> bytes:
    return json_log().read_bytes()


def test_every_view_and_command_reads_a_real_log(tmp_path: Path) -> None:
    """The fuzzers' target (every loader, every view the window builds, every command that
    reads a file) on the log as inspect wrote it, and on it cut short."""
    data = _log()[0]
    assert exercise(data, tmp_path).status == "ok"
    assert exercise(data[: len(data) // 3], tmp_path).status == "rejected"
