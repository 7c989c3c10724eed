"""Every foreign format a reader names a file pattern for opens by double-click on every OS,
and none of them claims a generic suffix (plain .json, .jsonl, .pb, .zip).

Checked on the committed packaging files (what installers ship), not on the description
they are made from: a reader added to loom_core.formats.foreign without a FileType, or a
FileType left out of one OS's file, fails here.
"""

from __future__ import annotations

import fnmatch
import plistlib
import xml.etree.ElementTree as ET

import pytest

from loom_core.formats.foreign import readers
from loom_desktop.integration.description import APP
from tests.desktop.test_packaging import PACKAGING, _reg

MIME_NS = "{http://www.freedesktop.org/standards/shared-mime-info}"
GENERIC = ("json", "jsonl", "pb", "zip")  # suffixes other programs own
CLASSES = r"HKEY_CURRENT_USER\Software\Classes"


def _foreign_patterns() -> list[str]:
    return [p for r in readers() for p in r.patterns]


def _linux_globs() -> dict[str, str]:
    """glob -> MIME type, from the shared-mime-info package."""
    root = ET.parse(PACKAGING / "linux" / f"{APP.app_id}.xml").getroot()
    return {
        g.get("pattern", ""): m.get("type", "")
        for m in root.findall(f"{MIME_NS}mime-type")
        for g in m.findall(f"{MIME_NS}glob")
    }


def test_the_readers_name_the_patterns_of_their_formats() -> None:
    # Claude Code transcripts are plain .jsonl under ~/.claude: opened from the session
    # list (File > Open Claude Code Session...), never by claiming .jsonl
    assert _foreign_patterns() == ["*.eval", "*.otlp.json", "*.otlp.jsonl", "*.otlp.pb"]


@pytest.mark.parametrize("pattern", _foreign_patterns())
def test_each_foreign_pattern_is_associated_on_every_os(pattern: str) -> None:
    suffix = pattern.removeprefix("*.")
    # Linux: a glob of its own in the MIME package, that type in the desktop entry
    mime = _linux_globs().get(pattern)
    assert mime, f"{pattern} has no shared-mime-info glob"
    desktop = (PACKAGING / "linux" / APP.desktop_file).read_text()
    mime_line = next(ln for ln in desktop.splitlines() if ln.startswith("MimeType="))
    assert f"{mime};" in mime_line
    # macOS: an exported UTI with that extension, which the bundle owns as a viewer
    plist = plistlib.loads((PACKAGING / "macos" / "Info.plist").read_bytes())
    uti = next(
        t["UTTypeIdentifier"]
        for t in plist["UTExportedTypeDeclarations"]
        if suffix in t["UTTypeTagSpecification"]["public.filename-extension"]
    )
    owned = [d for d in plist["CFBundleDocumentTypes"] if uti in d["LSItemContentTypes"]]
    assert [(d["LSHandlerRank"], d["CFBundleTypeRole"]) for d in owned] == [("Owner", "Viewer")]
    # Windows: a ProgID opening it, offered in Open With for its last extension
    keys = _reg(PACKAGING / "windows" / "register-user.reg")
    ext = "." + suffix.rsplit(".", 1)[-1]
    progs = keys[rf"{CLASSES}\{ext}\OpenWithProgids"]
    assert any(
        keys[rf"{CLASSES}\{p}"]["@"] and rf"{CLASSES}\{p}\shell\open\command" in keys for p in progs
    )


def test_no_generic_suffix_is_claimed() -> None:
    for glob in _linux_globs():
        assert not any(glob == f"*.{g}" for g in GENERIC), glob
        assert not any(fnmatch.fnmatch(f"x.{g}", glob) for g in GENERIC), glob
    plist = plistlib.loads((PACKAGING / "macos" / "Info.plist").read_bytes())
    for t in plist["UTExportedTypeDeclarations"]:
        assert not set(t["UTTypeTagSpecification"]["public.filename-extension"]) & set(GENERIC)
    generic_utis = {"public.json", "public.plain-text", "public.data", "public.zip-archive"}
    for d in plist["CFBundleDocumentTypes"]:
        if set(d["LSItemContentTypes"]) & generic_utis:
            assert d["LSHandlerRank"] == "Alternate", d
    keys = _reg(PACKAGING / "windows" / "register-user.reg")
    for g in GENERIC:  # only listed in Open With, the default stays the user's
        assert rf"{CLASSES}\.{g}" not in keys


def test_packaging_readme_lists_every_file_type() -> None:
    text = (PACKAGING / "README.md").read_text()
    for t in APP.file_types:
        row = next((ln for ln in text.splitlines() if ln.startswith(f"| `{t.glob}`")), "")
        for fact in (t.mime_type, t.uti, t.prog_id):
            assert f"`{fact}`" in row, (t.glob, fact)
