"""Proxy ▸ Start… and Stop as a user meets them: fresh dialogs, rules checked before Start,
and a Stop that says what it did (also when nothing was running).

The real window and its menu actions; the launch itself is recorded instead of spawning a
proxy (the spawned proxy is covered by ``test_proxy_start.py``).
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from loom_desktop.dialogs_proxy import StartProxyDialog
from loom_desktop.main_window import MainWindow
from loom_desktop.proxy_launcher import ProxySpec


@pytest.fixture
def launched(window: MainWindow, monkeypatch: pytest.MonkeyPatch) -> list[ProxySpec]:
    specs: list[ProxySpec] = []
    monkeypatch.setattr(window.proxy_manager, "launch", specs.append)
    return specs


def _menu_action(window: MainWindow, text: str) -> Any:
    for menu_action in window.menuBar().actions():
        for action in menu_action.menu().actions():
            if action.text().replace("&", "") == text:
                return action
    raise AssertionError(f"no menu item {text!r}")


def test_a_cancelled_dialog_leaves_nothing_and_a_started_one_is_remembered(
        qtbot, window: MainWindow, launched: list[ProxySpec]) -> None:
    dialog = window.proxy_manager.start_dialog()
    dialog.deny.setText("Bash(*rm -rf*)")
    dialog.rules.setText("after Read(*.env*): deny WebFetch*")
    dialog.reject()
    again = window.proxy_manager.start_dialog()
    assert again is not dialog
    assert (again.deny.text(), again.rules.text()) == ("", "")
    again.confirm.setText("deploy*")
    again.target.setCurrentText("Custom URL")
    again.custom.setText("http://127.0.0.1:9000")
    again.rules.setText("after Read(*.env*): deny WebFetch*")
    again.start_btn.click()
    assert [(s.confirm, s.rules, s.target) for s in launched] == [
        (["deploy*"], ["after Read(*.env*): deny WebFetch*"], "http://127.0.0.1:9000")]
    assert launched[0].args("r.json")[-2:] == ["--rule", "after Read(*.env*): deny WebFetch*"]
    third = window.proxy_manager.start_dialog()  # starts from what was started
    assert (third.confirm.text(), third.custom.text(), third.deny.text()) == (
        "deploy*", "http://127.0.0.1:9000", "")
    assert third.spec() == launched[0]
    third.confirm.setText("rm*")
    third.reject()
    assert window.proxy_manager.start_dialog().confirm.text() == "deploy*"


@pytest.mark.parametrize("field, text, cause", [
    ("rules", "after Read(*.env*) deny WebFetch*", "sequence rule"),
    ("rules", "after Read: erase everything", "'deny <glob>' or 'confirm <glob>'"),
    ("deny", "Bash(*rm -rf*", "unbalanced parentheses"),
    ("confirm", "deploy[prod", "unclosed '['"),
    ("allow", "cap:secrets", "'secrets' is not a capability"),
])
def test_a_malformed_rule_is_named_and_not_started(qtbot, window: MainWindow,
                                                   launched: list[ProxySpec], field: str,
                                                   text: str, cause: str) -> None:
    dialog = window.proxy_manager.start_dialog()
    getattr(dialog, field).setText(text)
    assert cause in dialog.problem.text() and not dialog.start_btn.isEnabled()
    assert cause in dialog.start_btn.toolTip()
    dialog.accept()  # Enter: refused as well
    assert launched == [] and dialog.isVisible()
    getattr(dialog, field).setText("")
    assert dialog.problem.text() == "" and dialog.start_btn.isEnabled()
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Cancel).click()


def test_valid_capability_and_literal_bracket_pass(qtbot) -> None:
    dialog = StartProxyDialog()
    qtbot.addWidget(dialog)
    dialog.deny.setText("cap:secret; Read(*[[]draft]*)")
    assert dialog.problem.text() == "" and dialog.start_btn.isEnabled()


def test_stop_with_nothing_running_says_so(qtbot, window: MainWindow) -> None:
    _menu_action(window, "Stop").trigger()
    assert "no proxy started here is running" in window.statusBar().currentMessage()
