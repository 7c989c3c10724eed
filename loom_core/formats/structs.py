"""The load path's structs, declared with msgspec alone (no pydantic).

Why declared here and not derived from :mod:`loom_core.formats.schema` at import: the
pydantic models cost about 90 ms to import and build, which every window paid before
its first rows. The pydantic models stay the format's description;
``tests/core/formats/test_struct_drift.py`` holds these structs equal to them (field
names, order, types, defaults and aliases), so the two cannot drift apart.

Effects (:class:`FastEffectEntry` and what it holds) are decoded by msgspec: scalars keep
their type with ``None`` always allowed (readers default it), nested models are nested
structs, and anything else (``Any``, dicts, lists of plain values) stays
:class:`msgspec.Raw` until asked for; containers a model makes with a default factory
default to ``None`` ("empty" to every reader). The headers
(:mod:`loom_core.formats.header`) keep each model's exact annotation and default, since
they are checked value by value as the pydantic model checked them.
"""

from __future__ import annotations

from typing import Any

import msgspec

CURRENT_VERSION = 2  # of traces (loom-format.md §1.1)
JOURNAL_VERSION = 1  # of journals (§5.1)


class FastUsage(msgspec.Struct, kw_only=True, gc=False):
    """``usage`` of a model result."""

    input_tokens: int | float | None = 0
    output_tokens: int | float | None = 0


class FastToolCall(msgspec.Struct, kw_only=True, gc=False):
    """A tool call of a model result."""

    id: str | None = ""
    name: str | None = ""
    input: msgspec.Raw = None  # type: ignore[assignment]  # a raw null until decoded


class FastModelResult(msgspec.Struct, kw_only=True, gc=False):
    """``result`` of ``model`` and ``sample`` effects."""

    text: str | None = ""
    tool_calls: list[FastToolCall] | None = None
    stop_reason: str | None = "end_turn"
    usage: FastUsage | None = None


class FastEffectMeta(msgspec.Struct, kw_only=True, gc=False):
    """``meta`` of an effect."""

    agent: str | None = None
    sys_hash: str | None = None
    sys_head: str | None = None
    sys_role: str | None = None
    tools: list[str] | None = None
    model: str | None = None
    msgs: int | None = None
    tuid: str | None = None
    usage: msgspec.Raw = None  # type: ignore[assignment]


class FastEffectEntry(msgspec.Struct, kw_only=True, gc=False):
    """One effect of the log, its payloads raw views into the file's bytes."""

    seq: int | None = 0
    kind: str | None = ""
    key: str | None = ""
    result: msgspec.Raw = None  # type: ignore[assignment]
    depth: int | None = 0
    meta: FastEffectMeta | None = None


class FastJournalEffect(FastEffectEntry, kw_only=True, gc=False):
    """An effect (or intent) line of a journal: an effect plus ``type``."""

    type: str | None = "effect"


class Open(msgspec.Struct, kw_only=True):
    """A header-like struct that keeps unknown members, as the pydantic models do.

    ``model_extra`` holds them (the name pydantic gives them, which the views read);
    ``model_dump`` gives the fields then the extras, as pydantic's does.
    """

    model_extra: dict[str, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        """An unknown member as an attribute (``header.fork``), as pydantic gives it."""
        if name != "model_extra" and not name.startswith("__"):
            extra = self.model_extra
            if extra is not None and name in extra:
                return extra[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """Fields in order, then the unknown members (``mode`` as pydantic's; values are JSON's)."""
        del mode
        out = {f: _dumped(getattr(self, f)) for f in self.__struct_fields__ if f != "model_extra"}
        return {**out, **(self.model_extra or {})}


def _dumped(value: Any) -> Any:
    if isinstance(value, Open):
        return value.model_dump()
    if isinstance(value, list):
        return [_dumped(v) for v in value]
    return value


class ShieldEvent(Open, kw_only=True):
    """One firewall decision of a proxy recording."""

    ts: float | None = None
    action: str = ""
    via: str = ""
    tool: str | None = None
    input: Any = None
    rule: str | None = None
    id: str | None = None
    by: str | None = None


class Workspace(Open, kw_only=True):
    """Where ``loom record`` ran the agent."""

    cwd: str | None = None
    os: str | None = None
    python: str | None = None
    recorded_at: str | None = None
    argv: list[str] | None = None
    dialect: str | None = None


class TraceHeader(Open, kw_only=True):
    """Every top-level member of a trace except the bulky ``log`` and ``wire``."""

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


class JournalHeader(Open, kw_only=True):
    """First line of a durable-run journal."""

    type: str = "header"
    version: int = JOURNAL_VERSION
    model: Any = ""
    system: str | None = ""
    episodes: list[str] = msgspec.field(default_factory=list)


# Member order of the two writers (§1.1); saving follows it so files diff cleanly
# against loom-harness's own output.
HARNESS_ORDER = (
    "version",
    "model",
    "system",
    "prompt",
    "episodes",
    "output",
    "truncated",
    "paused",
    "pending",
    "pending_depth",
    "stop_reason",
    "log",
    "systems",
    "healed_by",
    "tools",
)
PROXY_ORDER = (
    "version",
    "recorded_via",
    "model",
    "system",
    "systems",
    "prompt",
    "episodes",
    "output",
    "truncated",
    "paused",
    "pending",
    "pending_depth",
    "stop_reason",
    "log",
    "wire",
    "shield_events",
    "workspace",
)
EFFECT_ORDER = ("seq", "kind", "key", "result", "depth", "meta")
