"""The macOS ``Info.plist``: our document type, as an exported UTI the bundle opens.

Finder does not put the file in ``argv``: it sends an open-document event that Qt
turns into ``QFileOpenEvent`` (handled in :mod:`loom_desktop.app`). What makes
Finder send it to us is this plist: ``UTExportedTypeDeclarations`` defines the
trace type (conforming to JSON, so JSON tools still apply) and
``CFBundleDocumentTypes`` names us its owner. A second, ``Alternate``-rank entry
for plain JSON puts us in "Open With" for ``.json`` without claiming it: macOS
types a file by its last extension, so a compound ``.loom.json`` may be typed
as plain JSON by Finder.
"""

from __future__ import annotations

import plistlib
from typing import Any

from loom_desktop.integration.description import AppInfo

MINIMUM_MACOS = "11.0"


def info_plist(app: AppInfo) -> dict[str, Any]:
    icon = f"{app.app_id}.icns"
    documents: list[dict[str, Any]] = [
        {
            "CFBundleTypeName": t.description,
            "CFBundleTypeRole": "Viewer",
            "LSHandlerRank": "Owner",
            "LSItemContentTypes": [t.uti],
            "CFBundleTypeIconFile": icon,
        }
        for t in app.file_types
    ]
    documents.append(
        {
            "CFBundleTypeName": "JSON document",
            "CFBundleTypeRole": "Viewer",
            "LSHandlerRank": "Alternate",
            "LSItemContentTypes": sorted(
                {t.parent_uti for t in app.file_types if t.offer_for_parent}
            ),
        }
    )
    exported = [
        {
            "UTTypeIdentifier": t.uti,
            "UTTypeDescription": t.description,
            "UTTypeConformsTo": [t.parent_uti],
            "UTTypeIconFile": icon,
            "UTTypeTagSpecification": {
                "public.filename-extension": [t.suffix],
                "public.mime-type": [t.mime_type],
            },
        }
        for t in app.file_types
    ]
    return {
        "CFBundleDevelopmentRegion": "en",
        "CFBundleDisplayName": app.name,
        "CFBundleDocumentTypes": documents,
        "CFBundleExecutable": app.executable,
        "CFBundleIconFile": icon,
        "CFBundleIdentifier": app.bundle_id,
        "CFBundleInfoDictionaryVersion": "6.0",
        "CFBundleName": app.name,
        "CFBundlePackageType": "APPL",
        "CFBundleShortVersionString": app.version,
        "CFBundleVersion": app.version,
        "LSMinimumSystemVersion": MINIMUM_MACOS,
        "NSHighResolutionCapable": True,
        "NSPrincipalClass": "NSApplication",
        "UTExportedTypeDeclarations": exported,
    }


def info_plist_bytes(app: AppInfo) -> bytes:
    return plistlib.dumps(info_plist(app), fmt=plistlib.FMT_XML, sort_keys=True)
