"""What the installers of other systems get, the icon, About, and the frozen app itself.

macOS and Windows files cannot be used here, so their content is checked: they
are generated from the one description and must parse and agree with it. The
frozen-app test builds the real PyInstaller bundle and runs it headless; it takes
about a minute, so ``LOOM_SKIP_PACKAGE_TEST=1`` skips it locally (never in CI).
"""

from __future__ import annotations

import ast
import os
import plistlib
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtGui import QImage, QImageReader
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from loom_desktop import __version__
from loom_desktop.app import LoomApplication
from loom_desktop.dialogs import show_about
from loom_desktop.integration import generate
from loom_desktop.integration.description import (
    APP,
    ICON_SIZES,
    INSPECT_EVAL,
    OTLP_JSON,
    OTLP_JSONL,
    OTLP_PB,
    TRACE,
)
from loom_desktop.integration.icons import ICNS_TYPES, ICO_SIZES, png_name, render_png
from loom_desktop.main_window import MainWindow
from loom_desktop.resources import resources_dir

REPO = Path(__file__).resolve().parents[2]
PACKAGING = REPO / "packaging"
ICONS = resources_dir() / "icons"
SPEC = PACKAGING / "loom-desktop.spec"


# -- generated files ----------------------------------------------------------------------------


def test_packaging_files_are_generated_from_the_description() -> None:
    assert generate.stale() == [], "run: python -m loom_desktop.integration.generate"


def test_info_plist_declares_an_exported_uti_we_view() -> None:
    plist = plistlib.loads((PACKAGING / "macos" / "Info.plist").read_bytes())
    assert plist["CFBundleIdentifier"] == APP.bundle_id
    assert plist["CFBundleShortVersionString"] == __version__
    assert plist["CFBundleExecutable"] == "loom-desktop"
    owner = plist["CFBundleDocumentTypes"][0]
    assert owner["LSItemContentTypes"] == [TRACE.uti]
    assert owner["CFBundleTypeRole"] == "Viewer" and owner["LSHandlerRank"] == "Owner"
    exported, *others = plist["UTExportedTypeDeclarations"]
    assert [o["UTTypeIdentifier"] for o in others] == [
        OTLP_JSON.uti,
        OTLP_JSONL.uti,
        OTLP_PB.uti,
        INSPECT_EVAL.uti,
    ]
    assert exported["UTTypeIdentifier"] == TRACE.uti
    assert exported["UTTypeConformsTo"] == ["public.json"]
    assert exported["UTTypeTagSpecification"]["public.filename-extension"] == ["loom.json"]
    assert all(
        d["LSHandlerRank"] == "Alternate"
        for d in plist["CFBundleDocumentTypes"]
        if "public.json" in d["LSItemContentTypes"]
    ), "plain JSON is offered, not claimed"
    assert (ICONS / plist["CFBundleIconFile"]).is_file()


def _reg(path: Path) -> dict[str, dict[str, str]]:
    """Keys of a .reg file -> {value name ("@" default) -> data, REG_EXPAND_SZ decoded}."""
    raw = path.read_bytes()
    assert raw.startswith(b"\xff\xfe"), "regedit wants UTF-16 with a BOM"
    text = raw[2:].decode("utf-16-le")
    assert text.startswith("Windows Registry Editor Version 5.00\r\n")
    keys: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in text.split("\r\n")[1:]:
        if line.startswith("["):
            current = keys.setdefault(line.strip("[]"), {})
        elif "=" in line:
            name, data = line.split("=", 1)
            if data.startswith("hex(2):"):
                data = bytes.fromhex(data[7:].replace(",", "")).decode("utf-16-le").rstrip("\0")
            elif data.startswith('"'):
                data = data[1:-1].replace('\\"', '"').replace("\\\\", "\\")
            current[name.strip('"')] = data
    return keys


def test_windows_registration_is_per_user_and_does_not_steal_json() -> None:
    keys = _reg(PACKAGING / "windows" / "register-user.reg")
    classes = r"HKEY_CURRENT_USER\Software\Classes"
    assert all(k.startswith(classes) for k in keys)
    prog = rf"{classes}\{TRACE.prog_id}"
    assert TRACE.prog_id == "LoomDesktop.Trace.1"
    assert keys[prog]["@"] == TRACE.description
    exe = r"%LOCALAPPDATA%\Programs\Loom Desktop\loom-desktop.exe"
    assert keys[rf"{prog}\shell\open\command"]["@"] == f'"{exe}" "%1"'
    assert keys[rf"{prog}\DefaultIcon"]["@"] == f'"{exe}",0'
    assert keys[rf"{classes}\.json\OpenWithProgids"] == {TRACE.prog_id: "", OTLP_JSON.prog_id: ""}
    assert rf"{classes}\.json" not in keys, "the .json default stays the user's"
    undo = _reg(PACKAGING / "windows" / "unregister-user.reg")
    assert f"-{prog}" in undo
    assert undo[rf"{classes}\.json\OpenWithProgids"] == {TRACE.prog_id: "-", OTLP_JSON.prog_id: "-"}


