"""Can Qt open a window here? Asked before the ``QApplication`` exists, because Qt cannot say.

When a system library that Qt's platform plugin needs is missing, Qt aborts the whole
process (``qFatal``) with a message that names one package whatever is missing ("xcb-cursor0
or libxcb-cursor0 is needed"), so a fresh Debian without ``libxcb-icccm4`` dies pointing at
a package it already has. No Qt code may run to find out, so this module imports no Qt: it
asks the dynamic linker (``ldd``, part of glibc on every Linux PySide6 supports) about
PySide6's own files and names each missing library with the one install command for the
distribution. It is a no-op off Linux, when Qt draws offscreen, and where ``ldd`` or PySide6's
files are not found (a frozen bundle carries its own libraries).

Qt says the same wrong thing, and aborts, when there is no display at all (DISPLAY unset, or
no X server at it): ``display_problem`` says that instead, asking the X server's socket
only whether it is there.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

# soname -> its package on (Debian/Ubuntu, Fedora, Arch), in the order the README lists them.
# The X11 set is what Qt's xcb plugin and PySide6's QtCore/QtGui/QtWidgets/QtNetwork/QtSvg
# load (``ldd`` on a minimal Debian 12 root); Wayland's two are for the wayland plugin.
X11_PACKAGES: dict[str, tuple[str, str, str]] = {
    "libEGL.so.1": ("libegl1", "libglvnd-egl", "libglvnd"),
    "libGL.so.1": ("libgl1", "libglvnd-glx", "libglvnd"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2", "glib2"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype", "freetype2"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs", "dbus"),
    "libgssapi_krb5.so.2": ("libgssapi-krb5-2", "krb5-libs", "krb5"),
    "libX11.so.6": ("libx11-6", "libX11", "libx11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb", "libx11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
    "libxcb.so.1": ("libxcb1", "libxcb", "libxcb"),
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms", "xcb-util-keysyms"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb", "libxcb"),
    "libxcb-render-util.so.0": (
        "libxcb-render-util0",
        "xcb-util-renderutil",
        "xcb-util-renderutil",
    ),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb", "libxcb"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util", "xcb-util"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb", "libxcb"),
}
PACKAGES = X11_PACKAGES | {
    "libwayland-client.so.0": ("libwayland-client0", "libwayland-client", "wayland"),
    "libwayland-cursor.so.0": ("libwayland-cursor0", "libwayland-cursor", "wayland"),
}
FAMILIES = ("debian", "fedora", "arch")
INSTALL = {
    "debian": "sudo apt-get install",
    "fedora": "sudo dnf install",
    "arch": "sudo pacman -S --needed",
}
_LIKE = {"ubuntu": "debian", "rhel": "fedora", "centos": "fedora", "manjaro": "arch"}
PLUGINS = {"xcb": "libqxcb.so", "wayland": "libqwayland.so"}
DISPLAY_ENV = {"xcb": "DISPLAY", "wayland": "WAYLAND_DISPLAY"}
# The PySide6 modules the app imports: the libraries Qt itself needs, display or not.
MODULES = ("QtCore", "QtGui", "QtWidgets", "QtNetwork", "QtSvg")


def family(os_release: str) -> str | None:
    """``debian``, ``fedora`` or ``arch`` from /etc/os-release's ID and ID_LIKE, else None."""
    fields = {}
    for line in os_release.splitlines():
        key, _, value = line.partition("=")
        fields[key.strip()] = value.strip().strip("\"'")
    for name in [fields.get("ID", ""), *fields.get("ID_LIKE", "").split()]:
        name = _LIKE.get(name, name)
        if name in FAMILIES:
            return name
    return None


def install_command(distro: str, sonames: Sequence[str]) -> str:
    """The one command that installs the packages providing ``sonames`` (known ones only),
    in the README's order."""
    column, wanted = FAMILIES.index(distro), set(sonames)
    packages = dict.fromkeys(names[column] for s, names in PACKAGES.items() if s in wanted)
    return f"{INSTALL[distro]} {' '.join(packages)}"


