"""Run one fork (model re-run, resume, agent re-run) off the GUI thread, streamed to a journal.

Why a journal: the branch tab is then an ordinary live tab (:mod:`loom_desktop.document.live_view` tails
the journal like any run being recorded), so a branch appears step by step with the
same step list, plot, context view and follow-tail as every other live run, and no
second "live branch" view has to be kept in step with it. The journal is the §5
file beside the branch (``<base>.journal.jsonl``, the name the proxy gives its own,
so an agent re-run -- recorded by the fork proxy -- is followed the same way).
When the run ends the tab switches to the checkpointed trace file.

One thread per run, owned by its :class:`ForkRunner`: ``cancel`` sets the run's
:class:`CancelToken` (a provider checks it between stream events and before each
call; an agent re-run stops the agent's process group), ``stop`` also joins the
thread with a bound (both from :class:`~loom_desktop.infra.thread_runner.ThreadRunner`). The outcome
always arrives, on the GUI thread, as ``finished(RunOutcome)``. What runs is in
:mod:`.work`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from loom_core.providers import make_provider as make_provider  # the seam tests replace
from loom_core.runs_dir import free_path, runs_dir, stem_of
from loom_desktop.features.fork.sentinel import NOTHING
from loom_desktop.features.fork.work import (
    ForkJob,
    RunOutcome,
    run_agent,
    run_model,
    run_resume,
)
from loom_desktop.infra.thread_runner import STOP_JOIN_S, Relay, ThreadRunner, failure_cause

__all__ = ["NOTHING", "STOP_JOIN_S", "ForkJob", "ForkRunner", "RunOutcome", "branch_path"]


def branch_path(
    parent: str | Path,
    step: int,
    taken: frozenset[str] | set[str] = frozenset(),
    folder: Path | None = None,
) -> Path:
    """``<parent stem>.fork<step>[-n].loom.json`` in ``folder`` (default: the per-user runs
    folder, never the parent's), a name no file, journal or running branch has -- as the
    CLI's ``fork`` without ``-o`` names it."""
    folder = Path(folder) if folder is not None else runs_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return free_path(folder, f"{stem_of(parent)}.fork{step}", taken=taken)


class _Relay(Relay):
    """``done`` plus a run's progress and an agent's output lines."""

    progress = Signal(int, int)
    line = Signal(str)


class ForkRunner(ThreadRunner):
    """Runs one :class:`ForkJob` in its own thread; see the module docstring."""

    relay_type = _Relay
    _relay: _Relay
    progressed = Signal(int, int)  # live model calls, tokens so far (this run)
    output_line = Signal(str)  # an agent re-run's output
    outcome: RunOutcome | None  # ``finished(RunOutcome)`` keeps it here

    def __init__(self, job: ForkJob, doc: Any = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.doc = doc  # the parent Document when a tab has it (saves a reload)
        self.live_calls = self.tokens = 0  # as last reported to the GUI thread
        self._calls = self._tokens = 0  # counted on the run's thread
        self._relay.progress.connect(self._on_progress)
        self._relay.line.connect(self.output_line)

    def thread_name(self) -> str:
        return f"fork {Path(self.job.out).name}"

    # -- GUI thread ----------------------------------------------------------------------
    def _on_progress(self, calls: int, tokens: int) -> None:
        self.live_calls, self.tokens = calls, tokens
        self.progressed.emit(calls, tokens)

    # -- the run's thread ------------------------------------------------------------------
    def _work(self) -> None:
        job = self.job
        try:
            if job.mode == "agent":
                outcome = run_agent(job, self.token, self._relay.line.emit)
            else:
                run = run_model if job.mode == "model" else run_resume
                outcome = run(job, self.doc, self.provider, self.token, self.count)
        except BaseException as exc:  # noqa: BLE001 - every failure is reported
            outcome = RunOutcome(
                "failed", job.out if Path(job.out).is_file() else None, failure_cause(exc)
            )
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
        """The job's provider, or ValueError naming why it cannot be used."""
        job = self.job
        provider = make_provider(job.provider, "", job.base_url or None)
        ok, why = provider.available()
        if not ok:
            raise ValueError(f"provider {job.provider} is not usable: {why}")
        return provider
