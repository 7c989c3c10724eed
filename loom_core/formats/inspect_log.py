"""An opened Inspect AI log, whatever its container: the header, the samples, their labels.

inspect writes a log in one of two containers (``--log-format``): ``eval`` (a zip,
:mod:`.inspect_zip`) or ``json`` (one JSON object, :mod:`.inspect_json`). Both hold the
same header (``eval: {task, model, created, …}``, ``status``) and the same
``EvalSample`` objects, so once opened a log is a :class:`Log` -- its samples in
inspect's order and a way to read one sample's JSON -- and everything after that
(:mod:`.inspect_eval`: the run of a sample, the list of all) is the same for both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from loom_core.formats.inspect_values import text_of

_LABEL_CHARS = 60


class EvalInfo(msgspec.Struct):
    """The members of a log's ``eval`` object a run shows."""

    task: Any = None
    model: Any = None
    created: Any = None
    run_id: Any = None


class Header(msgspec.Struct):
    status: Any = None
    eval: EvalInfo | None = None


@dataclass
class Log:
    """An opened log: what every sample's run shares (read once)."""

    path: str
    header: Header
    members: list[tuple[str, int, str]]  # (id, epoch, key): inspect's order
    listing: list[dict[str, Any]]  # {id, epoch, label} per member, same order
    read: Callable[[str], bytes]  # a member's key -> that sample's JSON


def in_order(found: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    """``(id, epoch, key)`` in inspect's order: epoch, then id (numbers as numbers)."""
    return sorted(found, key=lambda s: (s[1], s[0].zfill(20) if s[0].isdigit() else s[0]))


def listing(members: list[tuple[str, int, str]], summaries: list[Any]) -> list[dict[str, Any]]:
    """``{id, epoch, label}`` of every member, labelled from its summary when there is one
    (``{id, epoch, input, scores, error}``, as inspect's ``summaries.json`` holds)."""
    by_key = {(str(s.get("id")), s.get("epoch")): s for s in summaries if isinstance(s, dict)}
    return [
        {"id": sid, "epoch": ep, "label": _label(sid, ep, by_key.get((sid, ep)))}
        for sid, ep, _ in members
    ]


def _label(sample_id: str, epoch: int, summary: Any) -> str:
    """``7 · epoch 2 · What is 2+3? · match: C``: what a chooser shows for a sample (a
    score by its scorer's name: a bare ``C`` or ``I`` said nothing to who had not run it)."""
    parts = [sample_id, f"epoch {epoch}"]
    if isinstance(summary, dict):
        value = summary.get("input")
        text = value if isinstance(value, str) else text_of_first_user(value)
        if text:
            text = " ".join(text.split())
            parts.append(text[:_LABEL_CHARS] + ("…" if len(text) > _LABEL_CHARS else ""))
        scores = summary.get("scores")
        if isinstance(scores, dict):
            parts += [f"{k}: {v}" for k, v in score_values(scores).items()][:2]
        if summary.get("error"):
            parts.append("error")
    return " · ".join(parts)


def score_values(scores: Any) -> dict[str, Any]:
    """``{scorer: value}`` of a sample's ``scores`` (``{name: {value, answer, …}}``)."""
    if not isinstance(scores, dict):
        return {}
    return {k: s.get("value") for k, s in scores.items() if isinstance(s, dict)}


def text_of_first_user(messages: Any) -> str:
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, dict) and message.get("role") == "user":
                return text_of(message.get("content"))
    return ""


def counts_text(entry: dict[str, Any]) -> str:
    """``3 model steps · 1 scorer step · 1,200 tokens``: what a sample's run holds, from its
    entry of the sample list (:func:`loom_core.formats.inspect_eval.sample_list`), in the
    words the sample bar adds to its label; "" when the entry has no counts (an error)."""
    if "model_steps" not in entry:
        return ""

    def n(count: int, word: str) -> str:
        return f"{count:,} {word}{'' if count == 1 else 's'}"

    parts = [n(entry["model_steps"], "model step")]
    if entry.get("scorer_steps"):
        parts.append(n(entry["scorer_steps"], "scorer step"))
    parts.append(n(entry["input_tokens"] + entry["output_tokens"], "token"))
    return " · ".join(parts)
