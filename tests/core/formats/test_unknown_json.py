"""A file of JSON records that no reader claims is described, not "trailing characters"
(issue 22, item 8): the same words on the command line (exit 2, one line) and in the
window's dialog (tests/desktop/test_unknown_json_dialog.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loom_core.errors import LoadError
from loom_core.formats.loader import load
from loom_core.formats.progressive import load_progressive
from loom_core.formats.unknown_json import CONSOLE_DUMP
from tests.core.clis import core
from tests.core.formats.real_world import real_file

JOSH = "Josh-Weston__microsoft-agent-framework-samples__traces.jsonl"


def _one_line_exit_2(path: Path) -> str:
    done = core("summary", path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: {path}: ")
    return done.stderr.strip()


def test_json_lines_of_an_unknown_kind(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(
        "".join(json.dumps({"ts": i, "event": "x", "user": "u"}) + "\n" for i in range(3))
    )
    said = _one_line_exit_2(path)
    assert said.endswith(
        "JSON lines, but no format Loom Desktop reads (first record's keys: ts, event, user)"
    )
    assert "trailing characters" not in said


def test_the_console_exporter_dump_is_named_with_how_to_export_otlp() -> None:
    path = real_file("otlp", JOSH)
    said = _one_line_exit_2(path)
    assert said.endswith(CONSOLE_DUMP)
    assert "ConsoleSpanExporter" in said and "otlp-receive" in said


def test_a_big_file_says_the_same(tmp_path: Path) -> None:
    """Over 4 MiB the trace reader takes another path (head first): same words."""
    path = tmp_path / "big.jsonl"
    line = json.dumps({"id": 1, "payload": "x" * 1000}) + "\n"
    path.write_text(line * 5000)
    with pytest.raises(LoadError, match="JSON lines, but no format") as err:
        load_progressive(str(path), on_head=lambda _: None)
    assert err.value.path == str(path)


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ('{"version": 2, "log": [', "truncated"),  # a broken trace stays a broken trace
        ("[1]\n[2]\n", "not an object"),  # records, but no objects: nothing to name
    ],
)
def test_other_causes_stay(text: str, cause: str, tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    with pytest.raises(LoadError, match=cause):
        load(path)
