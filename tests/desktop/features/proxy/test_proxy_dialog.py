"""Proxy ▸ Start… and Stop as a user meets them: fresh dialogs, rules checked before Start,
and a Stop that says what it did (also when nothing was running).

The real window and its menu actions; the launch itself is recorded instead of spawning a
proxy (the spawned proxy is covered by ``test_proxy_start.py``). Attach… lists a real
proxy with a shield running on the test rig, found by its token file.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from loom_core.proxy.running_proxies import FoundProxy
from loom_desktop.features.proxy.attach_dialog import describe
from loom_desktop.features.proxy.info_dock import ProxyInfoDock
from loom_desktop.features.proxy.launcher import ProxySpec
from loom_desktop.features.proxy.start_dialog import StartProxyDialog
from loom_desktop.main_window import MainWindow
from tests.core.proxy.decisions import SHIELD
from tests.core.proxy.harness import start_rig
from tests.core.proxy.test_control_client import loom_proxy  # noqa: F401 (fixture)


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
    qtbot, window: MainWindow, launched: list[ProxySpec]
) -> None:
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
        (["deploy*"], ["after Read(*.env*): deny WebFetch*"], "http://127.0.0.1:9000")
    ]
    assert launched[0].args("r.json")[-2:] == ["--rule", "after Read(*.env*): deny WebFetch*"]
    third = window.proxy_manager.start_dialog()  # starts from what was started
    assert (third.confirm.text(), third.custom.text(), third.deny.text()) == (
        "deploy*",
        "http://127.0.0.1:9000",
        "",
    )
    assert third.spec() == launched[0]
    third.confirm.setText("rm*")
    third.reject()
    assert window.proxy_manager.start_dialog().confirm.text() == "deploy*"


@pytest.mark.parametrize(
    "field, text, cause",
    [
        ("rules", "after Read(*.env*) deny WebFetch*", "sequence rule"),
        ("rules", "after Read: erase everything", "'deny <glob>' or 'confirm <glob>'"),
        ("deny", "Bash(*rm -rf*", "unbalanced parentheses"),
        ("confirm", "deploy[prod", "unclosed '['"),
        ("allow", "cap:secrets", "'secrets' is not a capability"),
        ("otlp", "ftp://collector", "OpenTelemetry endpoint: not an http(s) URL"),
    ],
)
def test_a_malformed_rule_is_named_and_not_started(
    qtbot, window: MainWindow, launched: list[ProxySpec], field: str, text: str, cause: str
) -> None:
    dialog = window.proxy_manager.start_dialog()
    getattr(dialog, field).setText(text)
    assert cause in dialog.problem.text() and not dialog.start_btn.isEnabled()
    assert cause in dialog.start_btn.toolTip()
    dialog.accept()  # Enter: refused as well
    assert launched == [] and dialog.isVisible()
    getattr(dialog, field).setText("")
    assert dialog.problem.text() == "" and dialog.start_btn.isEnabled()
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Cancel).click()


def test_spans_to_a_team_backend_become_the_proxy_flags(qtbot) -> None:
    from loom_core.cli.entry import build_parser
    from loom_core.proxy.config import config_from_args

    dialog = StartProxyDialog()
    qtbot.addWidget(dialog)
    dialog.otlp.setText(" http://127.0.0.1:4318 ")
    dialog.otlp_content.setChecked(True)
    assert dialog.update_preview() == ""
    args = dialog.spec().args("ready.json")
    assert args[-3:] == ["--otlp-endpoint", "http://127.0.0.1:4318", "--otlp-content"]
    config = config_from_args(build_parser().parse_args(args))  # what the proxy will run
    assert (config.otlp_endpoint, config.otlp_content) == ("http://127.0.0.1:4318", True)
    again = StartProxyDialog(last=dialog.spec())
    qtbot.addWidget(again)
    assert (again.otlp.text(), again.otlp_content.isChecked()) == ("http://127.0.0.1:4318", True)


def test_valid_capability_and_literal_bracket_pass(qtbot) -> None:
    dialog = StartProxyDialog()
    qtbot.addWidget(dialog)
    dialog.deny.setText("cap:secret; Read(*[[]draft]*)")
    assert dialog.problem.text() == "" and dialog.start_btn.isEnabled()


def test_stop_with_nothing_running_says_so(qtbot, window: MainWindow) -> None:
    _menu_action(window, "Stop").trigger()
    assert "no proxy started here is running" in window.statusBar().currentMessage()


def test_attach_lists_the_running_proxies(
    qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "rt"
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(runtime))
    with start_rig(tmp_path, shield=SHIELD) as rig:
        with socket.create_server(("127.0.0.1", 0)) as gone:
            stale = int(gone.getsockname()[1])
        (runtime / f"{stale}.token").write_text("0" * 32)  # a crashed proxy's leftover
        dialog = window.attach_dialog()
        qtbot.waitUntil(lambda: dialog.list.count() == 1, timeout=10_000)
        line = dialog.list.item(0).text()
        assert line.startswith(f"127.0.0.1:{rig.proxy.port} · since ")
        assert "Loom proxy started outside the app" in line
        assert "python -m loom_core proxy" in dialog.list.item(0).toolTip()
        assert dialog.port() == rig.proxy.port and "1 proxy with a shield" in dialog.status.text()
        if os.environ.get("LOOM_SHOTS"):
            dialog.grab().save(os.path.join(os.environ["LOOM_SHOTS"], "attach.png"))
        dialog.attach_btn.click()
        [connection] = window.proxies
        assert connection.client.port == rig.proxy.port
        qtbot.waitUntil(lambda: connection.mode == "stream", timeout=10_000)
        again = window.attach_dialog()  # the same proxy again: said, not doubled
        qtbot.waitUntil(lambda: again.list.count() == 1, timeout=10_000)
        assert again.list.item(0).text().endswith(" · attached")
        again.attach_btn.click()
        assert (
            len(window.proxies) == 1 and "already attached" in window.statusBar().currentMessage()
        )
        window.close()  # stops the event-stream reader before the proxy goes


def test_attach_with_nothing_running_says_so(
    qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(tmp_path / "rt"))
    dialog = window.attach_dialog()
    qtbot.waitUntil(
        lambda: "no proxy with a shield is running" in dialog.status.text(), timeout=10_000
    )
    assert dialog.list.count() == 0 and dialog.port() == 8788
    dialog.reject()


def test_a_proxy_started_here_is_named_with_its_recording() -> None:
    found = FoundProxy(8790, Path("/rt/8790.token"), 0.0)
    line = describe(found, {8790: {"save": "/runs/s.loom.json", "started_by": "app"}}, {8790})
    assert "started by Loom Desktop, recording to /runs/s.loom.json" in line
    assert line.endswith(" · attached")


def test_loom_harness_proxy_is_named_for_what_it_is(qtbot, window: MainWindow, loom_proxy) -> None:  # noqa: F811
    """Regression: Attach called every proxy it had not started "another proxy (e.g. loom
    proxy)", our own CLI proxy included; loom-harness's has no event stream to say hello."""
    port, _upstream, _lt = loom_proxy
    dialog = window.attach_dialog()
    qtbot.waitUntil(lambda: dialog.list.count() == 1, timeout=10_000)
    line = dialog.list.item(0).text()
    assert line.startswith(f"127.0.0.1:{port} · ") and "loom-harness's proxy (loom proxy)" in line
    dialog.reject()