def candidates(environ: Mapping[str, str]) -> list[str]:
    """The platform plugins Qt will try, in order, display set or not; [] when Qt draws
    without a display (offscreen, minimal, vnc…)."""
    chosen = environ.get("QT_QPA_PLATFORM", "")
    if chosen:
        names = [part.split(":", 1)[0].strip() for part in chosen.split(";")]
    elif environ.get("XDG_SESSION_TYPE") == "wayland":
        names = ["wayland", "xcb"]
    else:
        names = ["xcb"]
    return [] if any(name not in PLUGINS for name in names) else names


def platforms(environ: Mapping[str, str]) -> list[str]:
    """The platform plugins Qt will try, in order, when each has its display; [] when Qt
    draws without one (offscreen, minimal, vnc…) or no display is set at all."""
    return [name for name in candidates(environ) if environ.get(DISPLAY_ENV[name])]


X11_SOCKETS = "/tmp/.X11-unix/X{}"


def _connects(family: int, address: str | tuple[str, int], timeout: float) -> bool | None:
    """True when something accepts a connection there, False when nothing listens (refused,
    no such socket, no such host), None when it cannot tell (a timeout, no permission…)."""
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(address)
        return True
    except (FileNotFoundError, ConnectionRefusedError, socket.gaierror):
        return False
    except OSError:
        return None


def x_server_answers(display: str, timeout: float = 2.0) -> bool | None:
    """Whether an X server listens where libxcb connects for ``display``
    (``[protocol/][host]:N[.screen]``): its local socket (abstract, then the file) for
    ``:N`` or ``unix:N``, TCP port 6000+N for ``host:N``. None when it cannot tell (a form
    this does not know, a socket path, a timeout), so that only a certain "no" refuses."""
    where, colon, rest = display.rpartition(":")
    number = rest.split(".", 1)[0]
    if not colon or not number.isdigit() or where.startswith("/") or where.startswith("["):
        return None
    protocol, _, host = where.rpartition("/")
    if protocol not in ("", "unix", "tcp", "inet", "inet6"):
        return None
    answers: list[bool | None] = []
    if protocol == "unix" or (not protocol and host in ("", "unix")):
        path = X11_SOCKETS.format(number)
        answers.append(_connects(socket.AF_UNIX, "\0" + path, timeout))  # what libxcb tries first
        answers.append(_connects(socket.AF_UNIX, path, timeout))
        host = "" if protocol == "unix" or host == "unix" else "localhost"
    if host:
        answers.append(_connects(socket.AF_INET, (host, 6000 + int(number)), timeout))
    if any(answers):
        return True
    return None if None in answers else False


