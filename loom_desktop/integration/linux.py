"""Install or remove, for the current user and without root, what makes ``*.loom.json`` open here.

Files go under ``$XDG_DATA_HOME`` (``~/.local/share``): the desktop entry, the
icon at every hicolor size (as the app icon and as the trace files' icon), and a
shared-mime-info package. Then the desktop's own tools refresh their databases
and ``xdg-mime default`` makes us the handler, so the desktop environment's
backend (GNOME's ``gio``, KDE's, or the generic ``mimeapps.list``) records it its
own way. A missing tool is reported and skipped: the files still help once the
tool is installed and run.

Uninstall removes exactly those files and our ``mimeapps.list`` entries, then
refreshes the databases; caches that were only there because of us are removed
too, so an install followed by an uninstall leaves no trace.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from loom_desktop.integration.description import APP, ICON_SIZES
from loom_desktop.integration.freedesktop import (
    desktop_entry,
    drop_associations,
    has_entries,
    icon_name,
    mime_package,
)
from loom_desktop.resources import resources_dir

TOOL_TIMEOUT = 60  # seconds; these tools finish in well under one
# What update-mime-database writes beside packages/; removed once no package is left.
MIME_DATABASE = (
    "XMLnamespaces",
    "aliases",
    "generic-icons",
    "globs",
    "globs2",
    "icons",
    "magic",
    "mime.cache",
    "subclasses",
    "treemagic",
    "types",
    "version",
)

Say = Callable[[str], None]


def _say(message: str) -> None:
    print(f"loom-desktop: {message}")


@dataclass(frozen=True)
class Layout:
    """Where the per-user files live (the XDG base directories, resolved once)."""

    data_home: Path
    config_home: Path

    @classmethod
    def from_env(cls) -> Layout:
        home = Path.home()
        data = os.environ.get("XDG_DATA_HOME") or str(home / ".local" / "share")
        config = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
        return cls(Path(data), Path(config))

    @property
    def applications(self) -> Path:
        return self.data_home / "applications"

    @property
    def desktop_file(self) -> Path:
        return self.applications / APP.desktop_file

    @property
    def mime_dir(self) -> Path:
        return self.data_home / "mime"

    @property
    def mime_package(self) -> Path:
        return self.mime_dir / "packages" / f"{APP.app_id}.xml"

    @property
    def hicolor(self) -> Path:
        return self.data_home / "icons" / "hicolor"

    def icon_files(self) -> dict[Path, Path]:
        """Installed icon path -> bundled source, for the app and for each document type."""
        source = resources_dir() / "icons"
        names = [("apps", APP.app_id)] + [
            ("mimetypes", icon_name(t.mime_type)) for t in APP.file_types
        ]
        files = {}
        for context, name in names:
            for size in ICON_SIZES:
                files[self.hicolor / f"{size}x{size}" / context / f"{name}.png"] = (
                    source / f"{APP.app_id}-{size}.png"
                )
            files[self.hicolor / "scalable" / context / f"{name}.svg"] = (
                source / f"{APP.app_id}.svg"
            )
        return files

    def env(self) -> dict[str, str]:
        """The environment for the tools, so they see this layout and no desktop's defaults."""
        return {
            **os.environ,
            "XDG_DATA_HOME": str(self.data_home),
            "XDG_CONFIG_HOME": str(self.config_home),
        }


