"""A system library Qt needs is named, with its install line, before Qt can abort.

Qt's own message for a platform plugin that cannot load names one package whatever is
missing. The real linker (``ldd``) is asked about a real plugin whose dependency list names
a library no machine has: a copy of PySide6's xcb plugin with one needed name overwritten.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from loom_desktop import system_libs
from loom_desktop.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
DEBIAN = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n'
FAKE = "libloom-fakes.so.1"  # as long as the name it replaces, so the file stays valid
REPLACED = "libxcb-cursor.so.0"
linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("ldd") is None,
    reason="the check asks glibc's ldd, on Linux",
)


@pytest.fixture
def pyside_missing_a_library(tmp_path: Path) -> Path:
    """A PySide6 folder whose xcb plugin needs ``FAKE`` (Qt's own libraries linked in)."""
    real = system_libs.pyside_dir()
    assert real is not None
    plugin = system_libs.plugin_file(real, "xcb")
    data = plugin.read_bytes()
    assert len(FAKE) == len(REPLACED) and data.count(REPLACED.encode() + b"\0") == 1
    fake = tmp_path / "PySide6"
    target = system_libs.plugin_file(fake, "xcb")
    target.parent.mkdir(parents=True)
    target.write_bytes(data.replace(REPLACED.encode() + b"\0", FAKE.encode() + b"\0"))
    (fake / "Qt" / "lib").symlink_to(real / "Qt" / "lib")  # the plugin's $ORIGIN/../../lib
    return fake


def fake_ldd(tmp_path: Path, *missing: str) -> str:
    script = tmp_path / "ldd"
    lines = "".join(f"\\t{name} => not found\\n" for name in missing)
    script.write_text(f"#!/bin/sh\nprintf '\\tlibc.so.6 => /lib/libc.so.6\\n{lines}'\n")
    script.chmod(0o755)
    return str(script)


@linux_only
def test_the_real_linker_names_the_missing_library(pyside_missing_a_library: Path) -> None:
    check = system_libs.WindowCheck(pyside_missing_a_library, ["xcb"])
    problem = check.problem(DEBIAN)
    assert problem is not None and "\n" not in problem
    assert "Qt's xcb platform plugin needs" in problem and FAKE in problem
    assert f"(and what provides {FAKE})" in problem or "install the packages" in problem


@linux_only
def test_the_app_exits_2_with_one_line_before_qt_starts(
    pyside_missing_a_library: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With a display set and the plugin unable to load, ``loom-desktop`` says so and exits
    2; Qt's abort would have ended the test process itself."""
    monkeypatch.setattr(system_libs, "pyside_dir", lambda: pyside_missing_a_library)
    monkeypatch.setenv("DISPLAY", ":987")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("loom-desktop: cannot open a window:")
    assert FAKE in err


def test_the_install_line_names_each_missing_package_once(tmp_path: Path) -> None:
    ldd = fake_ldd(tmp_path, "libxcb-icccm.so.4", "libxcb-keysyms.so.1")
    plugin = system_libs.plugin_file(tmp_path, "xcb")
    plugin.parent.mkdir(parents=True)
    plugin.write_bytes(b"")
    problem = system_libs.WindowCheck(tmp_path, ["xcb"], ldd=ldd).problem(DEBIAN)
    assert problem == (
        "loom-desktop: cannot open a window: Qt's xcb platform plugin needs "
        "libxcb-icccm.so.4, libxcb-keysyms.so.1, not installed here; "
        "install them with: sudo apt-get install libxcb-icccm4 libxcb-keysyms1"
    )
    fedora = system_libs.WindowCheck(tmp_path, ["xcb"], ldd=ldd).problem("ID=fedora\n")
    assert fedora is not None and fedora.endswith("sudo dnf install xcb-util-wm xcb-util-keysyms")
    nothing = system_libs.WindowCheck(tmp_path, ["xcb"], ldd=fake_ldd(tmp_path)).problem(DEBIAN)
    assert nothing is None


def test_a_library_qt_core_needs_is_named_when_pyside6_cannot_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "QtCore.abi3.so").write_bytes(b"")
    monkeypatch.setattr(system_libs, "pyside_dir", lambda: tmp_path)
    monkeypatch.setattr(system_libs, "os_release", lambda: DEBIAN)
    error = ImportError("libglib-2.0.so.0: cannot open shared object file: No such file")
    line = system_libs.import_problem(error, ldd=fake_ldd(tmp_path, "libglib-2.0.so.0"))
    assert line is not None and line.endswith("sudo apt-get install libglib2.0-0")
    assert system_libs.import_problem(ImportError("no module named x")) is None


@pytest.mark.parametrize(
    ("release", "expected"),
    [
        (DEBIAN, "debian"),
        ('ID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n', "debian"),
        ('ID=linuxmint\nID_LIKE="ubuntu debian"\n', "debian"),
        ("ID=fedora\nVERSION_ID=41\n", "fedora"),
        ('ID="rocky"\nID_LIKE="rhel centos fedora"\n', "fedora"),
        ("ID=arch\n", "arch"),
        ("ID=manjaro\nID_LIKE=arch\n", "arch"),
        ("ID=alpine\n", None),
        ("", None),
    ],
)
def test_the_distribution_family(release: str, expected: str | None) -> None:
    assert system_libs.family(release) == expected


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"DISPLAY": ":0"}, ["xcb"]),
        ({}, []),  # no display: display_problem says so
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, []),
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, ["xcb"]),
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "vnc:size=800x600"}, []),
        (
            {"DISPLAY": ":0", "WAYLAND_DISPLAY": "w-0", "XDG_SESSION_TYPE": "wayland"},
            ["wayland", "xcb"],
        ),
        ({"WAYLAND_DISPLAY": "w-0", "XDG_SESSION_TYPE": "wayland"}, ["wayland"]),
    ],
)
def test_the_platforms_qt_will_try(environ: dict[str, str], expected: list[str]) -> None:
    assert system_libs.platforms(environ) == expected


