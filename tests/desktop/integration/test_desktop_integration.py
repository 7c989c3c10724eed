"""Linux desktop integration, checked with the desktop's own tools in a throwaway home.

``--install-desktop-integration`` runs in a subprocess with ``XDG_DATA_HOME`` and
``XDG_CONFIG_HOME`` in a temp dir and no desktop session, so ``xdg-mime`` uses
its generic backend (``mimeapps.list``, and ``mimetype`` for file types). Tests
that need a tool skip, naming the Debian package, when it is missing.
"""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from loom_desktop.app import LoomApplication
from loom_desktop.integration.description import (
    APP,
    ICON_SIZES,
    INSPECT_EVAL,
    OTLP_JSON,
    OTLP_JSONL,
    OTLP_PB,
    TRACE,
)
from loom_desktop.integration.freedesktop import (
    desktop_entry,
    drop_associations,
    exec_line,
    mime_package,
    parse_exec,
)

TOOLS = {
    "xdg-mime": "xdg-utils",
    "update-mime-database": "shared-mime-info",
    "desktop-file-validate": "desktop-file-utils",
    "update-desktop-database": "desktop-file-utils",
    "mimetype": "libfile-mimeinfo-perl",
}
MIME_NS = "{http://www.freedesktop.org/standards/shared-mime-info}"
DESKTOP_VARS = (
    "XDG_CURRENT_DESKTOP",
    "XDG_SESSION_DESKTOP",
    "DESKTOP_SESSION",
    "KDE_FULL_SESSION",
    "KDE_SESSION_VERSION",
    "GNOME_DESKTOP_SESSION_ID",
    "MATE_DESKTOP_SESSION_ID",
    "XDG_DATA_DIRS",
    "XDG_CONFIG_DIRS",
    "DISPLAY",
    "WAYLAND_DISPLAY",
)

missing = [
    f"{tool} (Debian package {pkg})" for tool, pkg in TOOLS.items() if not shutil.which(tool)
]
needs_tools = pytest.mark.skipif(
    bool(missing) or not sys.platform.startswith("linux"),
    reason="needs Linux and " + ", ".join(missing),
)


def _entry(text: str) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    return dict(parser["Desktop Entry"])


# -- what is generated (no tools needed) --------------------------------------------------------


def test_desktop_entry_passes_files_and_matches_the_window(qapp: LoomApplication) -> None:
    entry = _entry(desktop_entry(APP, ["/opt/loom/bin/loom-desktop"]))
    assert entry["Exec"] == "/opt/loom/bin/loom-desktop %F"
    assert entry["Icon"] == APP.app_id and entry["Type"] == "Application"
    assert entry["MimeType"] == "".join(f"{t.mime_type};" for t in APP.file_types)
    assert entry["StartupWMClass"] == Path(APP.desktop_file).stem == qapp.desktopFileName()
    assert os.environ.get("RESOURCE_NAME") == APP.app_id  # X11 WM_CLASS instance


def test_mime_package_claims_only_compound_suffixes() -> None:
    root = ET.fromstring(mime_package(APP))
    mimes = {m.get("type"): m for m in root.findall(f"{MIME_NS}mime-type")}
    assert list(mimes) == [t.mime_type for t in APP.file_types]
    mime = mimes["application/x-loom-trace"]
    globs = mime.findall(f"{MIME_NS}glob")
    assert [g.get("pattern") for g in globs] == ["*.loom.json"]
    assert int(globs[0].get("weight", "50")) > 50
    parent = mime.find(f"{MIME_NS}sub-class-of")
    assert parent is not None and parent.get("type") == "application/json"
    patterns = [g.get("pattern") for m in mimes.values() for g in m.findall(f"{MIME_NS}glob")]
    assert patterns == ["*.loom.json", "*.otlp.json", "*.otlp.jsonl", "*.otlp.pb", "*.eval"]


@pytest.mark.parametrize(
    "path",
    [
        "/usr/bin/loom-desktop",
        "/home/a b/venv/bin/loom-desktop",
        "/tmp/$weird`\"'\\dir/100%/loom-desktop",
        "/tmp/tab\there/x",
    ],
)
def test_exec_quoting_round_trips(path: str) -> None:
    line = exec_line([path, "-m", "loom_desktop"])
    assert line.endswith(" %F")
    assert parse_exec(line, ["/f/one.loom.json", "/f/t w o.loom.json"]) == [
        path,
        "-m",
        "loom_desktop",
        "/f/one.loom.json",
        "/f/t w o.loom.json",
    ]


def test_forgetting_the_default_keeps_other_associations() -> None:
    text = (
        "[Default Applications]\ntext/plain=gedit.desktop;\n"
        "application/x-loom-trace=loom-desktop.desktop;\n\n[Added Associations]\n"
        "application/x-loom-trace=other.desktop;loom-desktop.desktop;\n"
    )
    kept = drop_associations(text, APP.desktop_file, {TRACE.mime_type})
    assert kept == (
        "[Default Applications]\ntext/plain=gedit.desktop;\n\n[Added Associations]\n"
        "application/x-loom-trace=other.desktop;\n"
    )


# -- installed, and checked with the real tools --------------------------------------------------


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """A user with empty XDG dirs and no desktop session."""
    env = {k: v for k, v in os.environ.items() if k not in DESKTOP_VARS}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        QT_QPA_PLATFORM="offscreen",
    )
    for key in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        Path(env[key]).mkdir()
    return env


