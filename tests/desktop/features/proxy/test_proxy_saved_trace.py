"""A proxy that saves its trace: its live tab says where, and does not offer to save it again.

The journal tab of a finished run offered "Run finished — save as trace…" even when the
proxy had saved the trace already (Proxy ▸ Start… always gives it a save path).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from loom_core.live.live_status import ENDED, FINISHED
from loom_desktop.features.proxy.launcher import ProxySpec
from loom_desktop.main_window import MainWindow
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import CLIENT_S, running_upstream

WAIT = 20_000


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream() as up:
        yield up


def test_a_finished_proxy_tab_opens_the_saved_trace_instead_of_saving_again(
    qtbot: Any, window: MainWindow, upstream: FakeUpstream, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(tmp_path / "rt"))
    upstream.script(Reply(text="done, nothing more to do"))
    manager = window.proxy_manager
    save = tmp_path / "out" / "kept.loom.json"
    with qtbot.waitSignal(manager.attached, timeout=WAIT) as blocker:
        manager.launch(ProxySpec(target=upstream.url, save=str(save)))
    entry = blocker.args[0]
    client = anthropic.Anthropic(
        base_url=str(entry.info["url"]), api_key="sk-ant-test", max_retries=0, timeout=CLIENT_S
    )
    client.messages.create(
        model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
    )
    live = entry.view.live
    qtbot.waitUntil(lambda: entry.view.model.rowCount() >= 1, timeout=WAIT)
    manager.stop()
    qtbot.waitUntil(lambda: live.status in ENDED, timeout=WAIT)
    assert save.is_file() and live.status == FINISHED, live.status
    assert live.bar.save.isHidden()  # no "Run finished — save as trace…"
    button = live.bar.findChild(QPushButton, "proxy_trace")
    assert button is not None and button.isVisible()
    assert button.text() == "Trace saved by the proxy: kept.loom.json — Open"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.current().path == str(save), timeout=WAIT)
