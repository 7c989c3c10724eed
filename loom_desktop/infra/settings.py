"""Persistent settings: recent files, window geometry and splitter sizes.

One msgspec struct stored as JSON (never pickles; not pydantic, whose import
would cost every start about 90 ms before the window shows) in the platform's config
directory, or ``$LOOM_DESKTOP_CONFIG_DIR`` (tests point it at a temp dir). Qt's
geometry bytes are stored base64 under a key that includes the Qt version,
because state saved by one Qt version can crash another.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import msgspec
from PySide6 import __version_info__ as qt_version
from PySide6.QtCore import QByteArray, QStandardPaths

from loom_core.formats.save import atomic_write_bytes

SCHEMA_VERSION = 1
MAX_RECENT = 12
QT_KEY = f"qt{qt_version[0]}.{qt_version[1]}"


class DesktopSettings(msgspec.Struct, kw_only=True):
    """Everything the desktop remembers between runs."""

    schema_version: int = SCHEMA_VERSION
    recent_files: list[str] = msgspec.field(default_factory=list)
    geometry: dict[str, str] = msgspec.field(default_factory=dict)  # QT_KEY -> base64
    splitters: dict[str, list[int]] = msgspec.field(default_factory=dict)
    # Settings ▸ Library…: a team library's postgresql:// URL (never with a password), or ""
    # for this computer's own; LOOM_LIBRARY_URL in the environment wins over it
    library: str = ""

    def add_recent(self, path: str) -> None:
        path = str(Path(path).resolve())
        self.recent_files = [path] + [p for p in self.recent_files if p != path][: MAX_RECENT - 1]

    def geometry_bytes(self) -> QByteArray | None:
        value = self.geometry.get(QT_KEY)
        return QByteArray(base64.b64decode(value)) if value else None

    def set_geometry(self, data: QByteArray) -> None:
        self.geometry[QT_KEY] = base64.b64encode(bytes(data.data())).decode("ascii")


def config_dir() -> Path:
    env = os.environ.get("LOOM_DESKTOP_CONFIG_DIR")
    if env:
        return Path(env)
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppConfigLocation)
    return Path(base or Path.home() / ".config" / "loom-desktop")


def settings_path() -> Path:
    return config_dir() / "settings.json"


def load_settings() -> DesktopSettings:
    """Read settings; a missing or broken file gives defaults (and is replaced on save).
    Lax (``strict=False``) as the pydantic model it replaced was: a hand-edited ``"1"`` for
    a number keeps the user's recent files and library instead of resetting them."""
    try:
        data = settings_path().read_bytes()
        return msgspec.json.decode(data, type=DesktopSettings, strict=False)
    except (OSError, msgspec.DecodeError):
        return DesktopSettings()


def save_settings(settings: DesktopSettings) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, msgspec.json.format(msgspec.json.encode(settings), indent=2))