def _run(args: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{args}: {proc.stderr}{proc.stdout}"
    return proc.stdout.strip()


def _loom(flag: str, env: dict[str, str]) -> str:
    return _run([sys.executable, "-m", "loom_desktop", flag], env)


def _files(env: dict[str, str]) -> set[Path]:
    return {
        p
        for key in ("XDG_DATA_HOME", "XDG_CONFIG_HOME")
        for p in Path(env[key]).rglob("*")
        if p.is_file()
    }


@needs_tools
def test_install_registers_type_default_and_a_valid_entry(
    home: dict[str, str], tmp_path: Path
) -> None:
    _loom("--install-desktop-integration", home)
    trace, plain = tmp_path / "some.loom.json", tmp_path / "plain.json"
    trace.write_text("{}")
    plain.write_text("{}")
    assert _run(["xdg-mime", "query", "filetype", str(trace)], home) == TRACE.mime_type
    assert _run(["xdg-mime", "query", "filetype", str(plain)], home) == "application/json"
    assert _run(["xdg-mime", "query", "default", TRACE.mime_type], home) == APP.desktop_file
    for name, mime in (
        ("run.otlp.json", OTLP_JSON.mime_type),
        ("run.otlp.jsonl", OTLP_JSONL.mime_type),
        ("run.otlp.pb", OTLP_PB.mime_type),
        ("logs.eval", INSPECT_EVAL.mime_type),
    ):
        (tmp_path / name).write_text("{}")
        assert _run(["xdg-mime", "query", "filetype", str(tmp_path / name)], home) == mime
        assert _run(["xdg-mime", "query", "default", mime], home) == APP.desktop_file
    (tmp_path / "other.zip").write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip: not ours
    assert _run(["xdg-mime", "query", "filetype", str(tmp_path / "other.zip")], home) != (
        INSPECT_EVAL.mime_type
    )
    (tmp_path / "other.pb").write_bytes(b"\x08\x01")
    assert (
        _run(["xdg-mime", "query", "filetype", str(tmp_path / "other.pb")], home)
        != OTLP_PB.mime_type
    )
    desktop = Path(home["XDG_DATA_HOME"]) / "applications" / APP.desktop_file
    assert _run(["desktop-file-validate", str(desktop)], home) == ""
    hicolor = Path(home["XDG_DATA_HOME"]) / "icons" / "hicolor"
    for size in ICON_SIZES:
        image = QImage(str(hicolor / f"{size}x{size}" / "apps" / f"{APP.app_id}.png"))
        assert (image.width(), image.height()) == (size, size)
    assert (hicolor / "scalable" / "apps" / f"{APP.app_id}.svg").is_file()


@needs_tools
def test_exec_line_opens_the_file(home: dict[str, str], tmp_path: Path, sample: Path) -> None:
    """Run the installed ``Exec`` as a launcher would, plus ``--screenshot``: the file is shown."""
    _loom("--install-desktop-integration", home)
    mine = tmp_path / "mine.loom.json"
    shutil.copy(sample, mine)
    desktop = Path(home["XDG_DATA_HOME"]) / "applications" / APP.desktop_file
    argv = parse_exec(_entry(desktop.read_text())["Exec"], [str(mine)])
    shots = {}
    for label, command in (
        ("exec", argv),
        ("direct", [sys.executable, "-m", "loom_desktop", str(mine)]),
        ("other", [sys.executable, "-m", "loom_desktop", str(sample)]),
    ):
        out = tmp_path / f"{label}.png"
        env = {**home, "LOOM_DESKTOP_CONFIG_DIR": str(tmp_path / f"cfg-{label}")}
        _run([*command, "--screenshot", str(out), "--size", "1000x700"], env, cwd=tmp_path)
        shots[label] = QImage(str(out))
    assert (shots["exec"].width(), shots["exec"].height()) == (1000, 700)
    assert shots["exec"] == shots["direct"], "the Exec line did not show mine.loom.json"
    assert shots["exec"] != shots["other"]  # same run, other tab title: the file is told apart


@needs_tools
def test_uninstall_removes_everything_and_keeps_the_rest(
    home: dict[str, str], tmp_path: Path
) -> None:
    data, config = Path(home["XDG_DATA_HOME"]), Path(home["XDG_CONFIG_HOME"])
    (data / "applications").mkdir()
    other = data / "applications" / "other.desktop"
    other.write_text("[Desktop Entry]\nType=Application\nName=Other\nExec=other %F\n")
    mimeapps = config / "mimeapps.list"
    mimeapps.write_text("[Default Applications]\ntext/plain=other.desktop\n")
    before = _files(home)

    _loom("--install-desktop-integration", home)
    _loom("--install-desktop-integration", home)  # twice is the same as once
    assert "application/x-loom-trace=loom-desktop.desktop" in mimeapps.read_text()
    _loom("--uninstall-desktop-integration", home)

    after = _files(home)
    assert after - before <= {data / "applications" / "mimeinfo.cache"}, after - before
    assert other.is_file()
    assert "loom" not in mimeapps.read_text() and "text/plain=other.desktop" in mimeapps.read_text()
    trace = tmp_path / "t.loom.json"
    trace.write_text("{}")
    assert _run(["xdg-mime", "query", "filetype", str(trace)], home) == "application/json"
    assert _run(["xdg-mime", "query", "default", TRACE.mime_type], home) == ""


@needs_tools
def test_install_then_uninstall_in_an_empty_home_leaves_no_file(home: dict[str, str]) -> None:
    _loom("--install-desktop-integration", home)
    assert len(_files(home)) > 2 * len(ICON_SIZES)
    _loom("--uninstall-desktop-integration", home)
    assert _files(home) == set()
