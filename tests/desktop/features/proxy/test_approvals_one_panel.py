"""One approvals panel lists every proxy's held calls, and a/d/e work anywhere in the window.

Regression: two proxies gave two docks titled "Approvals — prox…"; the one in view said
"no held calls" while the status bar said a call was held. And a/d/e worked only when
the held-call list had focus. Real parts: two of our proxies in-process (each a rig with
a fake upstream and a shield), the real ``anthropic`` SDK as agents, the real window.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from loom_core.proxy.config import ShieldFlags
from loom_desktop.dialogs import show_shortcuts
from loom_desktop.features.proxy.approvals_panel import ApprovalsPanel
from loom_desktop.main_window import MainWindow
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import NEVER_S, Rig, start_rig
from tests.desktop.features.proxy.test_proxy_events import WAIT_MS, ask

SHIELD = ShieldFlags(confirm=["deploy*"], confirm_timeout=NEVER_S)


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


@pytest.fixture
def rigs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Rig, Rig]]:
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(tmp_path / "rt"))
    first = start_rig(_folder(tmp_path / "a"), shield=SHIELD)
    try:
        second = start_rig(_folder(tmp_path / "b"), shield=SHIELD)
        try:
            yield first, second
        finally:
            second.close()
    finally:
        first.close()


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(2, thread_name_prefix="sdk-agent") as p:
        yield p


@pytest.fixture(autouse=True)
def _no_reader_threads() -> Iterator[None]:
    yield
    left = [t.name for t in threading.enumerate() if t.name.startswith("loom-proxy-events")]
    assert not left, f"event-stream readers outlived the test: {left}"


def _deploy(rig: Rig, env: str) -> None:
    rig.upstream.script(Reply(text="", calls=[("t", "deploy", {"env": env})]))


def test_two_proxies_share_one_panel_that_names_each_calls_proxy(
    qtbot, window: MainWindow, rigs: tuple[Rig, Rig], pool: ThreadPoolExecutor
) -> None:
    a, b = rigs
    panel = window.attach_proxy(a.proxy.port, confirm_timeout=NEVER_S)
    assert window.attach_proxy(b.proxy.port, confirm_timeout=NEVER_S) is panel
    assert window.findChildren(ApprovalsPanel) == [panel] and panel.windowTitle() == "Approvals"
    assert f"proxy 127.0.0.1:{a.proxy.port}" in panel.sources.text()
    assert f"proxy 127.0.0.1:{b.proxy.port}" in panel.sources.text()
    _deploy(a, "from-a")
    _deploy(b, "from-b")
    answers = [ask(a, pool, "ship"), ask(b, pool, "ship")]
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=WAIT_MS)
    assert panel.status.text() == "2 held call(s) from 2 proxies"
    told = window.statusBar().currentMessage()  # checked once both calls are answered
    rows = {panel.model.calls[r].input["env"]: panel.model.index(r).data() for r in range(2)}
    assert rows["from-a"].endswith(f"\n    from proxy 127.0.0.1:{a.proxy.port}")
    assert rows["from-b"].endswith(f"\n    from proxy 127.0.0.1:{b.proxy.port}")
    row_b = next(r for r in range(2) if panel.model.calls[r].input["env"] == "from-b")
    panel.list.setCurrentIndex(panel.model.index(row_b))
    assert f"on proxy 127.0.0.1:{b.proxy.port}" in panel.title.text()
    panel.deny()  # goes to b's proxy, not a's
    reply_b = answers[1].result(15)
    assert not [x for x in reply_b.content if x.type == "tool_use"]
    qtbot.waitUntil(lambda: panel.status.text().endswith("1 held call(s)"), timeout=WAIT_MS)
    assert panel.model.rowCount() == 1 and panel.current().input == {"env": "from-a"}
    panel.approve()
    reply_a = answers[0].result(15)
    assert [x.type for x in reply_a.content] == ["tool_use"]
    qtbot.waitUntil(lambda: panel.status.text().endswith("no held calls"), timeout=WAIT_MS)
    assert told == "2 calls held for approval"  # as the panel said, not "1 call" (the newest)
    window.attached.detach(window.proxies[-1])  # one proxy goes: the panel stays for the other
    assert panel.isVisible() and len(panel.connections) == 1
    window.attached.detach(window.proxies[-1])
    assert not panel.isVisible()


@pytest.mark.parametrize("key", ["a", "d", "e"])
def test_a_d_e_work_from_anywhere_while_a_call_is_held(
    qtbot,
    window: MainWindow,
    rigs: tuple[Rig, Rig],
    pool: ThreadPoolExecutor,
    open_and_wait,
    sample: Path,
    key: str,
) -> None:
    a, _b = rigs
    view = open_and_wait(window, sample)
    panel = window.attach_proxy(a.proxy.port, confirm_timeout=NEVER_S)
    _deploy(a, "prod")
    answer = ask(a, pool, "ship")
    qtbot.waitUntil(lambda: panel.current() is not None, timeout=WAIT_MS)
    window.activateWindow()
    view.filter_box.setFocus()
    qtbot.keyClick(view.filter_box, key)  # typing in a text box still types
    assert view.filter_box.text() == key and panel.model.rowCount() == 1
    view.table.setFocus()  # the run's step list, far from the panel
    qtbot.keyClick(view.table, key)
    if key == "e":
        assert panel.editing and panel.args.hasFocus()  # the arguments, ready to edit
        panel.args.setPlainText('{"env": "staging"}')
        qtbot.mouseClick(panel.approve_btn, Qt.MouseButton.LeftButton)
    reply = answer.result(15)
    uses = [x for x in reply.content if x.type == "tool_use"]
    if key == "d":
        assert not uses
    else:
        assert uses[0].input == ({"env": "staging"} if key == "e" else {"env": "prod"})
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0, timeout=WAIT_MS)
    assert not any(sc.isEnabled() for sc in panel.keys)  # nothing held: the letters are free


def test_the_shortcut_sheet_says_the_keys_work_anywhere_while_a_call_is_held(
    qtbot, window: MainWindow
) -> None:
    box = show_shortcuts(window)
    qtbot.waitUntil(box.isVisible)
    assert "While a call is held: anywhere in the window" in box.text()
    box.close()


def test_a_followed_proxy_that_stops_is_no_longer_listed(
    qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: a proxy started in a shell, attached, then stopped there stayed under
    "watching" with "no proxy answering … Connection refused" for as long as the app ran."""
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(tmp_path / "rt"))
    with start_rig(_folder(tmp_path / "a"), shield=SHIELD) as rig:
        port = rig.proxy.port
        panel = window.attach_proxy(port, confirm_timeout=NEVER_S)
        [connection] = window.proxies
        qtbot.waitUntil(lambda: connection.mode == "stream", timeout=WAIT_MS)
    # stopped cleanly: its token file is gone, nothing answers on its port
    qtbot.waitUntil(lambda: not window.proxies, timeout=WAIT_MS)
    assert not panel.isVisible() and not panel.connections
    assert window.statusBar().currentMessage() == (
        f"proxy 127.0.0.1:{port} stopped; no longer following it"
    )
