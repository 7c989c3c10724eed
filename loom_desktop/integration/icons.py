"""Render the application icon from its SVG: PNGs at every hicolor size, an ICO and an ICNS.

Development-time tool (``python -m loom_desktop.integration.icons``): the output is
committed under ``resources/icons/`` so neither the running app nor the installers
need an SVG renderer. ICO and ICNS are written here, as containers of the PNGs,
because Qt can read but not write multi-size ones and PyInstaller would otherwise
need Pillow to convert.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

from loom_desktop.integration.description import APP, ICON_SIZES

ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS element types that hold PNG data, by pixel size (the @2x ones reuse a bigger PNG).
ICNS_TYPES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"icp6", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic09", 512),
    (b"ic11", 32),
    (b"ic12", 64),
    (b"ic13", 256),
    (b"ic14", 512),
)


def png_name(size: int) -> str:
    return f"{APP.app_id}-{size}.png"


def render_png(svg: Path, size: int) -> bytes:
    """The SVG drawn into a transparent ``size``×``size`` PNG by Qt's SVG renderer."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg}: not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs want bytes; runtime wants str
    buffer.close()
    return bytes(data.data())


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """A Windows ICO whose entries are PNGs (supported since Vista)."""
    sizes = [s for s in ICO_SIZES if s in pngs]
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, blobs = b"", b""
    for size in sizes:
        data = pngs[size]
        dim = 0 if size >= 256 else size  # 0 means 256 in the one-byte fields
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset)
        blobs += data
        offset += len(data)
    return header + entries + blobs


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """A macOS ICNS whose elements are PNGs."""
    body = b"".join(
        kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size]
        for kind, size in ICNS_TYPES
        if size in pngs
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def write_icons(icons_dir: Path) -> list[Path]:
    """(Re)write every rendered icon beside ``<app_id>.svg``; return the files written."""
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication(["icons", "-platform", "offscreen"])
    svg = icons_dir / f"{APP.app_id}.svg"
    pngs = {size: render_png(svg, size) for size in ICON_SIZES}
    written = []
    for size, data in pngs.items():
        written.append(icons_dir / png_name(size))
        written[-1].write_bytes(data)
    for suffix, data in (("ico", ico_bytes(pngs)), ("icns", icns_bytes(pngs))):
        written.append(icons_dir / f"{APP.app_id}.{suffix}")
        written[-1].write_bytes(data)
    del app
    return written


if __name__ == "__main__":
    from loom_desktop.resources import resources_dir

    for path in write_icons(Path(sys.argv[1]) if len(sys.argv) > 1 else resources_dir() / "icons"):
        print(path)
