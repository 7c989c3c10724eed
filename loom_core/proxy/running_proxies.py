"""The shielded proxies running on this machine, found by their control-token files.

Why token files: every proxy with a shield -- ours and loom-harness's ``loom proxy``
alike -- writes ``<runtime dir>/<port>.token`` when it starts and deletes it on a clean
stop (loom-format.md §7.7), so the folder names every port an operator could attach
to, with no registry of our own. A proxy that crashed leaves its file behind, so each
port is probed (a TCP connect on loopback) and only those that answer are listed.
Used by the desktop's Attach… dialog and by the ``approvals``/``approve`` commands
when no ``--port`` is given.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

PROBE_S = 0.3  # a listening loopback port answers at once; a dead one refuses at once


def runtime_dir() -> Path:
    """Where control tokens live: ``$LOOM_RUNTIME_DIR`` or ``~/.loom/proxies``."""
    return Path(os.environ.get("LOOM_RUNTIME_DIR") or Path.home() / ".loom" / "proxies")


@dataclass(frozen=True)
class FoundProxy:
    """One token file whose port answers."""

    port: int
    token_file: Path
    started: float  # the token file's mtime: when the proxy started


def _answers(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=PROBE_S):
            return True
    except OSError:
        return False


def token_files(folder: Path | None = None) -> list[tuple[int, Path, float]]:
    """``(port, path, mtime)`` of every ``<port>.token`` file, newest first."""
    folder = folder or runtime_dir()
    found = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    for path in entries:
        stem = path.name[: -len(".token")] if path.name.endswith(".token") else ""
        if not stem.isdigit() or not 0 < int(stem) < 65536:
            continue
        try:
            found.append((int(stem), path, path.stat().st_mtime))
        except OSError:
            continue  # removed meanwhile: that proxy stopped
    return sorted(found, key=lambda f: (-f[2], f[0]))


def running_proxies(folder: Path | None = None) -> list[FoundProxy]:
    """The proxies with a token file that answer on their port, newest first.

    Blocking (one loopback connect per token file): call it off the GUI thread.
    """
    return [
        FoundProxy(port, path, mtime) for port, path, mtime in token_files(folder) if _answers(port)
    ]


def only_running_port(folder: Path | None = None) -> int:
    """The port of the one running proxy; ``LookupError`` saying why there is not one."""
    found = running_proxies(folder)
    if len(found) == 1:
        return found[0].port
    where = folder or runtime_dir()
    if not found:
        raise LookupError(
            f"no proxy with a shield is running on this machine (no live "
            f"token file in {where}); give --port"
        )
    ports = ", ".join(str(f.port) for f in found)
    raise LookupError(f"{len(found)} proxies are running (ports {ports}); choose one with --port")
