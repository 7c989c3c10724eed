"""The words of the approvals panel: which proxy a call came from, which run it belongs to.

Kept apart from the panel's widgets so each sentence is written (and tested) once.
"""

from __future__ import annotations

from typing import Any

from loom_core.views.steps import effect_seq


def source_name(connection: Any, run: Any = None) -> str:
    """``proxy 127.0.0.1:8790 (demo.journal.jsonl)``: the proxy, and its run when it is open."""
    name = f"proxy {connection.label}"
    path = getattr(run, "path", None)
    return f"{name} ({str(path).rsplit('/', 1)[-1]})" if path else name


def belongs_to(view: Any) -> str:
    """Which model call of which run a held call belongs to (by seq, as the step list
    numbers it): the proxy records it, with its decision, once it is decided."""
    if view is None:
        return ""
    effects = getattr(getattr(view, "doc", None), "effects", None) or []
    run = f"<i>{str(view.path).rsplit('/', 1)[-1]}</i>"
    call = (
        f"the model call after step {effect_seq(effects, len(effects) - 1)}"
        if effects
        else "the first model call"
    )
    return f"<br>belongs to {call} of {run} (recorded once decided)"


def status_text(rows: list[Any]) -> str:
    """``no held calls``, ``1 held call(s)``, ``3 held call(s) from 2 proxies``."""
    if not rows:
        return "no held calls"
    proxies = len({id(row.source) for row in rows})
    where = f" from {proxies} proxies" if proxies > 1 else ""
    return f"{len(rows)} held call(s){where}"
