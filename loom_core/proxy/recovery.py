"""A session that crashed: refuse to clobber its trace, and recover it from its sidecar.

Why apart from :mod:`.session`: these run once, when a proxy starts with a ``--save``
a previous proxy used. A session that ended cleanly wrote its trace and then the
sidecar's end marker (:meth:`.session.RecordingSession.close`); one without the marker
(``kill -9``, a power cut, a trace that could not be written) is rebuilt from the
sidecar into ``<base>.recovered.loom.json`` (loom-format.md §6.6) before anything is
overwritten.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from loom_core.formats.save import save_dict
from loom_core.formats.wire import WireRecorder
from loom_core.proxy.config import SessionPaths
from loom_core.proxy.save_lock import in_use
from loom_core.proxy.sidecar import read_sidecar


def check_save(paths: SessionPaths, force: bool) -> None:
    """ValueError when ``--save`` names an existing trace, unless ``force``: a new session
    would replace it. A crashed session's trace is the exception: recovery first saves
    its exchanges aside (``.recovered``), so restarting with the same ``--save`` loses nothing.
    A session a running proxy still records is refused even with ``force``."""
    if in_use(paths.exchanges):
        raise ValueError(
            f"{paths.save}: a running proxy is recording to it; nothing was written "
            "(choose another --save, or stop that proxy first)"
        )
    if force or not paths.save.exists() or _crashed(paths):
        return
    raise ValueError(
        f"{paths.save}: already exists; nothing was written (pass --force to "
        "replace it, or choose another --save)"
    )


def _crashed(paths: SessionPaths) -> bool:
    try:
        previous = read_sidecar(paths.exchanges) if paths.exchanges.exists() else None
    except OSError:
        return False
    return previous is not None and not previous.ended and bool(previous.exchanges)


def recover_previous(paths: SessionPaths) -> Path | None:
    """A crashed session with the same ``--save`` -> ``<base>.recovered.loom.json``."""
    if not paths.exchanges.exists():
        return None
    try:
        previous = read_sidecar(paths.exchanges)
    except OSError:
        return None
    if previous.ended or not previous.exchanges:
        return None
    recorder = WireRecorder()
    for x in previous.exchanges:
        with contextlib.suppress(TypeError, AttributeError, KeyError, IndexError, ValueError):
            recorder.record(x.request, x.response, x.shield_events)
    target = _unused(paths.recovered)
    save_dict(recorder.to_trace(), target)
    print(
        f"loom: recovered a crashed session's {len(recorder.wire)} exchange(s) -> {target}",
        file=sys.stderr,
        flush=True,
    )
    return target


def _unused(path: Path) -> Path:
    """``path``, or ``name-2``, ``name-3``… when it exists (never clobber a recovery)."""
    if not path.exists():
        return path
    stem, suffix = (
        (str(path)[: -len(".loom.json")], ".loom.json")
        if str(path).endswith(".loom.json")
        else (str(path), "")
    )
    for i in range(2, 10_000):
        candidate = Path(f"{stem}-{i}{suffix}")
        if not candidate.exists():
            return candidate
    raise FileExistsError(path)


def safe_url(url: str) -> str:
    """The target without userinfo or query (they may hold credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