def test_start_proposes_the_runs_folder_not_the_current_directory(
    qtbot, runs_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: Start proposed ``./session.loom.json``: a checkout, when run from one."""
    monkeypatch.chdir(tmp_path)
    dialog = StartProxyDialog()
    qtbot.addWidget(dialog)
    assert Path(dialog.save.text()) == runs_dir / "session.loom.json"
    runs_dir.mkdir(parents=True, exist_ok=True)
    (runs_dir / "session.loom.json").write_text("{}")  # that recording exists now
    again = StartProxyDialog(last=dialog.spec())
    qtbot.addWidget(again)
    assert Path(again.save.text()) == runs_dir / "session-2.loom.json"  # never a replace


def test_start_never_proposes_the_save_of_a_proxy_still_recording(qtbot, runs_dir: Path) -> None:
    """Regression: while the first proxy records, only its journal exists (its trace is
    written at the end), and the next Start proposed the same path: two proxies, one run."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    first = StartProxyDialog()
    qtbot.addWidget(first)
    (runs_dir / "session.journal.jsonl").write_text("")  # the first proxy's, as it records
    again = StartProxyDialog(last=first.spec())
    qtbot.addWidget(again)
    assert Path(again.save.text()) == runs_dir / "session-2.loom.json"


@pytest.mark.parametrize(
    ("target", "names"),
    [
        ("https://api.openai.com", ["OPENAI_BASE_URL"]),
        ("https://api.anthropic.com", ["ANTHROPIC_BASE_URL"]),
        ("http://127.0.0.1:9000", ["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"]),
    ],
)
def test_the_proxy_dock_shows_the_export_lines_its_upstream_needs(
    qtbot, target: str, names: list[str]
) -> None:
    """Regression: an OpenAI upstream got only ``ANTHROPIC_BASE_URL`` (the CLI prints both)."""
    dialog = StartProxyDialog()
    qtbot.addWidget(dialog)
    dialog.target.setCurrentText("Custom URL")
    dialog.custom.setText(target)
    info = {"host": "127.0.0.1", "port": 8790, "url": "http://127.0.0.1:8790", "target": target}
    dock = ProxyInfoDock(info, dialog.spec().dialect)
    qtbot.addWidget(dock)
    assert [line.split("=")[0].removeprefix("export ") for line in dock.lines] == names
    assert all(line.endswith("/v1") for line in dock.lines if "OPENAI" in line)
    assert dock.export_label.text() == "\n".join(dock.lines)
