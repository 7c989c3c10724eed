"""Model re-run: continue a run from an edited fork point against a live provider.

Why turn by turn with recorded tool results: we cannot run the user's tools (we do
not have them, and re-running a side effect is never safe), so a tool call the
parent also made is answered from the recording and anything new pauses the branch
(``needs_tool_result``) until a person supplies a result or stops it. Every step is
recorded as it happens (and checkpointed to disk after each model call when an
output path is given), so a cancel, a provider error or a crash keeps everything
that was already paid for. ``on_effect`` streams each new entry to a GUI.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loom_core.fork.branch import Branch
from loom_core.fork.budget import MIN_OUTPUT, SharedBudget, billed, input_bound
from loom_core.fork.edits import Edit
from loom_core.fork.items import assistant_item, tool_item
from loom_core.fork.point import apply_edit, fork_context
from loom_core.fork.prefix import start_branch
from loom_core.fork.recorded import RecordedResults, recorded_calls
from loom_core.formats.document import Document
from loom_core.providers.base import (
    Cancelled,
    CancelToken,
    ModelReply,
    ModelRequest,
    Provider,
    ToolSpec,
)
from loom_core.proxy.tracefile import TraceFile

DEFAULT_MAX_TURNS = 20
DEFAULT_MAX_TOKENS = 4096  # when the recording did not say (harness traces never do)
OnEffect = Callable[[dict[str, Any]], None]


@dataclass
class ForkResult:
    """How a re-run ended and what it wrote."""

    status: str  # done | needs_tool_result | max_turns | budget | cancelled | error | stopped
    path: str | None
    branch: dict[str, Any]  # the branch document as written (without its checksum)
    pending_call: dict[str, Any] | None = None
    error: str | None = None
    live_calls: int = 0  # model calls in the branch's tail
    reused: int = 0  # tool results taken from the parent's recording
    supplied: int = 0  # tool results a person supplied
    input_tokens: int = 0
    output_tokens: int = 0
    output: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Everything but the branch document itself (for ``--json``)."""
        return {k: v for k, v in vars(self).items() if k != "branch"}


