"""The one description of the loom formats (loom-format.md §1, §5, §6.6).

Pydantic models are the schema and the validation at the boundaries (a fork's
edits, a wirelog's lines). Opening a run does not import pydantic: it decodes
effects with the msgspec structs of :mod:`loom_core.formats.structs` and checks
a header with :mod:`loom_core.formats.header`, and
``tests/core/formats/test_struct_drift.py`` holds those structs equal to these
models (names, order, types, defaults, aliases), so a field changed here and not
there fails a test.

Every model allows extra fields: unknown members survive a load/save round trip
(the loader keeps the original bytes of each entry; see ``trace.py``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from loom_core.formats.structs import JOURNAL_VERSION


class _Open(BaseModel):
    """Base for format models: unknown fields are kept, not rejected."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Usage(_Open):
    """Token counts of one model call; cache fields and the like ride along as extras."""

    input_tokens: int | float | None = 0
    output_tokens: int | float | None = 0


class ToolCall(_Open):
    """A tool call as recorded in a model result (both wire dialects share it)."""

    id: str | None = ""
    name: str | None = ""
    input: Any = Field(default_factory=dict)

    @field_validator("input", mode="before")
    @classmethod
    def _object_input(cls, value: Any) -> Any:
        """loom-harness reads a non-object input as ``{}``; so do we."""
        return value if isinstance(value, dict) else {}


class ModelResult(_Open):
    """``result`` of ``model`` and ``sample`` effects (§1.4)."""

    text: str | None = ""
    tool_calls: list[ToolCall] | None = Field(default_factory=list)
    stop_reason: str | None = "end_turn"
    usage: Usage | None = None


class EffectMeta(_Open):
    """``meta`` of an effect: who made it and, for proxy model calls, the request's shape."""

    agent: str | None = None
    sys_hash: str | None = None
    sys_head: str | None = None
    sys_role: str | None = None
    tools: list[str] | None = None
    model: str | None = None
    msgs: int | None = None
    tuid: str | None = None
    # Our extension (a new member of ``meta``): the tokens a step that is not a ``model``
    # effect billed, in a model result's ``usage`` shape. loom-harness records a
    # compaction's summary (``compact``) and a reviewer's score (``critic``) but not the
    # call that made them; a foreign run's reader knows that call's usage (Claude Code's
    # compaction, an Inspect scorer's grading call), and every count of tokens and cost
    # reads it through :mod:`loom_core.views.billed`.
    usage: Any = None


class EffectEntry(_Open):
    """One recorded effect of the log (§1.2)."""

    seq: int = 0
    kind: str = ""
    key: str = ""
    result: Any = None
    depth: int = 0
    meta: EffectMeta | None = None


class ContextItem(_Open):
    """One item of an ``edit`` effect's context snapshot (§1.3): what a fork left in context."""

    role: str = "user"
    content: str | None = ""
    source: str | None = None
    pinned: bool | None = False
    tokens: int | None = 0
    tool_calls: list[ToolCall] | None = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None


class ChooseResult(_Open):
    """``choose`` effect: the critic's pick among ``deliberate`` candidates."""

    best: int = 0
    why: str = ""


class CriticResult(_Open):
    """``critic`` effect: the reviewer's score of a final answer."""

    score: float = 1.0
    critique: str = ""


# The ``result`` shape of each effect kind that has a structured one (§1.3); tool,
# human, memory and compact results are plain JSON / strings, time a float.
RESULT_MODELS: dict[str, Any] = {
    "model": ModelResult,
    "sample": ModelResult,
    "choose": ChooseResult,
    "critic": CriticResult,
    "edit": list[ContextItem],
}


class ShieldEvent(_Open):
    """One firewall decision of a proxy recording (§1.6)."""

    ts: float | None = None
    action: str = ""
    via: str = ""
    tool: str | None = None
    input: Any = None
    rule: str | None = None
    id: str | None = None
    by: str | None = None


class Workspace(_Open):
    """Where ``loom record`` ran the agent (§6.9)."""

    cwd: str | None = None
    os: str | None = None
    python: str | None = None
    recorded_at: str | None = None
    argv: list[str] | None = None
    dialect: str | None = None


class TraceHeader(_Open):
    """Every top-level member of a trace except the bulky ``log`` and ``wire``.

    Its struct twin (:class:`loom_core.formats.structs.TraceHeader`) is checked eagerly
    on load; ``log`` goes through the fast structs and ``wire`` stays undecoded until
    something asks for it.
    """

    version: int = 1
    recorded_via: str | None = None
    model: Any = ""
    system: str | None = ""
    systems: dict[str, str] | None = None
    prompt: str = ""
    episodes: list[str] | None = None
    output: str | None = ""
    truncated: bool = False
    paused: bool = False
    pending: str | None = None
    pending_depth: int = 0
    stop_reason: str | None = ""
    healed_by: str | None = None
    tools: dict[str, list[str]] | None = None
    shield_events: list[ShieldEvent] | None = None
    workspace: Workspace | None = None
    checksum: str | None = None
    scrubbed: bool | None = None
    signature: str | None = None


class JournalHeader(_Open):
    """First line of a durable-run journal (§5.1); truncated and rewritten per live run."""

    type: str = "header"
    version: int = JOURNAL_VERSION
    model: Any = ""
    system: str | None = ""
    episodes: list[str] = Field(default_factory=list)


class JournalIntent(_Open):
    """Written just before a live effect executes; an intent without effect is in flight."""

    type: str = "intent"
    seq: int = 0
    kind: str = ""
    key: str = ""
    depth: int = 0


class JournalEffect(EffectEntry):
    """An effect line of a journal: an EffectEntry plus ``type``."""

    type: str = "effect"


class WirelogLine(_Open):
    """One exchange of a proxy's transient ``.wirelog`` (§6.6)."""

    request: dict[str, Any] = Field(default_factory=dict)
    response: dict[str, Any] = Field(default_factory=dict)
    shield_events: list[dict[str, Any]] = Field(default_factory=list)