def display_problem(environ: Mapping[str, str]) -> str | None:
    """One line when Qt would need a display and certainly has none: none is set, or
    nothing listens at the X display set. Qt's own words for either are "could not connect
    to display", then that xcb-cursor0 is needed (though it is installed), then an abort.
    None off Linux, offscreen, and whenever a display might answer."""
    if not sys.platform.startswith("linux"):
        return None
    names = candidates(environ)
    if not names:
        return None
    if not (environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY")):
        unset = "neither WAYLAND_DISPLAY nor DISPLAY is" if len(names) > 1 else "DISPLAY is not"
        return (
            f"loom-desktop: cannot open a window: no display here ({unset} set); "
            "run it in a desktop session, or over ssh -X"
        )
    if platforms(environ) != ["xcb"] or environ.get("WAYLAND_DISPLAY"):
        return None
    display = environ["DISPLAY"]
    if x_server_answers(display) is not False:
        return None
    return (
        f"loom-desktop: cannot open a window: no X server answers at DISPLAY={display}; "
        "start one, or set DISPLAY to the one you have"
    )


def pyside_dir() -> Path | None:
    """PySide6's folder, found without importing it (importing it loads Qt)."""
    spec = importlib.util.find_spec("PySide6")
    locations = spec.submodule_search_locations if spec else None
    return Path(next(iter(locations))) if locations else None


def module_files(pyside: Path) -> list[Path]:
    return [p for name in MODULES for p in pyside.glob(f"{name}.*.so")]


def plugin_file(pyside: Path, platform: str) -> Path:
    return pyside / "Qt" / "plugins" / "platforms" / PLUGINS[platform]


class LinkCheck:
    """``ldd`` over some files, started now and read later, so it runs while the app imports."""

    def __init__(self, files: Sequence[Path], ldd: str = "ldd") -> None:
        self._process: subprocess.Popen[str] | None = None
        if files:
            try:
                self._process = subprocess.Popen(
                    [ldd, *map(str, files)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
            except OSError:  # no ldd: nothing to ask, Qt will speak for itself
                pass

    def missing(self) -> list[str] | None:
        """The sonames the dynamic linker cannot find (sorted), or None when it could not
        be asked."""
        if self._process is None:
            return None
        try:
            out, _ = self._process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.communicate()
            return None
        pairs = [line.split("=>", 1) for line in out.splitlines() if "=>" in line]
        return sorted({name.strip() for name, where in pairs if where.strip() == "not found"})


def os_release() -> str:
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return ""


def advice(sonames: Sequence[str], release: str) -> str:
    """How to install what provides ``sonames`` here: one command where we know the
    distribution and every package, else a pointer to the README's table."""
    distro = family(release)
    unknown = [s for s in sonames if s not in PACKAGES]
    if distro is None or len(unknown) == len(sonames):
        return (
            "install the packages that provide them (README.md, 'Linux system packages', "
            "names them for Debian/Ubuntu, Fedora and Arch)"
        )
    command = f"install them with: {install_command(distro, sonames)}"
    return command + (f" (and what provides {', '.join(unknown)})" if unknown else "")


class WindowCheck:
    """Whether Qt's platform plugin can load, asked of the linker while the app imports.

    Started only with a real display (``platforms``); Qt tries its candidates in order and
    any one that loads is enough.
    """

    def __init__(self, pyside: Path, names: Sequence[str], ldd: str = "ldd") -> None:
        self._checks = {
            name: LinkCheck([*module_files(pyside), plugin_file(pyside, name)], ldd)
            for name in names
            if plugin_file(pyside, name).is_file()
        }

    def problem(self, release: str | None = None) -> str | None:
        """One line naming what is missing and how to install it, or None when a plugin
        can load (or the linker could not be asked)."""
        missing_by_name = {name: check.missing() for name, check in self._checks.items()}
        if not missing_by_name or any(not m for m in missing_by_name.values()):
            return None
        name, libs = list(missing_by_name.items())[-1]  # Qt's last try: what it would report
        assert libs is not None
        return (
            f"loom-desktop: cannot open a window: Qt's {name} platform plugin needs "
            f"{', '.join(libs)}, not installed here; "
            f"{advice(libs, os_release() if release is None else release)}"
        )


def start_window_check(environ: Mapping[str, str], ldd: str = "ldd") -> WindowCheck | None:
    """The check for this process's display, started; None off Linux, without a display,
    offscreen, or where PySide6's files are not found."""
    if not sys.platform.startswith("linux"):
        return None
    names = platforms(environ)
    pyside = pyside_dir() if names else None
    return WindowCheck(pyside, names, ldd) if pyside is not None else None


def import_problem(error: ImportError, ldd: str = "ldd") -> str | None:
    """For an ImportError of PySide6 itself (a library Qt's core needs is missing: no window
    at all, offscreen too): the same one line, or None when that is not the cause."""
    pyside = pyside_dir()
    if "shared object" not in str(error) or pyside is None:
        return None
    libs = LinkCheck(module_files(pyside), ldd).missing()
    if not libs:
        return None
    return f"loom-desktop: Qt cannot load: it needs {', '.join(libs)}, not installed here; {advice(libs, os_release())}"
