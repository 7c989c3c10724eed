"""Which app owns a proxy it started: the ``<id>.app.json`` beside the proxy's ready file.

Why: a proxy outlives an app that crashed, and the next app re-attaches it (and then
stops it when it closes). But any second window used to do that, and it also took
the proxies of an app that was still running: ``loom-desktop --screenshot`` made a
window, re-attached the running demo's proxy, closed, and so stopped it with SIGTERM
while its call was held (the sidecar's ``stopped_by`` named the screenshot process).
The app that starts a proxy writes its own pid here as ``owner`` (and, where ``/proc``
tells it, the process's start time, so a pid reused by another program is not taken
for the app); a proxy is taken over only when that process is gone.

File: ``{"dialect": "anthropic", "confirm_timeout": 120, "owner": 1234,
"owner_start": "98765"}`` (files from before ``owner`` existed have none and are
taken over as before).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def meta_path(ready_file: Path) -> Path:
    return ready_file.with_name(ready_file.name.replace(".ready.json", ".app.json"))


def started(pid: int) -> str | None:
    """When ``pid`` started (clock ticks after boot, from ``/proc``), or None where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None  # field 22 of proc(5), after the name


def write_meta(ready_file: Path, meta: dict[str, Any]) -> None:
    """Write ``meta`` with this process as the owner (losing it only loses the countdown)."""
    owner = {"owner": os.getpid(), "owner_start": started(os.getpid())}
    try:
        meta_path(ready_file).write_text(json.dumps({**meta, **owner}))
    except OSError:
        pass


def read_meta(ready_file: Path) -> dict[str, Any]:
    try:
        meta = json.loads(meta_path(ready_file).read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def owned_by_a_live_app(meta: dict[str, Any]) -> bool:
    """Whether the app that started the proxy still runs (this one included)."""
    owner = meta.get("owner")
    if not isinstance(owner, int) or isinstance(owner, bool) or owner <= 0:
        return False
    if owner == os.getpid():
        return True  # started by this app: another window of it has it
    try:
        os.kill(owner, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive, another user's
        return True
    then, now = meta.get("owner_start"), started(owner)
    return then is None or now is None or then == now  # else the pid was reused


def orphan_metas(folder: Path) -> list[Path]:
    """Meta files whose proxy's ready file is gone."""
    if not folder.is_dir():
        return []
    return [
        m
        for m in folder.glob("*.app.json")
        if not m.with_name(m.name.replace(".app.json", ".ready.json")).exists()
    ]
