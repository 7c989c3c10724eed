"""A live OTLP JSON-lines file is read by offset: each line decoded once, and the run after
any sequence of appends is the run a fresh open of the same bytes gives.

The files are a real instrumentation's (OpenLLMetry in event mode, spans and log records
in one file, or the logs in a file beside it), written a piece at a time, cut at line ends
and in the middle of lines; a pretty-printed request is not line-based and is read whole.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from loom_core.errors import LoadError
from loom_core.formats import otlp_lines
from loom_core.formats.document import Document
from loom_core.formats.otlp import load_otlp
from loom_core.formats.otlp_reader import READER
from loom_core.live.appended import AppendedReader
from tests.core.formats.otlp_event_mode import run_event_mode
from tests.core.live.test_appended import facts


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("openllmetry")
    run_event_mode("openllmetry-openai", folder)
    return folder


def _fresh(path: Path) -> Document | str:
    try:
        return load_otlp(path.read_bytes(), str(path))
    except LoadError as err:
        return err.cause


def _followed(reader: AppendedReader) -> Document | str:
    try:
        return reader.read()
    except LoadError as err:
        return err.cause


def _same(a: Document | str, b: Document | str) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return facts(a) == facts(b)


def _write_in_pieces(data: bytes, path: Path, seed: int) -> int:
    """Write ``data`` to ``path`` in pieces; after each, the followed run must be the fresh
    one. Returns how many pieces."""
    rng = random.Random(seed)
    ends = [i + 1 for i in range(len(data)) if data[i] == 0x0A]
    cuts = set(ends) | {rng.randrange(1, len(data)) for _ in range(len(ends) + 4)}
    reader = AppendedReader(str(path), READER)
    done = 0
    for cut in sorted(cuts | {len(data)}):
        with open(path, "ab") as fh:
            fh.write(data[done:cut])
        done = cut
        assert _same(_followed(reader), _fresh(path)), f"after {cut} of {len(data)} bytes"
    assert reader.rewrites == 0
    return len(cuts)


@pytest.mark.parametrize("name", ["mixed.otlp.jsonl", "lines.otlp.jsonl"])
def test_followed_appends_read_as_a_fresh_open(
    produced: Path, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = produced / name
    data = src.read_bytes()
    assert data.count(b"\n") >= 2
    for sibling in produced.glob("*.logs.otlp.*"):  # the logs export beside the spans
        shutil.copy(sibling, tmp_path / sibling.name)
    decoded: list[bytes] = []
    one = otlp_lines._decoded
    monkeypatch.setattr(otlp_lines, "_decoded", lambda line: decoded.append(line) or one(line))
    pieces = _write_in_pieces(data, tmp_path / name, 1)
    complete = [ln for ln in data.split(b"\n") if ln.strip()]
    assert pieces > len(complete)
    # each complete line once, and at most one try of the unfinished last line per read
    assert len(decoded) <= len(complete) + pieces
    assert sorted(set(decoded) & set(complete)) == sorted(set(complete))


def test_a_pretty_printed_request_is_read_whole(produced: Path, tmp_path: Path) -> None:
    first = (produced / "lines.otlp.jsonl").read_bytes().split(b"\n")[0]
    pretty = json.dumps(json.loads(first), indent=2).encode() + b"\n"
    _write_in_pieces(pretty, tmp_path / "pretty.otlp.json", 2)


def test_a_line_that_is_not_json_reads_as_the_whole_load_does(
    produced: Path, tmp_path: Path
) -> None:
    lines = (produced / "lines.otlp.jsonl").read_bytes().split(b"\n")
    data = lines[0] + b"\n" + b"{not json}\n" + b"\n".join(lines[1:])
    _write_in_pieces(data, tmp_path / "bad.otlp.jsonl", 3)
