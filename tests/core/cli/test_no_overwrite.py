"""No command replaces an existing run unless told to (``--force``): exit 2, one line, the file
byte-identical. Generated runs without a named place go to the per-user runs folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loom_core.heal.engine import save_regression
from tests.core.clis import core

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return Path(shutil.copy(SAMPLE, tmp_path / "run.loom.json"))


def refused(done, path: Path, before: bytes) -> None:  # type: ignore[no-untyped-def]
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert str(path) in done.stderr and "already exists" in done.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "command",
    [
        ["convert", "{other}", "-o", "{run}"],
        ["fork", "{run}", "--step", "14", "--provider", "scripted", "-o", "{run}"],
        ["fork", "{run}", "--step", "14", "--mode", "agent", "-o", "{run}"],
        ["proxy", "--port", "0", "--save", "{run}"],
        ["record", "--save", "{run}", "--", "true"],
    ],
)
def test_commands_refuse_to_replace_a_run(run: Path, tmp_path: Path, command: list[str]) -> None:
    other = Path(shutil.copy(run, tmp_path / "other.loom.json"))
    before = run.read_bytes()
    args = [a.replace("{run}", str(run)).replace("{other}", str(other)) for a in command]
    refused(core(*args), run, before)


def test_convert_with_force_replaces(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.loom.json"
    out.write_text("{}")
    done = core("convert", run, "-o", out, "--force")
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["log"]


def test_heal_refuses_a_used_folder_and_defaults_to_the_runs_folder(
    run: Path, tmp_path: Path, runs_dir: Path
) -> None:
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.loom.json").write_text("{}")
    done = core("heal", run, "--require", "never said", "--provider", "scripted", "--out-dir", used)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "already holds files" in done.stderr and sorted(p.name for p in used.iterdir()) == [
        "keep.loom.json"
    ]
    done = core(
        "heal",
        run,
        "--require",
        "never said",
        "--provider",
        "scripted",
        "--max-candidates",
        "1",
        "--json",
    )
    assert done.returncode == 1, done.stderr
    paths = [Path(c["path"]) for c in json.loads(done.stdout)["candidates"] if c.get("path")]
    assert paths and all(p.parent == runs_dir / "run.heal" for p in paths)
    assert not any(p.name.endswith(".heal") for p in tmp_path.iterdir())  # none beside the run


def test_a_regression_trace_never_replaces_a_file(tmp_path: Path) -> None:
    data = {"version": 2, "log": [], "output": ""}
    first = Path(save_regression(data, tmp_path))
    first.write_text("mine")
    second = Path(save_regression(data, tmp_path))
    assert second != first and first.read_text() == "mine"
    assert second.name == first.name.replace(".loom.json", "-2.loom.json")


def test_the_sample_generator_replaces_only_with_force(run: Path) -> None:
    from loom_core.demo import sample

    before = run.read_bytes()
    assert sample.main([str(run)]) == 2 and run.read_bytes() == before
    run.write_text("{}")
    assert sample.main([str(run), "--force"]) == 0 and run.read_bytes() == before
