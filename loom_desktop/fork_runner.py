"""Run one fork (model re-run, resume, or agent re-run) off the GUI thread, streaming it to a journal.

Why a journal: the branch tab is then an ordinary live tab (:mod:`.live_view` tails
the journal like any run being recorded), so a branch appears step by step with the
same step list, plot, context view and follow-tail as every other live run, and no
second "live branch" view has to be kept in step with it. The journal is the §5
file beside the branch (``<base>.journal.jsonl``, the name the proxy uses for its
own recordings, so an agent re-run -- recorded by the fork proxy -- is followed the
same way): the header, the replayed prefix, then each effect as ``on_effect``
reports it. When the run ends the tab switches to the checkpointed trace file.

One thread per run, owned by its :class:`ForkRunner`: ``cancel`` sets the run's
:class:`CancelToken` (a provider checks it between stream events and before each
call, an agent re-run stops the agent's process group), ``stop`` also joins the
thread with a bound. The outcome always arrives, on the GUI thread, as
``finished(RunOutcome)``.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QObject, QStandardPaths, Signal

from loom_core.fork.edits import Edit
from loom_core.journal_writer import JournalWriter
from loom_core.providers import make_provider
from loom_core.providers.base import CancelToken
from loom_core.proxy.config import SessionPaths

NOTHING: Any = object()  # "no tool result supplied" (None is a valid result)
STOP_JOIN_S = 15.0  # a cancelled agent gets SIGTERM, then SIGKILL after 5 s


@dataclass
class ForkJob:
    """What to run. ``mode``: ``model`` (re-run from ``step``), ``resume`` (continue the
    branch at ``out``) or ``agent`` (re-run the recorded command)."""

    parent: str
    step: int  # the fork step's seq in the parent's log
    edit: Edit
    out: str  # the branch file
    mode: str = "model"
    provider: str = "scripted"
    model: str = ""  # shown in messages; the edit carries a model change
    base_url: str | None = None
    max_turns: int = 20
    budget_tokens: int | None = None
    reason: str = ""
    gui_step: int | None = None  # the fork step as the step list numbers it
    tool_result: Any = NOTHING  # resume: the pending call's result
    stop: bool = False  # resume: end the branch here
    timeout: float = 1800.0  # agent: seconds before the agent is stopped

    @property
    def journal(self) -> str:
        return str(SessionPaths.of(self.out).journal)


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


# -- where branches go -------------------------------------------------------------------

def data_dir() -> Path:
    """The app's data directory (tests: beside the config dir they point us at)."""
    env = os.environ.get("LOOM_DESKTOP_CONFIG_DIR")
    if env:
        return Path(env) / "data"
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(base or Path.home() / ".local" / "share" / "loom-desktop")


def branch_path(parent: str | Path, step: int, taken: set[str] = frozenset(),  # type: ignore[assignment]
                fallback: Path | None = None) -> Path:
    """``<parent stem>.fork<step>-<n>.loom.json`` beside the parent (``n`` makes it unique:
    no file, journal or running branch has it); the data dir when the parent's is read-only."""
    parent = Path(parent).resolve()
    name = parent.name
    stem = name[: -len(".loom.json")] if name.endswith(".loom.json") else parent.stem
    folder = parent.parent
    if not os.access(folder, os.W_OK):
        folder = fallback or data_dir()
        folder.mkdir(parents=True, exist_ok=True)
    for n in range(1, 100_000):
        path = folder / f"{stem}.fork{step}-{n}.loom.json"
        if (str(path) not in taken and not path.exists()
                and not SessionPaths.of(path).journal.exists()):
            return path
    raise OSError(f"{folder}: no free name for a branch of {name} at step {step}")


# -- the runner ------------------------------------------------------------------------

class _Relay(QObject):
    """Lives in the GUI thread; the run's thread only emits (queued to the runner's slots)."""

    progress = Signal(int, int)
    line = Signal(str)
    done = Signal(object)


