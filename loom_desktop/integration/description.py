"""The one description of the app and its file type that every OS file is made from.

Keeping these facts in one place is the point: the desktop entry's basename,
the window's ``desktopFileName``, the MIME type in the shared-mime-info package
and the ``MimeType=`` line, the UTI in ``Info.plist`` and the ProgID in the
registry must agree, and they only can if nobody types them twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from loom_desktop import __version__


@dataclass(frozen=True)
class FileType:
    """A document type the app opens."""

    mime_type: str  # freedesktop MIME type (ours: an x- type)
    parent_mime: str  # what it is a kind of, so JSON tools still offer themselves
    suffix: str  # the full compound suffix, without the leading dot
    description: str  # what file managers call it
    uti: str  # macOS exported Uniform Type Identifier
    parent_uti: str  # the UTI it conforms to
    prog_id: str  # Windows versioned ProgID
    glob_weight: int = 60  # shared-mime-info default is 50: beat plain *.json outright
    # offer the app for every file of the parent type too (macOS "Alternate" viewer): yes
    # for JSON, no where the parent is as broad as plain text or any data
    offer_for_parent: bool = True

    @property
    def glob(self) -> str:
        return f"*.{self.suffix}"

    @property
    def windows_extension(self) -> str:
        """Windows associates by the last extension only, so ``.loom.json`` is ``.json``."""
        return "." + self.suffix.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class AppInfo:
    """The application as launchers, docks and Explorer show it."""

    name: str  # the human name
    app_id: str  # desktop file basename, icon name, executable name
    bundle_id: str  # macOS CFBundleIdentifier (reverse DNS)
    generic_name: str
    comment: str
    categories: tuple[str, ...]
    keywords: tuple[str, ...]
    version: str
    file_types: tuple[FileType, ...]

    @property
    def desktop_file(self) -> str:
        return f"{self.app_id}.desktop"

    @property
    def executable(self) -> str:
        return self.app_id


TRACE = FileType(
    mime_type="application/x-loom-trace",
    parent_mime="application/json",
    suffix="loom.json",
    description="Loom agent trace",
    uti="org.loomdesktop.trace",
    parent_uti="public.json",
    prog_id="LoomDesktop.Trace.1",
)

# OpenTelemetry trace files (loom_core/formats/otlp.py): the OTLP file exporter writes JSON
# lines, a single request is JSON, a protobuf dump is binary. Only the compound suffixes are
# claimed, never plain .json / .jsonl / .pb.
OTLP_JSON = FileType(
    mime_type="application/x-otlp-json",
    parent_mime="application/json",
    suffix="otlp.json",
    description="OpenTelemetry trace (OTLP JSON)",
    uti="org.loomdesktop.otlp-json",
    parent_uti="public.json",
    prog_id="LoomDesktop.OtlpJson.1",
)
OTLP_JSONL = FileType(
    mime_type="application/x-otlp-jsonl",
    parent_mime="text/plain",
    suffix="otlp.jsonl",
    description="OpenTelemetry trace (OTLP JSON lines)",
    uti="org.loomdesktop.otlp-jsonl",
    parent_uti="public.plain-text",
    prog_id="LoomDesktop.OtlpJsonl.1",
    offer_for_parent=False,
)
OTLP_PB = FileType(
    mime_type="application/x-otlp-protobuf",
    parent_mime="application/octet-stream",
    suffix="otlp.pb",
    description="OpenTelemetry trace (OTLP protobuf)",
    uti="org.loomdesktop.otlp-pb",
    parent_uti="public.data",
    prog_id="LoomDesktop.OtlpPb.1",
    offer_for_parent=False,
)
# Inspect AI evaluation logs (loom_core/formats/inspect_eval.py): `inspect eval` writes
# logs/*.eval, zip archives; not offered for every zip.
INSPECT_EVAL = FileType(
    mime_type="application/x-inspect-eval-log",
    parent_mime="application/zip",
    suffix="eval",
    description="Inspect AI evaluation log",
    uti="org.loomdesktop.inspect-eval",
    parent_uti="public.zip-archive",
    prog_id="LoomDesktop.InspectEval.1",
    offer_for_parent=False,
)

APP = AppInfo(
    name="Loom Desktop",
    app_id="loom-desktop",
    bundle_id="org.loomdesktop.LoomDesktop",
    generic_name="Agent Trace Debugger",
    comment="Time-travel debugger for AI agent runs",
    categories=("Development", "Debugger"),
    keywords=("agent", "trace", "LLM", "debugger", "loom"),
    version=__version__,
    file_types=(TRACE, OTLP_JSON, OTLP_JSONL, OTLP_PB, INSPECT_EVAL),
)

# Square sizes of the rendered icon: the hicolor theme's usual ones.
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
