"""The approvals panel attached to loom-harness's real ``loom proxy --confirm``: click to decide."""

from __future__ import annotations

import json
from typing import Any

import pytest
from PySide6.QtCore import Qt

from loom_core.proxy.control_client import PendingCall
from loom_desktop.features.proxy.approvals_model import ApprovalsModel
from loom_desktop.main_window import MainWindow
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import NEVER_S
from tests.core.proxy.test_control_client import _ask, loom_proxy  # noqa: F401 (fixture)


def test_approvals_model_passes_modeltester(qtmodeltester) -> None:
    model = ApprovalsModel()
    model.update([PendingCall(id="a1", tool="deploy", input={"env": "prod"}, rule="deploy*")])
    qtmodeltester.check(model)
    new = model.update(
        [
            PendingCall(id="a1", tool="deploy", age_s=3),
            PendingCall(id="b2", tool="rm", input={}, rule="rm*"),
        ]
    )
    assert [c.id for c in new] == ["b2"] and model.rowCount() == 2
    model.update([PendingCall(id="b2", tool="rm")])
    qtmodeltester.check(model)
    assert [c.id for c in model.calls] == ["b2"]


def _held(qtbot, panel) -> PendingCall:
    qtbot.waitUntil(lambda: panel.current() is not None, timeout=15_000)
    return panel.current()


@pytest.mark.parametrize("how", ["approve", "deny", "edit"])
def test_click_to_decide(qtbot, window: MainWindow, loom_proxy, how: str) -> None:  # noqa: F811
    port, upstream, _lt = loom_proxy
    upstream.script(Reply(text="ok", calls=[("t1", "deploy", {"env": "prod"})]))
    panel = window.attach_proxy(port, confirm_timeout=NEVER_S)
    out: list[Any] = []
    thread = _ask(port, out)
    call = _held(qtbot, panel)
    assert call.tool == "deploy" and json.loads(panel.args.toPlainText()) == {"env": "prod"}
    assert "denied automatically in" in panel.countdown.text()
    if how == "approve":
        qtbot.keyClick(panel.list, Qt.Key.Key_A)
    elif how == "deny":
        panel.reason.setText("not on a Friday")
        qtbot.mouseClick(panel.deny_btn, Qt.MouseButton.LeftButton)
    else:
        qtbot.keyClick(panel.list, Qt.Key.Key_E)
        panel.args.setPlainText("{not json")
        panel.approve()
        assert "not valid JSON" in panel.problem.text()
        panel.args.setPlainText('{"env": "staging"}')
        qtbot.mouseClick(panel.approve_btn, Qt.MouseButton.LeftButton)
    thread.join(20)
    assert out, "the agent's request never completed"
    uses = [b for b in out[0].content if b.type == "tool_use"]
    assert bool(uses) is (how != "deny")
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0, timeout=10_000)


def test_attach_to_nothing_reports_the_error(qtbot, window: MainWindow) -> None:
    from tests.core.proxy.test_control_client import _free_port

    panel = window.attach_proxy(_free_port())
    qtbot.waitUntil(lambda: "no proxy answering" in panel.status.text(), timeout=10_000)
