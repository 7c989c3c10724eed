"""What a checkup reports: findings about a run's context, and the checkup itself.

Why plain frozen dataclasses: the same findings feed the CLI (text and JSON),
the GUI's doctor panel and heal, which needs to know *what* to redact
(``redact_targets``, ``redact_prefix``) and *where* to fork (``model_step``)
without recomputing anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

# loom-harness's three kinds (§10.1) ...
OVERSIZED = "oversized"
UNUSED = "unused"
DUPLICATE = "duplicate"
HARNESS_KINDS = (OVERSIZED, UNUSED, DUPLICATE)
# ... and ours
STALE = "stale"
CONTEXT_BLOAT = "context_bloat"
TOOL_LOOP = "tool_loop"
ERROR_LOOP = "error_loop"
OUR_KINDS = (STALE, CONTEXT_BLOAT, TOOL_LOOP, ERROR_LOOP)

HIGH = "high"
WARN = "warn"

SNIPPET_CHARS = 60  # what loom doctor quotes
PREFIX_CHARS = 48  # what loom-harness's heal matches context items by (§10.2)


@dataclass(frozen=True)
class Finding:
    """One suspect piece of context.

    ``step`` is the seq of the effect where the item entered the context (for a
    user episode: the effect it was placed before; ``None`` if it never was),
    ``effect`` its index in ``doc.effects`` (``None`` for episodes), ``episode``
    the episode index for user items. ``share`` is ``tokens`` over the whole
    context's estimate (0-1). ``snippet`` is the item's first 60 characters and
    ``clipped`` says whether there was more. ``related`` lists other steps the
    finding is about (our kinds). For heal: ``redact_targets`` are the effect
    seqs whose content to redact (harness kinds: every effect whose item starts
    with ``redact_prefix``, the 48-character content prefix loom-harness's heal
    matches items by, so a model effect whose text starts the same way is
    included, as in §10.2; a user episode is matched by the prefix only), and
    ``model_step`` the seq of the first model call that saw the item. ``note`` ends the
    message where loom doctor's words leave a place unnamed (a duplicate's earlier item:
    `` at step 6``); :attr:`text` is the message with it, as the app shows it.
    """

    kind: str
    severity: str
    step: int | None
    effect: int | None
    tokens: int
    share: float
    message: str
    snippet: str
    clipped: bool = False
    episode: int | None = None
    related: tuple[int, ...] = ()
    redact_targets: tuple[int, ...] = ()
    redact_prefix: str | None = None
    model_step: int | None = None
    note: str = ""

    @property
    def text(self) -> str:
        """The message with what it leaves unnamed (``message`` alone is loom doctor's)."""
        return self.message + self.note

    def quoted_snippet(self) -> str:
        """The snippet as ``loom doctor`` prints it: ``repr`` of 60 chars, ``...`` if cut."""
        return repr(self.snippet + ("..." if self.clipped else ""))

    def to_dict(self, with_targets: bool = True) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["related"] = list(self.related)
        data["redact_targets"] = list(self.redact_targets) if with_targets else None
        return data


@dataclass(frozen=True)
class Checkup:
    """All findings of one document (loom doctor's order, then ours by step), over
    ``total_tokens`` of context."""

    path: str
    total_tokens: int
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.findings

    def of_kind(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready. Findings found by a content prefix (the harness kinds) list their
        targets once per prefix under ``redactions`` (``redact_targets: null`` in the
        finding): a result repeated 50,000 times must not print 50,000 lists of 50,000."""
        redactions: dict[str, list[int]] = {}
        findings = []
        for f in self.findings:
            if f.redact_prefix is not None and f.redact_prefix not in redactions:
                redactions[f.redact_prefix] = list(f.redact_targets)
            findings.append(f.to_dict(with_targets=f.redact_prefix is None))
        return {
            "path": self.path,
            "total_tokens": self.total_tokens,
            "findings": findings,
            "redactions": redactions,
        }
