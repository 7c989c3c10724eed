"""The real main window renders to a real picture via ``loom-desktop --screenshot``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QColor, QImage

from loom_desktop.style import KIND_COLORS, NEW_BG
from loom_desktop.widgets.timeline import BAR_ALPHA


def _on_white(colour: str, alpha: int) -> str:
    """What a translucent fill looks like over the plot's white background."""
    c = QColor(colour)
    mix = [round(v * alpha / 255 + 255 * (1 - alpha / 255)) for v in (c.red(), c.green(), c.blue())]
    return QColor(*mix).name()


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [sys.executable, "-m", "loom_desktop", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _colours(image: QImage, step: int = 7) -> set[int]:
    return {
        image.pixel(x, y)
        for x in range(0, image.width(), step)
        for y in range(0, image.height(), step)
    }


def _near(image: QImage, colour: str, tolerance: int = 40) -> int:
    want = QColor(colour)
    hits = 0
    for x in range(0, image.width(), 3):
        for y in range(0, image.height(), 3):
            c = QColor(image.pixel(x, y))
            if (
                abs(c.red() - want.red())
                + abs(c.green() - want.green())
                + abs(c.blue() - want.blue())
            ) < tolerance:
                hits += 1
    return hits


def test_screenshot_of_sample_is_a_real_picture(tmp_path: Path, sample: Path) -> None:
    out = tmp_path / "shot.png"
    proc = _run(
        str(sample), "--screenshot", str(out), "--step", "14", "--size", "1200x760", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1200, 760)
    assert len(_colours(image)) > 40, "the picture is (nearly) blank"
    assert _near(image, _on_white(KIND_COLORS["model"], BAR_ALPHA)) > 200, (
        "no model bars drawn in the timeline"
    )
    assert _near(image, NEW_BG, 12) > 100, "the context view shows no highlighted new messages"


def test_screenshot_without_file_opens_bundled_sample(tmp_path: Path) -> None:
    out = tmp_path / "default.png"
    proc = _run("--screenshot", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert QImage(str(out)).width() == 1400


def test_screenshot_of_bad_file_exits_2_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "nope.loom.json"
    bad.write_text("not json")
    proc = _run(str(bad), "--screenshot", str(tmp_path / "x.png"), cwd=tmp_path)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(bad) in lines[0] and "not valid JSON" in lines[0]
