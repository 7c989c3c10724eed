"""The rates of the models already priced, kept on disk so a start needs no ``genai-prices``.

Why: importing ``genai_prices`` costs about 60 ms (its snapshot's classes, and an HTTP
client for the updater we never start), and the first screen of a run pays it for its Cost
column. The rates of a model are a few numbers, the same for a given ``genai-prices``
release on a given day: once worked out they are written here, and a later process prices
the same model from this file alone.

What is kept must price exactly as the database would, so an entry says when it holds:
- a model whose price never changes (one price in the snapshot), or that the snapshot does
  not know: as long as the ``genai-prices`` release is the same;
- a model whose price starts on a date (a price change): for the UTC day it was read on,
  the granularity at which ``genai-prices`` switches such prices;
- a model priced by the time of day (off-peak rates): never kept.
A file from another release, or one that cannot be read, is ignored and rewritten. Writes
are atomic (temp file, rename): a crash leaves the old file or the new one.

``LOOM_DESKTOP_PRICE_CACHE`` names the file (tests: a temp dir).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from loom_core.runs_dir import app_cache_home

ENV = "LOOM_DESKTOP_PRICE_CACHE"
FORMAT = 1
ALWAYS = ""  # an entry's day when it holds for the whole release
MISSING: Any = object()  # lookup: nothing kept for the model (None is "not in the database")

_lock = threading.Lock()  # the loader's thread and the GUI's may both price a first model
_loaded: dict[str, Any] | None = None


def cache_path() -> Path:
    """The file (not created here: :func:`store` creates it)."""
    env = os.environ.get(ENV)
    return Path(env).expanduser() if env else app_cache_home() / "prices.json"


def _read(release: str) -> dict[str, Any]:
    """The kept entries of ``release`` (none when the file is missing, broken or older)."""
    try:
        data = json.loads(cache_path().read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    if data.get("genai_prices") != release or not isinstance(data.get("models"), dict):
        return {}
    models: dict[str, Any] = data["models"]
    return models


def _models(release: str) -> dict[str, Any]:
    global _loaded
    if _loaded is None or _loaded.get("release") != release:
        _loaded = {"release": release, "models": _read(release)}
    models: dict[str, Any] = _loaded["models"]
    return models


def lookup(model: str, release: str, day: str) -> Any:
    """The kept value of ``model`` (a rates dict, or None: not in the database) when it
    holds on ``day``; :data:`MISSING` otherwise."""
    with _lock:
        entry = _models(release).get(model)
    if not isinstance(entry, dict) or entry.get("day") not in (ALWAYS, day):
        return MISSING
    return entry.get("rates")


def store(model: str, release: str, day: str | None, rates: dict[str, Any] | None) -> None:
    """Keep ``rates`` of ``model`` (``day``: :data:`ALWAYS`, the day they hold on, or None:
    not to be kept). A file that cannot be written only costs the next start the import."""
    if day is None:
        return
    from loom_core.formats.save import atomic_write_bytes

    with _lock:
        models = _models(release)
        models.update(_read(release))  # what another process kept meanwhile
        models[model] = {"day": day, "rates": rates}
        payload = {"format": FORMAT, "genai_prices": release, "models": models}
        path = cache_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, json.dumps(payload, indent=1, sort_keys=True).encode())
        except OSError:
            pass


def forget() -> None:
    """Drop what this process read (tests that point :data:`ENV` elsewhere)."""
    global _loaded
    with _lock:
        _loaded = None


def release(package: str = "genai_prices") -> str:
    """The installed version of ``package`` (the release the kept rates are keyed by), read
    from the ``Version:`` line of its ``.dist-info/METADATA`` beside it.

    Why not ``importlib.metadata.version``: importing ``importlib.metadata`` (and the
    ``email`` parser it brings) cost every start about 30 ms of CPU before a run's first
    rows. Where the package's files are laid out otherwise (a frozen app) it is the answer.
    """
    from importlib.util import find_spec

    spec = find_spec(package)
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    found = [d for p in places for d in Path(p).parent.glob(f"{package}-*.dist-info")]
    if len(found) == 1:
        try:
            with open(found[0] / "METADATA", encoding="utf-8") as f:
                for line in f:
                    if line.startswith("Version:"):
                        return line.split(":", 1)[1].strip()
                    if not line.strip():
                        break  # the end of the headers
        except OSError:
            pass
    from importlib.metadata import version

    return version(package)
