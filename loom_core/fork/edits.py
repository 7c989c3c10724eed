"""What a user changes at a fork point, as data that can be shown, stored and replayed.

Why a plain description rather than a callback: the edit is written into the
branch's provenance, estimated by a dry run before anything is spent, applied to
a reconstructed Item list (model re-run) or to live wire requests (agent re-run,
through the proxy's fork mode), and re-applied when a paused branch resumes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from loom_core.providers.base import ToolSpec

REDACTED = "[redacted: flagged by checkup]"


@dataclass
class MessageOp:
    """One change to the message list: ``replace`` / ``insert`` / ``delete`` at ``index``.

    ``message`` is an Item dict (role, content, …) for replace and insert.
    Indices refer to the list as it is when the op runs (ops apply in order).
    """

    op: str
    index: int
    message: dict[str, Any] | None = None


@dataclass
class Edit:
    """Everything a fork may change; ``None`` / empty means unchanged."""

    system: str | None = None  # replaces the system prompt
    inject: str | None = None  # a user note appended to the context at the fork point
    redact: list[int] = field(default_factory=list)  # effect seqs whose tool result is redacted
    redact_text: str = REDACTED
    messages: list[MessageOp] = field(default_factory=list)
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    tools: list[ToolSpec] | None = None  # replaces the tools offered
    reason: str = ""

    def is_empty(self) -> bool:
        return self == Edit(reason=self.reason)

    def to_dict(self) -> dict[str, Any]:
        """Only the members that change something (plus the reason), JSON-ready."""
        full = asdict(self)
        blank = asdict(Edit())
        return {k: v for k, v in full.items() if v != blank[k] or k == "reason"}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Edit:
        data = dict(data)
        data["messages"] = [MessageOp(**m) for m in data.get("messages") or []]
        if data.get("tools") is not None:
            data["tools"] = [ToolSpec(**t) for t in data["tools"]]
        return cls(**data)

    def describe(self) -> str:
        """One line for titles and the provenance summary, e.g. ``system, inject, redact 2``."""
        parts = []
        if self.system is not None:
            parts.append("system prompt replaced")
        if self.inject:
            parts.append("note injected")
        if self.redact:
            parts.append(f"redacted {len(self.redact)} result(s)")
        if self.messages:
            parts.append(f"{len(self.messages)} message edit(s)")
        if self.model:
            parts.append(f"model {self.model}")
        if self.temperature is not None or self.max_tokens is not None:
            parts.append("sampling changed")
        if self.tools is not None:
            parts.append(f"{len(self.tools)} tool(s) offered")
        return ", ".join(parts) or "no edit"


def edit_summary(doc: Any, effect: int, value: Any) -> str:
    """One line for an ``edit`` step (not its snapshot as JSON): the fork's own words for
    the edit when the branch's ``fork`` member describes this one, and the note it injected."""
    snap = value if isinstance(value, list) else []
    last = snap[-1] if snap and isinstance(snap[-1], dict) else {}
    note = str(last.get("content") or "") if last.get("source") == "fork-edit" else ""
    words = f"context replaced ({len(snap)} messages)"
    fork = (getattr(doc.header, "model_extra", None) or {}).get("fork")
    if (
        isinstance(fork, dict)
        and isinstance(fork.get("edit"), dict)
        and (fork.get("prefix") in (None, effect) or fork.get("edit_seq") == effect)
    ):
        try:
            words = Edit.from_dict(dict(fork["edit"])).describe()
        except (TypeError, ValueError):
            pass
    return words + (f" — “{note}”" if note else "")