@dataclass
class LiveState:
    """What the next model call sends: grows by one assistant / tool Item per effect."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[ToolSpec]
    model: str
    max_tokens: int | None
    temperature: float | None

    def request(self) -> ModelRequest:
        return ModelRequest(
            self.system,
            [dict(m) for m in self.messages],
            list(self.tools),
            self.model,
            self.max_tokens or DEFAULT_MAX_TOKENS,
            self.temperature,
        )


@dataclass
class Runner:
    """Drives one branch until it is done, paused or stopped; see the module docstring."""

    branch: Branch
    state: LiveState
    provider: Provider
    results: RecordedResults
    max_turns: int
    budget_tokens: int | None = None
    cancel: CancelToken | None = None
    on_effect: OnEffect | None = None
    out: str | None = None
    shared: SharedBudget | None = None  # a budget other branches spend from too
    pending: dict[str, Any] | None = field(default=None, init=False)
    refused: str | None = field(default=None, init=False)  # why the shared budget said no
    _writer: TraceFile | None = field(default=None, init=False)
    _next_save: float = field(default=0.0, init=False)

    def emit(self, entry: dict[str, Any]) -> None:
        if self.on_effect is not None:
            self.on_effect(entry)

    def run(self, unanswered: list[dict[str, Any]]) -> ForkResult:
        """Answer ``unanswered`` calls of the last reply, then call the model until a stop."""
        error = None
        try:
            status = self._answer(unanswered) if unanswered else None
            while status is None:
                status = self._turn()
        except (Cancelled, KeyboardInterrupt):
            status = "cancelled"
        except Exception as err:  # a provider (or callback) failure: keep what was recorded
            status, error = "error", f"{type(err).__name__}: {err}"
        return self.finish(status, error or self.refused)

    def _turn(self) -> str | None:
        if self.live_calls() >= self.max_turns:
            return "max_turns"
        if self.cancel is not None:
            self.cancel.check()
        request = self.state.request()
        reply = self._call(request)
        if reply is None:
            return "budget"
        self.emit(self.branch.add_model(request, reply))
        self.branch.provenance["model"] = reply.model or request.model
        calls = [dict(c) for c in reply.tool_calls]
        self.state.messages.append(assistant_item(reply.text, calls))
        self.checkpoint()
        if not calls:
            return "done"
        if self.budget_tokens is not None and self.spent() >= self.budget_tokens:
            return "budget"
        return self._answer(calls)

    def _call(self, request: ModelRequest) -> ModelReply | None:
        """The model call; with a shared budget, only once its worst case is reserved
        (``None``: it does not fit), its output capped to the reservation."""
        if self.shared is None:
            return self.provider.complete(request, self.cancel)
        grant = self.shared.reserve(request, self.cancel)
        if grant is None:
            self.refused = (
                f"token budget: {max(0, self.shared.left):,} left, the next call "
                f"may bill up to {input_bound(request) + MIN_OUTPUT:,}"
            )
            return None
        request.max_tokens = grant.max_output
        tokens = 0
        try:
            reply = self.provider.complete(request, self.cancel)
            tokens = billed(reply.usage)
            return reply
        finally:
            self.shared.settle(grant, tokens)

    def _answer(self, calls: list[dict[str, Any]]) -> str | None:
        """Answer calls from the recording, in order; pause at the first unseen one."""
        for call in calls:
            if self.cancel is not None:
                self.cancel.check()
            found = self.results.take(call["name"], call["input"])
            if found is None:
                self.pending = call
                return "needs_tool_result"
            self.record_result(call, found.kind, found.value, {"from_parent": found.seq})
        return None

    def record_result(
        self, call: dict[str, Any], kind: str, value: Any, extra: dict[str, Any]
    ) -> None:
        self.emit(self.branch.add_tool(call, kind, value, extra))
        self.state.messages.append(tool_item(call, value, self.branch.style))

    # -- bookkeeping --------------------------------------------------------------------
    def tail_models(self) -> list[dict[str, Any]]:
        return [e for e in self.branch.tail if e["kind"] == "model"]

    def live_calls(self) -> int:
        return len(self.tail_models())

    def spent(self) -> int:
        return sum(
            _tokens(e, "input_tokens") + _tokens(e, "output_tokens") for e in self.tail_models()
        )

    def save(self) -> dict[str, Any]:
        """Write the branch (atomic, checksummed); the prefix is serialized only once."""
        data = self.branch.to_dict()
        if self.out is not None:
            if self._writer is None:
                self._writer = TraceFile(self.out)
            self._writer.write(data)
        return data

    def checkpoint(self) -> None:
        """Save after a paid call, unless saving a huge branch would dominate the run:
        the next checkpoint waits at least four times as long as the last one took."""
        if self.out is None or time.monotonic() < self._next_save:
            return
        started = time.monotonic()
        self.save()
        self._next_save = time.monotonic() + 4 * (time.monotonic() - started)

    def finish(self, status: str, error: str | None) -> ForkResult:
        prov = self.branch.provenance
        prov["status"] = status
        prov.pop("pending_call", None)
        prov.pop("error", None)
        if status == "needs_tool_result" and self.pending is not None:
            prov["pending_call"] = self.pending
        if error is not None:
            prov["error"] = error
        written = self.save()
        metas = [e.get("meta") or {} for e in self.branch.tail]
        models = self.tail_models()
        return ForkResult(
            status,
            self.out,
            written,
            prov.get("pending_call"),
            error,
            len(models),
            sum(1 for m in metas if "from_parent" in m),
            sum(1 for m in metas if m.get("supplied")),
            sum(_tokens(e, "input_tokens") for e in models),
            sum(_tokens(e, "output_tokens") for e in models),
            written["output"],
        )


def _tokens(entry: dict[str, Any], name: str) -> int:
    usage = (entry.get("result") or {}).get("usage") or {}
    value = usage.get(name, 0)
    return int(value) if isinstance(value, (int, float)) else 0


def run_fork(
    doc: Document,
    path: str | Path,
    seq: int,
    edit: Edit,
    provider: Provider,
    *,
    out: str | Path | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    budget_tokens: int | None = None,
    reason: str = "",
    cancel: CancelToken | None = None,
    on_effect: OnEffect | None = None,
    shared_budget: SharedBudget | None = None,
) -> ForkResult:
    """Fork ``doc`` at model step ``seq`` with ``edit`` and re-run the tail on ``provider``.

    ``shared_budget`` bounds this branch together with others running at the same
    time (see :mod:`.budget`); ``budget_tokens`` bounds this branch alone.

    ValueError for a bad fork point or edit (nothing is called or written then);
    otherwise the branch is written to ``out`` (when given) whatever the outcome.
    """
    if max_turns < 1:
        raise ValueError(f"max_turns must be at least 1 (got {max_turns})")
    if out is not None and not Path(out).resolve().parent.is_dir():
        raise ValueError(f"{out}: cannot write the branch there (no such directory)")
    ctx = apply_edit(fork_context(doc, path, seq), edit)
    branch = start_branch(
        doc,
        path,
        ctx,
        edit,
        provider=provider.name,
        reason=reason,
        max_turns=max_turns,
        budget_tokens=budget_tokens,
    )
    state = LiveState(
        ctx.system, list(ctx.messages), list(ctx.tools), ctx.model, ctx.max_tokens, ctx.temperature
    )
    runner = Runner(
        branch,
        state,
        provider,
        RecordedResults(recorded_calls(doc, ctx.index)),
        max_turns,
        budget_tokens,
        cancel,
        on_effect,
        None if out is None else str(out),
        shared_budget,
    )
    runner.emit(branch.add_edit([dict(m) for m in ctx.messages]))
    return runner.run([])
