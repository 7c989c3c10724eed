"""The parent run's tool results, offered to a branch that makes the same calls.

Why: a model re-run must not execute tools (we have none of the user's tools, and
running them again could send the e-mail twice). When the branch's model asks for a
call the parent also made -- same tool, equal arguments -- the recorded result is
the honest answer. Calls at or after the fork point are preferred (the branch is
re-living that part), and each recorded result is used once, in order, so a loop
that reads the same file three times gets the three results it got before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from loom_core.formats.document import Document, text_and_calls


@dataclass(frozen=True)
class RecordedCall:
    """One call of the parent and the effect that answered it."""

    seq: int  # seq of the answering effect (tool:<name> or human)
    kind: str
    name: str
    input: dict[str, Any]
    value: Any  # the recorded result
    after: bool  # made at or after the fork point


def _calls(doc: Document, i: int) -> list[dict[str, Any]]:
    return [c for c in text_and_calls(doc.result(i))[1] if isinstance(c.get("name"), str)]


def recorded_calls(doc: Document, fork_index: int) -> list[RecordedCall]:
    """Every answered top-level call of ``doc``: harness results pair FIFO by name,
    proxy results by tool-use id (loom-format.md §15)."""
    out: list[RecordedCall] = []
    pending: list[tuple[dict[str, Any], int]] = []  # harness: calls of the last model step
    by_id: dict[str, tuple[dict[str, Any], int]] = {}  # proxy: every call by id
    for i, eff in enumerate(doc.effects):
        kind = eff.kind or ""
        if eff.depth:
            continue
        if kind == "model":
            calls = _calls(doc, i)
            pending = [(c, i) for c in calls]
            by_id.update({str(c.get("id") or ""): (c, i) for c in calls})
            continue
        if not (kind.startswith("tool:") or kind == "human"):
            continue
        if doc.is_proxy:
            found = by_id.pop(str(doc.meta(i).tuid or ""), None)
        else:
            name = kind[5:] if kind != "human" else "ask_human"
            found = next((p for p in pending if p[0].get("name") == name), None)
            if found is not None:
                pending.remove(found)
        if found is not None:
            call, model_index = found
            args = call["input"] if isinstance(call.get("input"), dict) else {}
            out.append(
                RecordedCall(
                    eff.seq, kind, str(call["name"]), args, doc.result(i), model_index >= fork_index
                )
            )
    return out


class RecordedResults:
    """Hands out recorded results for matching calls, each at most once."""

    def __init__(self, calls: Iterable[RecordedCall], used: Iterable[int] = ()) -> None:
        calls = list(calls)
        # preferred order: the re-lived part first, then what came before the fork
        self.calls = [c for c in calls if c.after] + [c for c in calls if not c.after]
        self.used: set[int] = set(used)

    def take(self, name: str, args: Any) -> RecordedCall | None:
        """The first unused recorded call of ``name`` with equal arguments, now used."""
        for c in self.calls:
            if c.seq not in self.used and c.name == name and c.input == args:
                self.used.add(c.seq)
                return c
        return None

    def __len__(self) -> int:
        return len(self.calls)