def launch_command() -> list[str]:
    """How a launcher starts this very installation (absolute: launchers have a short PATH)."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    script = Path(sys.executable).absolute().with_name(APP.executable)  # console script in the venv
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [str(Path(sys.executable).absolute()), "-m", "loom_desktop"]


def _tool(args: list[str], layout: Layout, say: Say) -> bool:
    """Run one desktop tool; a missing or failing tool is reported, never fatal."""
    if shutil.which(args[0]) is None:
        say(f"{args[0]} not found (skipped); install it and run this again to refresh")
        return False
    try:
        proc = subprocess.run(
            args, env=layout.env(), capture_output=True, text=True, timeout=TOOL_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        say(f"{args[0]} took over {TOOL_TIMEOUT} s (skipped)")
        return False
    if proc.returncode != 0:
        say(f"{' '.join(args)} failed: {(proc.stderr or proc.stdout).strip()}")
    return proc.returncode == 0


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def install(layout: Layout | None = None, command: list[str] | None = None, say: Say = _say) -> int:
    """Install the desktop entry, icons and MIME type, and become the default handler."""
    layout = layout or Layout.from_env()
    for target, source in layout.icon_files().items():
        _write(target, source.read_bytes())
    _write(layout.mime_package, mime_package(APP).encode())
    _write(layout.desktop_file, desktop_entry(APP, command or launch_command()).encode())
    _refresh(layout, say)
    for file_type in APP.file_types:
        _tool(["xdg-mime", "default", APP.desktop_file, file_type.mime_type], layout, say)
    say(
        f"installed {layout.desktop_file} and {', '.join(t.glob for t in APP.file_types)} "
        f"as {', '.join(t.mime_type for t in APP.file_types)}"
    )
    return 0


def uninstall(layout: Layout | None = None, say: Say = _say) -> int:
    """Remove everything :func:`install` added, then refresh what is left."""
    layout = layout or Layout.from_env()
    added = [layout.desktop_file, layout.mime_package, *layout.icon_files()]
    for path in added:
        path.unlink(missing_ok=True)
    for mimeapps in (layout.config_home / "mimeapps.list", layout.applications / "mimeapps.list"):
        _forget_default(mimeapps)
    _refresh(layout, say)
    _drop_orphan_caches(layout)
    for path in added:
        _prune_empty_parents(path.parent, layout.data_home)
    say(f"removed {APP.desktop_file}, its icons and its MIME types")
    return 0


def _refresh(layout: Layout, say: Say) -> None:
    if layout.mime_package.parent.is_dir():  # even when empty: it drops our compiled type
        _tool(["update-mime-database", str(layout.mime_dir)], layout, say)
    if layout.applications.is_dir() and any(layout.applications.glob("*.desktop")):
        _tool(["update-desktop-database", str(layout.applications)], layout, say)
    if layout.hicolor.is_dir():
        if (layout.hicolor / "icon-theme.cache").exists():
            _tool(["gtk-update-icon-cache", "-f", "-t", "-q", str(layout.hicolor)], layout, say)
        os.utime(layout.hicolor)  # running toolkits rescan a theme dir whose mtime moved


def _drop_orphan_caches(layout: Layout) -> None:
    """Caches generated from nothing but our files: no longer describe anything."""
    packages = layout.mime_package.parent
    if not (packages.is_dir() and any(packages.iterdir())):
        for name in MIME_DATABASE:
            (layout.mime_dir / name).unlink(missing_ok=True)
        if layout.mime_dir.is_dir():
            for sub in layout.mime_dir.iterdir():  # per-media-type dirs, empty by now
                if sub.is_dir() and not any(sub.iterdir()):
                    sub.rmdir()
    if layout.applications.is_dir() and not any(layout.applications.glob("*.desktop")):
        (layout.applications / "mimeinfo.cache").unlink(missing_ok=True)


def _forget_default(mimeapps: Path) -> None:
    if not mimeapps.is_file():
        return
    text = mimeapps.read_text(encoding="utf-8")
    kept = drop_associations(text, APP.desktop_file, {t.mime_type for t in APP.file_types})
    if kept == text:
        return
    if has_entries(kept):
        _write(mimeapps, kept.encode("utf-8"))
    else:
        mimeapps.unlink()


def _prune_empty_parents(directory: Path, stop: Path) -> None:
    """Remove ``directory`` and its parents while empty, never ``stop`` or above."""
    while directory != stop and stop in directory.parents:
        if directory.exists():
            try:
                directory.rmdir()
            except OSError:  # not empty: leave it and everything above
                return
        directory = directory.parent
