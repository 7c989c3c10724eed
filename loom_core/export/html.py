"""Write a run as one static HTML page: timeline, step list and context, no server, no network.

Why: a run must be shareable with someone who has no Loom Desktop — a browser is enough. The
page is self-contained (its data, script and style inline; a Content-Security-Policy that
forbids every fetch and runs only the page's own script, named by its hash), and written atomically where the user chose, never over an existing
file unless asked. ``scrub`` replaces secret-shaped strings with the proxy's own scrubber.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from functools import cache
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from loom_core.export.page_data import page_data
from loom_core.formats.document import Document
from loom_core.formats.save import atomic_write_bytes
from loom_core.views.timeline import Timeline

_MARKER = re.compile(r"\{\{(TITLE|CSS|JS|DATA|SCRIPT_HASH)\}\}")


@cache
def _asset(name: str) -> str:
    return resources.files("loom_core.export").joinpath("assets", name).read_text("utf-8")


def _data_json(data: dict[str, Any]) -> str:
    """JSON safe inside ``<script type=application/json>``: no ``<`` can close the element."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def script_hash(script: str) -> str:
    """The CSP source that lets exactly this inline script run (``'sha256-…'``): with it
    the policy needs no ``'unsafe-inline'``, so a script that an escaping slip let into
    the page's data would not run."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def render_page(doc: Document, timeline: Timeline | None = None, scrub: bool = False) -> str:
    """The page's HTML text."""
    data = page_data(doc, timeline)
    if scrub:
        from loom_core.proxy.scrub import scrub_value

        data = scrub_value(data)
    parts = {
        "TITLE": escape(f"{Path(doc.path).name} — Loom Desktop"),
        "CSS": _asset("page.css"),
        "JS": _asset("page.js"),
        "DATA": _data_json(data),
        "SCRIPT_HASH": script_hash(_asset("page.js")),
    }
    # one pass over the template: text put in is never searched for markers again
    return _MARKER.sub(lambda m: parts[m.group(1)], _asset("page.html"))


def write_page(
    doc: Document, out: str | Path, timeline: Timeline | None = None, scrub: bool = False
) -> int:
    """Write the page atomically; returns its size in bytes."""
    payload = render_page(doc, timeline, scrub).encode("utf-8")
    atomic_write_bytes(out, payload, shared=True)
    return len(payload)
