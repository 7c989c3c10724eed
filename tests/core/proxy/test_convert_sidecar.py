"""``convert`` of a proxy recording's side files, recorded with the real SDK clients.

Why: the exchange sidecar (``<base>.exchanges.jsonl``) holds every exchange whole, so
it converts on its own into the trace the proxy wrote; the journal holds only the
effects, so converting it keeps the raw exchanges (``wire``) only when its own sidecar
is beside it. Both results must be accepted by loom-harness.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.core.clis import core
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import Rig, loom_accepts
from tests.core.proxy.test_sdk_anthropic import agent, script


def recorded(rig: Rig) -> dict:
    script(rig)
    rig.upstream.script(Reply(text="Rome: 25°C."))
    agent(rig, stream=True)
    rig.openai().chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "and Rome?"}]
    )  # a second dialect in the same session
    return rig.stop()


def convert(src: Path, out: Path) -> tuple[dict, str]:
    done = core("convert", src, "-o", out)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text()), done.stderr


def test_the_sidecar_alone_converts_to_the_proxys_trace(rig: Rig, tmp_path: Path) -> None:
    trace = recorded(rig)
    side = tmp_path / "session.exchanges.jsonl"
    converted, said = convert(side, tmp_path / "from-sidecar.loom.json")
    assert "from a proxy exchange sidecar" in said and "4 raw exchange(s)" in said
    for member in ("log", "wire", "episodes", "systems", "output", "shield_events"):
        assert converted[member] == trace[member], member
    loom_accepts(tmp_path / "from-sidecar.loom.json")
    alone = tmp_path / "alone"  # no journal, no trace beside it: still a run
    alone.mkdir()
    shutil.copy(side, alone / "x.exchanges.jsonl")
    again, _ = convert(alone / "x.exchanges.jsonl", alone / "x.loom.json")
    assert again["log"] == trace["log"] and again["wire"] == trace["wire"]


def test_the_journal_keeps_the_raw_exchanges_of_its_sidecar(rig: Rig, tmp_path: Path) -> None:
    trace = recorded(rig)
    converted, said = convert(tmp_path / "session.journal.jsonl", tmp_path / "j.loom.json")
    assert converted["log"] == trace["log"] and converted["wire"] == trace["wire"]
    assert "note: kept the 4 raw exchange(s)" in said
    loom_accepts(tmp_path / "j.loom.json")
    alone = tmp_path / "alone"  # the journal without its sidecar: effects only, as before
    alone.mkdir()
    shutil.copy(tmp_path / "session.journal.jsonl", alone / "s.journal.jsonl")
    bare, said = convert(alone / "s.journal.jsonl", alone / "s.loom.json")
    assert bare["log"] == trace["log"] and "wire" not in bare and "note:" not in said


def test_a_sidecar_of_another_session_is_not_mixed_in(rig: Rig, tmp_path: Path) -> None:
    trace = recorded(rig)
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(tmp_path / "session.journal.jsonl", other / "s.journal.jsonl")
    lines = (tmp_path / "session.exchanges.jsonl").read_text().splitlines()
    (other / "s.exchanges.jsonl").write_text("\n".join(lines[:1] + lines[2:]) + "\n")
    converted, said = convert(other / "s.journal.jsonl", other / "s.loom.json")
    assert converted["log"] == trace["log"] and "wire" not in converted
    assert "lacks some of this journal's exchanges; converted without the raw" in said


def test_a_sidecar_with_no_exchange_is_bad_input(tmp_path: Path) -> None:
    side = tmp_path / "empty.exchanges.jsonl"
    side.write_text(
        '{"type":"session","format":"loom-exchanges","version":1,'
        '"started_at":1.0,"target":"http://x","scrubbed":false}\n'
    )
    done = core("convert", side, "-o", tmp_path / "out.loom.json")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and str(side) in done.stderr
    assert "no complete exchange" in done.stderr
    assert not (tmp_path / "out.loom.json").exists()
