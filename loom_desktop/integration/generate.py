"""Write the per-OS files of ``packaging/`` from the one description.

``python -m loom_desktop.integration.generate`` rewrites them; ``--check`` only
reports (exit 1) files that differ from what the description gives, which is
what the tests run so the committed copies cannot drift.
"""

from __future__ import annotations

import sys
from pathlib import Path

from loom_desktop.integration.description import APP
from loom_desktop.integration.freedesktop import desktop_entry, mime_package
from loom_desktop.integration.macos import info_plist_bytes
from loom_desktop.integration.windows import inno_setup, reg_bytes, reg_register, reg_unregister

REPO = Path(__file__).resolve().parents[2]


def outputs() -> dict[str, bytes]:
    """Path relative to the repository -> content."""
    return {
        f"packaging/linux/{APP.desktop_file}": desktop_entry(APP, [APP.executable]).encode(),
        f"packaging/linux/{APP.app_id}.xml": mime_package(APP).encode(),
        "packaging/macos/Info.plist": info_plist_bytes(APP),
        f"packaging/windows/{APP.app_id}.iss": inno_setup(APP).encode(),
        "packaging/windows/register-user.reg": reg_bytes(reg_register(APP)),
        "packaging/windows/unregister-user.reg": reg_bytes(reg_unregister(APP)),
    }


def stale(root: Path = REPO) -> list[str]:
    return [
        rel
        for rel, data in outputs().items()
        if not (root / rel).is_file() or (root / rel).read_bytes() != data
    ]


def write(root: Path = REPO) -> list[str]:
    for rel, data in outputs().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return list(outputs())


def main(argv: list[str]) -> int:
    if "--check" in argv:
        for rel in stale():
            print(f"out of date: {rel}")
        return 1 if stale() else 0
    for rel in write():
        print(rel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