class ForkRunner(QObject):
    """Runs one :class:`ForkJob` in its own thread; see the module docstring."""

    progressed = Signal(int, int)  # live model calls, tokens so far
    output_line = Signal(str)  # an agent re-run's output
    finished = Signal(object)  # RunOutcome

    def __init__(self, job: ForkJob, doc: Any = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.doc = doc  # the parent Document when a tab has it (saves a reload)
        self.token = CancelToken()
        self.outcome: RunOutcome | None = None
        self.live_calls = self.tokens = 0  # as last reported to the GUI thread
        self._calls = self._tokens = 0  # counted on the run's thread
        self._relay = _Relay(self)
        self._relay.progress.connect(self._on_progress)
        self._relay.line.connect(self.output_line)
        self._relay.done.connect(self._on_done)
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self.outcome is None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._work, name=f"fork {Path(self.job.out).name}",
                                        daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        """Ask the run to stop; what was recorded so far is kept as a cancelled branch."""
        self.token.cancel()

    def stop(self, timeout: float = STOP_JOIN_S) -> bool:
        """Cancel and wait (bounded) for the thread; True when it ended."""
        self.cancel()
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    # -- GUI thread ----------------------------------------------------------------------
    def _on_progress(self, calls: int, tokens: int) -> None:
        self.live_calls, self.tokens = calls, tokens
        self.progressed.emit(calls, tokens)

    def _on_done(self, outcome: RunOutcome) -> None:
        self.outcome = outcome
        self.finished.emit(outcome)

    # -- the run's thread ------------------------------------------------------------------
    def _work(self) -> None:
        try:
            outcome = RUNS[self.job.mode](self)
        except BaseException as exc:  # noqa: BLE001 - every failure is reported
            from loom_core.errors import LoadError

            cause = exc.cause if isinstance(exc, LoadError) else str(exc) or type(exc).__name__
            written = self.job.out if Path(self.job.out).is_file() else None
            outcome = RunOutcome("failed", written, cause)
        self._relay.done.emit(outcome)

    def count(self, entry: dict[str, Any]) -> None:
        """``on_effect``: tally live model calls and their tokens."""
        if entry.get("kind") != "model":
            return
        usage = (entry.get("result") or {}).get("usage") or {}
        self._calls += 1
        self._tokens += sum(int(usage.get(k) or 0) for k in ("input_tokens", "output_tokens"))
        self._relay.progress.emit(self._calls, self._tokens)

    def provider(self) -> Any:
        job = self.job
        provider = make_provider(job.provider, "", job.base_url or None)
        ok, why = provider.available()
        if not ok:
            raise ValueError(f"provider {job.provider} is not usable: {why}")
        return provider

    def journal_effects(self, writer: JournalWriter) -> Callable[[dict[str, Any]], None]:
        def on_effect(entry: dict[str, Any]) -> None:
            writer.effect(entry)
            self.count(entry)
        return on_effect


def _run_model(runner: ForkRunner) -> RunOutcome:
    from loom_core.fork.point import apply_edit, fork_context
    from loom_core.fork.prefix import prefix_episodes
    from loom_core.fork.rerun import run_fork
    from loom_core.loader import load
    from loom_core.save import document_dict

    job = runner.job
    doc = runner.doc if runner.doc is not None else load(job.parent)
    ctx = apply_edit(fork_context(doc, job.parent, job.step), job.edit)  # bad edits stop here
    provider = runner.provider()
    try:
        with JournalWriter(job.journal) as journal:
            journal.header(ctx.model, ctx.system, prefix_episodes(doc, ctx.index),
                           (document_dict(doc).get("log") or [])[: ctx.index])
            result = run_fork(doc, job.parent, job.step, job.edit, provider, out=job.out,
                              max_turns=job.max_turns, budget_tokens=job.budget_tokens,
                              reason=job.reason, cancel=runner.token,
                              on_effect=runner.journal_effects(journal))
    finally:
        getattr(provider, "close", lambda: None)()
    return _outcome(result)


def _run_resume(runner: ForkRunner) -> RunOutcome:
    from loom_core.fork.resume import load_branch, resume_fork
    from loom_core.providers.scripted import ScriptedProvider

    job = runner.job
    if job.stop:  # nothing is called: no provider, no journal
        return _outcome(resume_fork(job.out, ScriptedProvider(), stop=True))
    branch = load_branch(job.out)
    provider = runner.provider()
    request = branch.provenance.get("request") or {}
    try:
        with JournalWriter(job.journal) as journal:
            journal.header(branch.provenance.get("model") or "", str(request.get("system") or ""),
                           branch.header.get("episodes") or [], branch.log)
            supplied = {} if job.tool_result is NOTHING else {"tool_result": job.tool_result}
            result = resume_fork(job.out, provider, **supplied,
                                 parent=runner.doc, cancel=runner.token, on_effect=runner.journal_effects(journal))
    finally:
        getattr(provider, "close", lambda: None)()
    return _outcome(result)


def _run_agent(runner: ForkRunner) -> RunOutcome:
    """The fork proxy records the agent (its journal is what the tab follows)."""
    from loom_core.fork.agent_rerun import agent_rerun

    job = runner.job
    result = agent_rerun(job.parent, job.step, job.edit, job.out, cancel=runner.token,
                         on_line=runner._relay.line.emit, timeout=job.timeout)
    status = ("cancelled" if result.cancelled else "timeout" if result.timed_out
              else str(result.fork.get("status") or "done"))
    note = (f"the agent exited with code {result.exit_code}" if result.exit_code is not None
            else "the agent was stopped")
    if result.path is None:
        note += "; it made no model call, so no branch was written"
    return RunOutcome(status, str(result.path) if result.path else None, None, None,
                      result.live, 0, note, list(result.output_tail))


def _outcome(result: Any) -> RunOutcome:
    return RunOutcome(result.status, result.path, result.error, result.pending_call,
                      result.live_calls, result.input_tokens + result.output_tokens)


RUNS: dict[str, Callable[[ForkRunner], RunOutcome]] = {
    "model": _run_model, "resume": _run_resume, "agent": _run_agent}