def test_inno_setup_installs_per_user_and_registers() -> None:
    text = (PACKAGING / "windows" / "loom-desktop.iss").read_text()
    for line in (
        "PrivilegesRequired=lowest",
        "ChangesAssociations=yes",
        f"AppVersion={__version__}",
    ):
        assert line in text.splitlines()
    registry = [ln for ln in text.splitlines() if ln.startswith("Root:")]
    assert registry and all(
        ln.startswith('Root: HKCU; Subkey: "Software\\Classes\\') for ln in registry
    )
    assert any(
        'shell\\open\\command"' in ln and '"""{app}\\loom-desktop.exe"" ""%1"""' in ln
        for ln in registry
    )
    assert any(".json\\OpenWithProgids" in ln and "uninsdeletevalue" in ln for ln in registry)
    assert (REPO / "resources" / "icons" / "loom-desktop.ico").is_file()


# -- the icon and About -------------------------------------------------------------------------


def test_icons_are_rendered_from_the_svg(qapp: LoomApplication) -> None:
    for size in ICON_SIZES:
        image = QImage(str(ICONS / png_name(size)))
        assert (image.width(), image.height()) == (size, size)
        assert image.hasAlphaChannel() and image.pixelColor(0, 0).alpha() == 0  # rounded corner
    fresh = QImage.fromData(render_png(ICONS / "loom-desktop.svg", 48))
    committed = QImage(str(ICONS / png_name(48)))
    diff = sum(
        abs(fresh.pixelColor(x, y).value() - committed.pixelColor(x, y).value())
        for x in range(48)
        for y in range(48)
    ) / (48 * 48)
    assert diff < 2, "resources/icons is stale: python -m loom_desktop.integration.icons"
    for name, sizes in (
        ("loom-desktop.ico", ICO_SIZES),
        ("loom-desktop.icns", tuple(s for _k, s in ICNS_TYPES)),
    ):
        reader = QImageReader(str(ICONS / name))
        assert reader.imageCount() == len(sizes), name


def test_app_and_about_show_the_icon_and_version(qtbot, qapp: LoomApplication) -> None:
    sizes = {s.width() for s in qapp.windowIcon().availableSizes()}
    assert {16, 32, 48, 256, 512} <= sizes
    assert qapp.applicationVersion() == __version__
    window = MainWindow()
    qtbot.addWidget(window)
    assert not window.windowIcon().isNull()
    box = show_about(window, __version__)
    try:
        assert f"Loom Desktop {__version__}" in box.text()
        assert not box.iconPixmap().isNull()
    finally:
        box.close()
        window.close()


# -- the frozen app -----------------------------------------------------------------------------


def _spec_list(name: str) -> list[str]:
    for node in ast.parse(SPEC.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == name:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} not in {SPEC}")


def test_spec_excludes_unused_qt_but_keeps_what_we_use() -> None:
    excluded = set(_spec_list("QT_UNUSED"))
    for module in (
        "QtQml",
        "QtQuick",
        "QtWebEngineCore",
        "QtWebEngineWidgets",
        "QtDesigner",
        "QtTest",
    ):
        assert f"PySide6.{module}" in excluded
    for module in ("QtCore", "QtGui", "QtWidgets", "QtNetwork", "QtOpenGL", "QtOpenGLWidgets"):
        assert f"PySide6.{module}" not in excluded
    ours = {
        m.group(1)
        for path in [*REPO.glob("loom_desktop/**/*.py"), *REPO.glob("loom_core/*.py")]
        for m in re.finditer(r"PySide6\.(Qt\w+)", path.read_text())
    }
    assert not {f"PySide6.{m}" for m in ours} & excluded - {"PySide6.QtSvg"}, (
        "only the development-time icon renderer may use an excluded module (QtSvg)"
    )


BLOCKER = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in BLOCKED:
            raise ImportError(f"{name} is not in the bundle")
sys.meta_path.insert(0, Block())
from loom_desktop.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def test_app_runs_without_the_excluded_modules(tmp_path: Path, sample: Path) -> None:
    """What the bundle leaves out (unused Qt modules, and what only the test tools bring into
    the venv the bundle is built from), the app must not need: block it and take a
    screenshot."""
    blocked = set(_spec_list("QT_UNUSED")) | set(_spec_list("NOT_SHIPPED"))
    code = f"BLOCKED = {blocked!r}\n" + BLOCKER
    out = tmp_path / "blocked.png"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(sample), "--screenshot", str(out)],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert QImage(str(out)).width() == 1400