def test_the_readme_lists_the_packages_the_check_names() -> None:
    """The README's table is the install line for every library the check knows (X11)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    every = list(system_libs.X11_PACKAGES)
    for label, distro in (("Debian, Ubuntu", "debian"), ("Fedora", "fedora"), ("Arch", "arch")):
        row = re.search(rf"^\| {label} \| `([^`]+)` \|$", text, re.MULTILINE)
        assert row is not None, label
        assert row.group(1) == system_libs.install_command(distro, every)


def test_no_check_offscreen_or_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    assert system_libs.start_window_check({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}) is None
    monkeypatch.setattr(sys, "platform", "darwin")
    assert system_libs.start_window_check(dict(os.environ, DISPLAY=":0")) is None


def _no_x_display() -> str:
    """A display number nothing listens at here: no socket (abstract or file), no TCP port."""
    for number in range(950, 1000):
        if system_libs.x_server_answers(f":{number}", timeout=0.5) is False:
            return f":{number}"
    pytest.skip("every display number from :950 to :999 answers here")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Qt's xcb plugin, on Linux")
@pytest.mark.parametrize("display", [None, "no server"])
def test_no_display_is_one_line_not_qts_abort(display: str | None) -> None:
    """Without a display, or with DISPLAY naming a display no X server is at, Qt said
    "could not connect to display", then that xcb-cursor0 is needed (installed on the
    Debian where this was seen), then aborted. The app says which in one line and exits 2;
    in its own process, since Qt's abort would end the test run. Where the plugin's own
    libraries are missing too (a fresh machine without libxcb-icccm4, say) the line names
    them instead: what to install comes first."""
    env = {k: v for k, v in os.environ.items() if k not in system_libs.DISPLAY_ENV.values()}
    for key in ("QT_QPA_PLATFORM", "XDG_SESSION_TYPE"):
        env.pop(key, None)
    if display is not None:
        env["DISPLAY"] = _no_x_display()
    done = subprocess.run(
        [sys.executable, "-m", "loom_desktop"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "xcb-cursor" not in done.stderr
    check = system_libs.start_window_check(env)
    libraries = check.problem() if check is not None else None
    if libraries is not None:  # a machine without some of the plugin's libraries: they come first
        assert done.stderr == libraries + "\n"
    elif display is None:
        assert done.stderr.startswith(
            "loom-desktop: cannot open a window: no display here (DISPLAY is not set)"
        )
    else:
        assert done.stderr.startswith(
            f"loom-desktop: cannot open a window: no X server answers at DISPLAY={env['DISPLAY']};"
        )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X display names, on Linux")
def test_an_x_server_is_asked_only_whether_it_listens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local display is its socket (abstract or file), a remote one its TCP port 6000+N;
    what cannot be told (a form not known, a launchd socket path) is never a refusal."""
    monkeypatch.setattr(system_libs, "X11_SOCKETS", str(tmp_path / "X{}"))
    assert system_libs.x_server_answers(":7") is False
    assert system_libs.x_server_answers("unix:7.0") is False
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "X7"))
        server.listen()
        assert system_libs.x_server_answers(":7") is True
        assert system_libs.x_server_answers(":7.0") is True
        assert system_libs.x_server_answers("unix:7") is True
    with socket.socket(socket.AF_INET) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert port > 6000
        assert system_libs.x_server_answers(f"127.0.0.1:{port - 6000}.0") is True
    assert system_libs.x_server_answers(f"127.0.0.1:{port - 6000}") is False
    for unknown in ("", "garbage", "/private/tmp/com.apple.launchd.x/org.xquartz:0", "[::1]:0"):
        assert system_libs.x_server_answers(unknown) is None


@pytest.mark.parametrize(
    ("environ", "says"),
    [
        ({}, "no display here (DISPLAY is not set)"),
        ({"QT_QPA_PLATFORM": "xcb"}, "no display here (DISPLAY is not set)"),
        ({"XDG_SESSION_TYPE": "wayland"}, "(neither WAYLAND_DISPLAY nor DISPLAY is set)"),
        ({"QT_QPA_PLATFORM": "offscreen"}, None),
        ({"WAYLAND_DISPLAY": "wayland-0"}, None),  # Qt may well pick wayland: let it try
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "w-0", "XDG_SESSION_TYPE": "wayland"}, None),
    ],
)
def test_the_display_problem(
    environ: dict[str, str], says: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    problem = system_libs.display_problem(environ)
    assert (problem is None) if says is None else (problem is not None and says in problem)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert system_libs.display_problem(environ) is None
