"""Print how the packages installed here differ from a lock file (``make deps-latest``).

The app and its tests install from ``requirements/*.txt``; this names, for a venv that
installed the newest releases instead, every package whose version moved, so a failure
in that run points at the release that caused it.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")
# Installed by venv itself, never part of a lock.
NOT_LOCKED = {"pip"}


def canonical(name: str) -> str:
    """Package names compare as PEP 503 says: case and runs of ``-_.`` do not matter."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions(lock: Path, everywhere: bool = False) -> dict[str, set[str]]:
    """Every pinned version per package (a universal lock may pin one per Python) whose
    environment marker holds here, or every pin with ``everywhere``."""
    pins: dict[str, set[str]] = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        match = PIN.match(line)
        if match and (everywhere or not match.group(3) or Marker(match.group(3)).evaluate()):
            pins.setdefault(canonical(match.group(1)), set()).add(match.group(2))
    return pins


def installed_versions() -> dict[str, str]:
    return {canonical(d.metadata["Name"]): d.version for d in metadata.distributions()}


def drift(lock: Path) -> list[str]:
    """One line per package whose installed version is not one the lock pins."""
    locked, installed = locked_versions(lock), installed_versions()
    lines = []
    for name in sorted(locked.keys() | installed.keys()):
        pinned, now = locked.get(name), installed.get(name)
        if name == "loom-desktop" or name in NOT_LOCKED or (pinned and now in pinned):
            continue
        was = " or ".join(sorted(pinned)) if pinned else "not locked"
        lines.append(f"{name}: {was} -> {now or 'not installed'}")
    return lines


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: lock_drift.py LOCKFILE", file=sys.stderr)
        return 2
    lines = drift(Path(sys.argv[1]))
    print(f"{len(lines)} package(s) differ from {sys.argv[1]}:" if lines else "no drift")
    print("\n".join(f"  {line}" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
