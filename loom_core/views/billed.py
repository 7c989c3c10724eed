"""Tokens a step billed that is not a ``model`` effect: a compaction's or a grader's call.

loom-harness records what such a call produced -- the summary of a ``compact`` effect, the
score of a ``critic`` effect (loom-format.md §1.3) -- but not the call's usage. Readers of
other tools' runs know it (Claude Code writes its compaction call to a file of its own;
an Inspect scorer's grading call is a model event), so they keep it in the effect's
``meta.usage`` (:class:`loom_core.formats.schema.EffectMeta`), in a model result's
``usage`` shape, with the model in ``meta.model``. Every count of a run's tokens and
cost -- the timeline, ``summary``, ``diff``, the pricer -- asks here, so a billed call
is counted once, in every view, whatever kind of step shows it.
"""

from __future__ import annotations

from typing import Any

import msgspec

_generic = msgspec.json.Decoder()


def meta_usage(meta: Any) -> dict[str, Any] | None:
    """The ``usage`` an effect's typed ``meta`` carries, decoded (None: absent, or not an
    object -- a hand-edited value is shown raw in the step's JSON, never counted)."""
    raw = getattr(meta, "usage", None)
    if raw is None:
        return None
    try:
        value = _generic.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def bills_beside_model(effect: Any) -> bool:
    """``effect`` is not a model effect but carries the usage of a call it stands for."""
    meta = getattr(effect, "meta", None)
    return effect.kind != "model" and getattr(meta, "usage", None) is not None
