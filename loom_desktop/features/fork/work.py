"""What a fork does off the GUI thread: read the fork point, estimate, run, resume, agent re-run.

Why Qt-free functions: the dialog's workers and the runner's thread call them with
plain values (a job, a cancel token, callbacks), so they never touch a widget and
their outcome is one :class:`RunOutcome` whatever happened. A model run writes the
§5 journal the branch tab follows (header, replayed prefix, then each effect as
the core reports it); an agent re-run is journaled by its fork proxy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loom_core.fork.edits import Edit
from loom_core.fork.plan import dry_run
from loom_core.fork.point import apply_edit, fork_context
from loom_core.fork.prefix import prefix_episodes
from loom_core.fork.rerun import run_fork
from loom_core.fork.resume import load_branch, resume_fork
from loom_core.formats.journal_writer import JournalWriter
from loom_core.formats.loader import load
from loom_core.formats.save import document_dict
from loom_core.providers.base import CancelToken
from loom_core.providers.names import guess_provider
from loom_core.providers.scripted import ScriptedProvider
from loom_core.proxy.config import SessionPaths
from loom_core.proxy.forkwire import check_agent_edit
from loom_desktop.features.fork.sentinel import NOTHING
from loom_desktop.features.fork.settings import availability

OnEffect = Callable[[dict[str, Any]], None]
ProviderFactory = Callable[[], Any]


@dataclass
class ForkJob:
    """What to run. ``mode``: ``model`` (re-run from ``step``), ``resume`` (continue the
    branch at ``out``) or ``agent`` (re-run the recorded command)."""

    parent: str
    step: int  # the fork step's seq in the parent's log
    edit: Edit
    out: str  # the branch file ("" until the runner picks one)
    mode: str = "model"
    provider: str = "scripted"
    model: str = ""  # shown in messages; the edit carries a model change
    base_url: str | None = None
    max_turns: int = 20
    budget_tokens: int | None = None
    reason: str = ""
    tool_result: Any = NOTHING  # resume: the pending call's result
    stop: bool = False  # resume: end the branch here
    timeout: float = 1800.0  # agent: seconds before the agent is stopped
    folder: str = ""  # where a new branch goes ("": the per-user runs folder)

    @property
    def journal(self) -> str:
        """``<base>.journal.jsonl`` beside the branch (the proxy's name for its journal)."""
        return str(SessionPaths.of(self.out).journal)

    @property
    def where(self) -> str:
        return f"{Path(self.parent).name} at step {self.step}"


@dataclass
class RunOutcome:
    """How a run ended. ``status`` is the branch's status, or ``failed`` when nothing
    could run (bad edit, unusable provider, no agent workspace...)."""

    status: str
    path: str | None  # the branch file, when one was written
    error: str | None = None
    pending_call: dict[str, Any] | None = None
    live_calls: int = 0
    tokens: int = 0
    note: str = ""  # extra words for the user (agent exit code, ...)
    output_tail: list[str] = field(default_factory=list)


def _outcome(result: Any) -> RunOutcome:
    return RunOutcome(
        result.status,
        result.path,
        result.error,
        result.pending_call,
        result.live_calls,
        result.input_tokens + result.output_tokens,
    )


def _journaled(writer: JournalWriter, on_effect: OnEffect) -> OnEffect:
    def both(entry: dict[str, Any]) -> None:
        writer.effect(entry)
        on_effect(entry)

    return both


def run_model(
    job: ForkJob, doc: Any, provider: ProviderFactory, cancel: CancelToken, on_effect: OnEffect
) -> RunOutcome:
    """Re-run from ``job.step``; a bad fork point or edit raises before any provider."""
    doc = doc if doc is not None else load(job.parent)
    ctx = apply_edit(fork_context(doc, job.parent, job.step), job.edit)
    live = provider()
    try:
        with JournalWriter(job.journal) as journal:
            journal.header(
                ctx.model,
                ctx.system,
                prefix_episodes(doc, ctx.index),
                (document_dict(doc).get("log") or [])[: ctx.index],
            )
            result = run_fork(
                doc,
                job.parent,
                job.step,
                job.edit,
                live,
                out=job.out,
                max_turns=job.max_turns,
                budget_tokens=job.budget_tokens,
                reason=job.reason,
                cancel=cancel,
                on_effect=_journaled(journal, on_effect),
            )
    finally:
        getattr(live, "close", lambda: None)()
    return _outcome(result)


def run_resume(
    job: ForkJob, doc: Any, provider: ProviderFactory, cancel: CancelToken, on_effect: OnEffect
) -> RunOutcome:
    """Continue the branch at ``job.out`` (with ``job.tool_result``), or stop it."""
    if job.stop:  # nothing is called: no provider, no journal
        return _outcome(resume_fork(job.out, ScriptedProvider(), stop=True, parent=doc))
    branch = load_branch(job.out)
    request = branch.provenance.get("request") or {}
    supplied = {} if job.tool_result is NOTHING else {"tool_result": job.tool_result}
    live = provider()
    try:
        with JournalWriter(job.journal) as journal:
            journal.header(
                branch.provenance.get("model") or "",
                str(request.get("system") or ""),
                branch.header.get("episodes") or [],
                branch.log,
            )
            result = resume_fork(
                job.out,
                live,
                **supplied,
                parent=doc,
                cancel=cancel,
                on_effect=_journaled(journal, on_effect),
            )
    finally:
        getattr(live, "close", lambda: None)()
    return _outcome(result)


def run_agent(job: ForkJob, cancel: CancelToken, on_line: Callable[[str], None]) -> RunOutcome:
    """Re-run the recorded command against a fork proxy (which journals the branch).
    (The fork proxy's module, with aiohttp, is imported here: not on the window's start.)"""
    from loom_core.fork.agent_rerun import agent_rerun

    result = agent_rerun(
        job.parent, job.step, job.edit, job.out, cancel=cancel, on_line=on_line, timeout=job.timeout
    )
    status = (
        "cancelled"
        if result.cancelled
        else "timeout"
        if result.timed_out
        else str(result.fork.get("status") or "done")
    )
    note = (
        f"the agent exited with code {result.exit_code}"
        if result.exit_code is not None
        else "the agent was stopped"
    )
    if result.path is None:
        note += "; it made no model call, so no branch was written"
    return RunOutcome(
        status,
        str(result.path) if result.path else None,
        None,
        None,
        result.live,
        0,
        note,
        list(result.output_tail),
    )


# -- the dialog's workers ------------------------------------------------------------------


def read_fork_point(doc: Any, path: str, seq: int) -> dict[str, Any]:
    """The context at ``seq``, the provider that speaks like the parent, and whether an
    agent re-run is possible (argv and cwd) or why not."""
    from loom_core.fork.agent_rerun import NOT_RECORDED, AgentRerunError, plan_agent_rerun

    ctx = fork_context(doc, path, seq)
    workspace, why = None, NOT_RECORDED
    if getattr(doc.header, "workspace", None) is not None:
        try:
            plan = plan_agent_rerun(path, seq, Edit())
            workspace = (list(plan.argv), plan.cwd)
        except (AgentRerunError, ValueError, OSError) as err:
            why = str(err)
    return {"ctx": ctx, "provider": guess_provider(ctx), "workspace": workspace, "why": why}


def estimate(
    doc: Any,
    path: str,
    seq: int,
    edit: Edit,
    max_turns: int,
    make: Callable[[], Any],
    agent: bool = False,
) -> dict[str, Any]:
    """The provider's availability line and the dry run (or why the edit cannot run;
    an agent re-run also refuses edits the agent's own loop would not see)."""

    provider = make()
    try:
        ok, line = availability(provider)
        try:
            if agent:
                check_agent_edit(edit)
            plan, error = dry_run(doc, path, seq, edit, max_turns, provider), None
        except ValueError as err:  # ForkError is one too
            plan, error = None, str(err)
    finally:
        getattr(provider, "close", lambda: None)()
    return {"ok": ok, "line": line, "plan": plan, "error": error}
