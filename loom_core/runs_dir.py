"""Where generated runs go, and the rule that nothing a user has is overwritten unasked.

Why a per-user runs folder: a fork branch or a heal attempt used to land beside its
parent -- in the repository's ``resources/`` for the bundled sample (which then
listed that branch forever), in a read-only install, in someone else's folder.
Generated runs now go to the platform's per-user data folder unless the user names
another place (``-o``, ``--out-dir``, a dialog). The parent still finds its
branches there: they name it in their ``fork`` member.

``LOOM_DESKTOP_RUNS_DIR`` overrides the folder (tests point it at a temp dir).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection
from pathlib import Path

from loom_core.errors import LoadError

ENV = "LOOM_DESKTOP_RUNS_DIR"
APP = "loom-desktop"
TRACE = ".loom.json"


def data_home() -> Path:
    """The platform's per-user data folder (XDG on Linux, as Qt's AppDataLocation uses)."""
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def app_cache_home() -> Path:
    """The app's per-user cache folder: what can be made again (copies of published runs,
    the price rates already worked out), never what a user made."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / APP / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / APP
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / APP


def runs_dir() -> Path:
    """The per-user runs folder (not created here: writers create it when they write)."""
    env = os.environ.get(ENV)
    return Path(env).expanduser() if env else data_home() / APP / "runs"


def stem_of(path: str | Path) -> str:
    """``sample`` for ``…/sample.loom.json`` (any other name: without its last suffix)."""
    name = Path(path).name
    return name[: -len(TRACE)] if name.endswith(TRACE) else Path(name).stem


def free_path(
    folder: str | Path, stem: str, suffix: str = TRACE, taken: Collection[str] = ()
) -> Path:
    """``folder/stem+suffix``, else ``stem-2``, ``stem-3``…: a name no file, journal (a run in
    progress) or ``taken`` path has."""
    folder = Path(folder)
    for n in range(1, 100_000):
        path = folder / (f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
        journal = path.with_name(stem_of(path) + ".journal.jsonl")
        if str(path) not in taken and not path.exists() and not journal.exists():
            return path
    raise OSError(f"{folder}: no free name for {stem}{suffix}")


def free_dir(folder: str | Path, name: str) -> Path:
    """``folder/name``, else ``name-2``…: a directory that does not exist or is empty."""
    for n in range(1, 10_000):
        path = Path(folder) / (name if n == 1 else f"{name}-{n}")
        if not path.exists() or (path.is_dir() and not any(path.iterdir())):
            return path
    raise OSError(f"{folder}: no free directory for {name}")


def refuse_overwrite(path: str | Path, force: bool, how: str = "pass --force") -> None:
    """LoadError (the CLI's exit 2 with one line) when ``path`` exists and ``force`` is off."""
    if not force and os.path.lexists(path):
        raise LoadError(path, f"already exists; nothing was written ({how} to replace it)")