def _pyinstaller_available() -> bool:
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(
    os.environ.get("LOOM_SKIP_PACKAGE_TEST") == "1",
    reason="LOOM_SKIP_PACKAGE_TEST=1: frozen-app smoke test skipped",
)
@pytest.mark.long
@pytest.mark.timeout(1200)  # PyInstaller's build alone takes minutes on a 2-core machine
def test_frozen_bundle_builds_and_runs_headless(tmp_path: Path, sample: Path) -> None:
    if not _pyinstaller_available():
        if os.environ.get("CI"):
            pytest.fail("PyInstaller missing in CI: .ci/run installs the 'package' extra")
        pytest.skip("PyInstaller not installed: pip install -e '.[package]' (or make package)")
    started = time.monotonic()
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--log-level",
            "WARN",
            "--distpath",
            str(tmp_path / "dist"),
            "--workpath",
            str(tmp_path / "work"),
            str(SPEC),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    bundle = tmp_path / "dist" / "loom-desktop"
    binary = bundle / ("loom-desktop.exe" if sys.platform == "win32" else "loom-desktop")
    size = sum(p.lstat().st_size for p in bundle.rglob("*") if p.is_file() and not p.is_symlink())
    print(f"bundle built in {time.monotonic() - started:.0f} s, {size / 2**20:.0f} MiB")

    names = {p.name for p in bundle.rglob("*")}
    for unused in ("Qml", "Quick", "WebEngine", "Designer", "Test"):
        assert not [n for n in names if re.match(rf"(libQt6|Qt){unused}", n)], unused
    assert any(n.startswith("QtNetwork") for n in names), "the single-instance server needs it"

    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "LOOM_DESKTOP_CONFIG_DIR": str(tmp_path / "cfg"),
    }
    version = subprocess.run(
        [str(binary), "--version"], env=env, capture_output=True, text=True, timeout=60
    )
    assert version.stdout.strip() == f"loom-desktop {__version__}", version.stderr
    helper = subprocess.run(
        [str(binary), "--run-module", "loom_core.cli.background", "checksum", str(sample)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    # the window's checksum check, frozen: a loom_core command at a lower priority
    assert helper.stdout.strip() == "valid", helper.stderr
    page = tmp_path / "page.html"
    export = subprocess.run(  # the HTML page's assets are package data: bundled too
        [str(binary), "--run-module", "loom_core", "export-html", str(sample), "-o", str(page)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert export.returncode == 0 and "loom-data" in page.read_text(), export.stderr
    for args in ([str(sample), "--step", "9"], []):  # [] opens the bundled sample
        out = tmp_path / f"frozen{len(args)}.png"
        run = subprocess.run(
            [str(binary), *args, "--screenshot", str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        image = QImage(str(out))
        assert (image.width(), image.height()) == (1400, 860)
        assert len({image.pixel(x, y) for x in range(0, 1400, 9) for y in range(0, 860, 9)}) > 40
    _frozen_hand_over(binary, env, tmp_path, sample)


def _frozen_hand_over(binary: Path, env: dict[str, str], tmp_path: Path, sample: Path) -> None:
    """The bundled QtNetwork works: a second frozen launch hands over to the first and exits 0."""
    from loom_desktop.infra.single_instance import ENV_NAME

    name = f"loom-frozen-{os.getpid()}"
    env = {**env, ENV_NAME: name}
    first = subprocess.Popen(
        [str(binary)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not _serving(name):
            assert first.poll() is None and time.monotonic() < deadline, "first instance died"
            time.sleep(0.1)
        second = subprocess.run(
            [str(binary), str(sample)], env=env, capture_output=True, text=True, timeout=60
        )
        assert second.returncode == 0, second.stderr
        assert first.poll() is None
    finally:
        first.terminate()
        try:
            first.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            first.kill()
            first.communicate()
        QLocalServer.removeServer(name)


def _serving(name: str) -> bool:
    probe = QLocalSocket()
    probe.connectToServer(name)
    ok = probe.waitForConnected(200)
    probe.abort()
    return ok


def test_helper_processes_run_in_a_frozen_app(
    monkeypatch: pytest.MonkeyPatch, sample: Path
) -> None:
    """Frozen, ``sys.executable`` is the app: helpers go through ``--run-module``."""
    from loom_desktop.infra.child import RUN_MODULE, module_command

    assert module_command("loom_core", "checksum", "x")[1] == ["-m", "loom_core", "checksum", "x"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    program, args = module_command("loom_core", "checksum", str(sample))
    assert program == sys.executable and args[:2] == [RUN_MODULE, "loom_core"]
    monkeypatch.undo()
    done = subprocess.run(
        [sys.executable, "-m", "loom_desktop", *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == "valid", done.stderr
