"""Whether a folder's file system takes read leases, for the tests of the window's mapping.

Why: the window maps a big run's file only under a read lease
(:mod:`loom_core.formats.mapped_file`) and reads it where none can be had; on a file
system without leases (or off Linux) the tests of the mapped path have nothing to test.
The probe asks the kernel directly, not that module, so a fault of ours still fails."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


def require_leases(folder: Path) -> None:
    """Skip the calling test unless a read lease can be taken on a file in ``folder``."""
    if not sys.platform.startswith("linux"):
        pytest.skip("read leases are Linux's")
    import fcntl

    probe = folder / "lease-probe"
    probe.write_bytes(b"x")
    fd = os.open(probe, os.O_RDONLY)
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    except OSError as err:
        pytest.skip(f"{folder}: its file system takes no read lease ({err})")
    finally:
        os.close(fd)
        probe.unlink()
