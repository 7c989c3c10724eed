"""``ForkContext``: what a model re-run sends at the fork point, and where it came from.

One type for both ways a context is read: :mod:`loom_core.fork.requests` parses a
recorded request into one (``source="request"``), :mod:`loom_core.fork.point` fills one
from the log or the sidecar, and :mod:`loom_core.fork.apply` edits it. A leaf, so that
none of those imports another just for the type.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from loom_core.providers.base import ToolSpec


@dataclass
class ForkContext:
    """Everything a model re-run sends at the fork point, plus where it came from.

    ``messages`` are Item dicts (§1.3); ``origins[k]`` is the seq of the effect that
    produced message ``k`` when known (a redact edit names effects by seq).
    """

    system: str
    messages: list[dict[str, Any]]
    tools: list[ToolSpec]
    model: str = ""
    max_tokens: int | None = None
    temperature: float | None = None
    source: str = "frame"  # "request" | "frame"
    seq: int = 0  # the fork model step's seq
    index: int = 0  # its position in the log
    turn: int = 0  # depth-0 model steps before it (the harness's ``turn``)
    style: str = "harness"  # "harness" | "proxy": how the parent was recorded
    agent: str = ""  # harness meta.agent, or the proxy's sys_hash of the step
    dialect: str | None = None  # the recorded request's dialect (source "request")
    origins: list[int | None] = field(default_factory=list)

    def copy(self) -> ForkContext:
        """A copy whose lists and Items can be replaced freely (Items are copied one level:
        edits replace an Item, they never change one in place)."""
        return replace(
            self,
            messages=[dict(m) for m in self.messages],
            tools=list(self.tools),
            origins=list(self.origins),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (tools as dicts), for ``--json`` output and the GUI."""
        return {
            "system": self.system,
            "messages": self.messages,
            "tools": [asdict(t) for t in self.tools],
            "model": self.model,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "source": self.source,
            "seq": self.seq,
            "turn": self.turn,
            "style": self.style,
        }
