"""The window's settings file: what a user's hand edit keeps and what resets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loom_desktop.infra.settings import DesktopSettings, load_settings, save_settings


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOOM_DESKTOP_CONFIG_DIR", str(tmp_path))
    return tmp_path / "settings.json"


def test_saved_settings_read_back(config: Path) -> None:
    settings = DesktopSettings(library="postgresql://db.example/runs")
    settings.add_recent(str(config.parent / "a.loom.json"))
    settings.splitters["main"] = [300, 700]
    save_settings(settings)
    assert load_settings() == settings


def test_a_number_written_as_text_keeps_the_other_settings(config: Path) -> None:
    config.write_text(
        json.dumps({"schema_version": "1", "recent_files": ["/r/a.loom.json"],
                    "splitters": {"main": ["300", 700]}, "library": "postgresql://h/db"}),
        encoding="utf-8",
    )  # fmt: skip
    settings = load_settings()
    assert settings.schema_version == 1 and settings.recent_files == ["/r/a.loom.json"]
    assert settings.splitters == {"main": [300, 700]} and settings.library == "postgresql://h/db"


@pytest.mark.parametrize("text", ["{not json", "[]", '{"recent_files": 5}'])
def test_a_broken_file_gives_defaults(config: Path, text: str) -> None:
    config.write_text(text, encoding="utf-8")
    assert load_settings() == DesktopSettings()
