"""Reveal in Folder says so when no file manager can show the folder (it failed silently:
Qt reports success once ``xdg-open`` started, and ``xdg-open`` then found nothing)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QWidget

from loom_desktop.infra.reveal import Revealer

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="xdg-utils")


def fake_xdg(bin_dir: Path, default_app: str) -> None:
    """``xdg-open`` and an ``xdg-mime`` that answers ``default_app`` for folders."""
    bin_dir.mkdir()
    for name, body in (("xdg-open", "exit 3"), ("xdg-mime", f"echo '{default_app}'")):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What would have been handed to the file manager (nothing really opens in a test)."""
    calls: list[str] = []
    monkeypatch.setattr(
        QDesktopServices,
        "openUrl",
        staticmethod(lambda url: calls.append(url.toLocalFile()) or True),
    )
    return calls


def test_no_file_manager_is_said_with_the_folder(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    fake_xdg(tmp_path / "bin", "")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    owner = QWidget()
    qtbot.addWidget(owner)
    revealer = Revealer(owner)
    revealer.reveal(str(tmp_path / "runs" / "demo.loom.json"))
    qtbot.waitUntil(lambda: bool(revealer.told), timeout=10_000)
    assert "no application is set to open folders" in revealer.told[0]
    assert str(tmp_path / "runs") in revealer.told[0] and opened == []


def test_a_file_manager_gets_the_folder(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    fake_xdg(tmp_path / "bin", "org.gnome.Nautilus.desktop")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    owner = QWidget()
    qtbot.addWidget(owner)
    revealer = Revealer(owner)
    revealer.reveal(str(tmp_path / "runs" / "demo.loom.json"))
    qtbot.waitUntil(lambda: bool(opened), timeout=10_000)
    assert opened == [str(tmp_path / "runs")] and revealer.told == []
