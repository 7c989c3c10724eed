"""A folder of real runs in several formats, made once per module by their real producers.

The bundled sample (a harness-shaped trace), a fork branch of it written by ``fork``
(scripted provider, offline), and a proxy recording made with the real Anthropic SDK
client through our proxy against the fake upstream (its trace, journal and exchange
sidecar side by side: one run).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loom_core.cli.entry import main
from tests.core.proxy.harness import start_rig
from tests.core.proxy.test_sdk_anthropic import agent, script

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"


def make_branch(parent: Path, out: Path) -> Path:
    """A fork branch of ``parent`` at step 3, written by the real ``fork`` command."""
    argv = ["fork", str(parent), "--step", "3", "--inject", "Only Oslo matters."]
    code = main([*argv, "--provider", "scripted", "--reason", "hint", "-o", str(out)])
    assert code == 0
    return out


def make_recording(folder: Path) -> Path:
    """A finished proxy recording in ``folder`` (``session.loom.json`` and its side files)."""
    folder.mkdir(parents=True, exist_ok=True)
    with start_rig(folder) as rig:
        script(rig)
        agent(rig, stream=False)
        rig.stop()
    return folder / "session.loom.json"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The runs, made once per module; tests copy them (:func:`runs`)."""
    root = tmp_path_factory.mktemp("library-runs")
    shutil.copy(SAMPLE, root / "sample.loom.json")
    make_branch(root / "sample.loom.json", root / "sample-branch.loom.json")
    make_recording(root / "proxy")
    return root


@pytest.fixture
def runs(made: Path, tmp_path: Path) -> Path:
    """A private copy of the made runs (tests move, delete and break files in it)."""
    folder = tmp_path / "watched"
    shutil.copytree(made, folder)
    return folder  # the branch still names the made sample as its parent


@pytest.fixture(autouse=True, params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every library test runs on both backends: the local SQLite file (the autouse
    ``library_db`` of tests/conftest.py) and a new database on a real PostgreSQL server,
    selected the way a user selects it (``LOOM_LIBRARY_URL``; subprocesses inherit it)."""
    if request.param == "postgresql":
        monkeypatch.setenv("LOOM_LIBRARY_URL", request.getfixturevalue("pg_url"))
    return str(request.param)


def sqlite_only(backend: str) -> None:
    """Skip a test of the SQLite file itself (its schema, locks, FTS5 text) on PostgreSQL."""
    if backend != "sqlite":
        pytest.skip("a test of the SQLite library's own file")
