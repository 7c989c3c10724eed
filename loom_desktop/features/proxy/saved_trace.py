"""A proxy's live tab says where the proxy saves its trace instead of offering to save one.

Why: a proxy started with a save path (``--save``, Proxy ▸ Start…) writes its trace while
it records and finishes it when it stops. Its journal's tab offered "Save as trace…" (in
bold, "Run finished — save as trace…", once the run ended): a second copy of what the
proxy had saved already, under a name the user would have to choose again. The tab's bar
names the proxy's trace instead, with a button that opens it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QPushButton


def show_saved_trace(window: Any, live: Any, save: str) -> QPushButton:
    """Replace ``live``'s "Save as trace…" with the trace the proxy saves at ``save``
    (a button that opens it in a tab of its own); the button."""
    bar = live.bar
    bar.save.hide()
    button = QPushButton(f"Trace saved by the proxy: {Path(save).name} — Open", bar)
    button.setObjectName("proxy_trace")
    button.setToolTip(f"The proxy saves this run's trace to {save}; open it in a tab")
    button.clicked.connect(lambda _checked=False: window.open_path(save))
    bar.layout().addWidget(button)
    return button
