"""A big run another laptop published opens head-first while the rest of it arrives.

Real parts: the other laptop is the ``runs`` command in its own process, the library a
real PostgreSQL, the store moto's S3 server. The download is held, by an event, right
after the window was handed the run's head, so what the window shows in the middle of a
download is looked at while it is the middle: the head in a tab still loading, no
checksum verdict, and no file under the run's name in the cache. Then the rest arrives
and the same tab loads the whole run from its cache file.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from benchmarks.synth import write_synth
from loom_core.formats import progressive
from loom_core.library import arriving, store
from loom_desktop.main_window import MainWindow
from tests.core.team.test_team_library import Laptop

WAIT = 60_000


def test_a_big_remote_run_shows_its_head_before_it_is_whole(
    qtbot: Any,
    window: MainWindow,
    here: str,
    pg_url: str,
    bucket: str,
    teammate: Laptop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = teammate
    big = write_synth(other.folder / "big.loom.json", 8000)  # 8 MB: opened head-first
    assert big.stat().st_size > progressive.SMALL_BYTES  # (and in this test's terms below)
    other.run("publish", big)
    original = big.read_bytes()
    big.unlink()  # only the bucket has it now
    # the head from the first MiB (not 8), in chunks of 256 KiB: a small test of a big run
    monkeypatch.setattr(progressive, "HEAD_BYTES", 1 << 20)
    monkeypatch.setattr(progressive, "SMALL_BYTES", 1 << 20)
    monkeypatch.setattr(store, "CHUNK", 1 << 18)
    release, held = threading.Event(), threading.Event()
    real_call = arriving.HeadWatch.__call__

    def hold_after_the_head(watch: Any, partial: Path, done: int, total: int) -> None:
        real_call(watch, partial, done, total)
        if watch.tried and not held.is_set():  # the head is on its way to the window
            held.set()
            release.wait(WAIT / 1000)  # the test looks at the window meanwhile

    monkeypatch.setattr(arriving.HeadWatch, "__call__", hold_after_the_head)

    window.library.use_library(pg_url)
    controller = window.library.controller
    qtbot.waitUntil(lambda: len(controller.runs.runs) == 1, timeout=WAIT)
    window.library.page._open_run(controller.runs.index(0, 0))
    qtbot.waitUntil(held.is_set, timeout=WAIT)
    qtbot.waitUntil(lambda: window.current() is not None, timeout=WAIT)
    view = window.current()
    qtbot.waitUntil(lambda: view.doc is not None, timeout=WAIT)
    try:
        assert not view.complete and view.checksum != "valid"  # the head, not the run
        assert 0 < len(view.session.timeline) < 8000
        final = Path(view.path)
        assert str(tmp_path / "desk-cache") in str(final) and not final.exists()
        (partial,) = final.parent.iterdir()  # the download, under a temporary name
        assert partial.name.startswith("big.loom.json.part-")
    finally:
        release.set()
    qtbot.waitUntil(lambda: view.complete, timeout=WAIT)
    assert window.current() is view and window.tabs.count() == 1  # the same tab, loaded
    assert final.read_bytes() == original and len(view.doc.effects) == 8000
    assert [p.name for p in final.parent.iterdir()] == ["big.loom.json"]
    qtbot.waitUntil(lambda: view.checksum == "valid", timeout=WAIT)
