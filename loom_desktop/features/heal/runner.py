"""Heal in the app: plan the repairs in a worker, run them in a thread the dialog owns.

Why two phases: the plan (the checkup, then one dry-run estimate per finding) is
shown before anything is spent, and it is what the user starts; the run then
goes through exactly those candidates. The run is one thread per heal, owned by
its :class:`HealRunner`; the core :class:`~loom_core.heal.engine.Healer` starts its
own candidate threads inside it and joins them before returning, so joining the
runner's thread (``stop``, :class:`~loom_desktop.infra.thread_runner.ThreadRunner`) leaves no thread
behind; ``cancel`` stops queued candidates and asks running ones to stop (their
branches are kept). ``Healer`` reports each candidate from those threads; the
runner forwards a *snapshot* of it through a queued signal, so the GUI thread never
reads a candidate while it is changing.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from loom_core.doctor import checkup
from loom_core.heal.checks import Check
from loom_core.heal.engine import Healer, HealOptions, HealResult, plan_repairs, save_regression
from loom_core.providers import checked_factory, make_provider
from loom_core.providers.base import CancelToken
from loom_core.runs_dir import free_dir, runs_dir, stem_of
from loom_desktop.features.fork.settings import availability
from loom_desktop.features.fork.work import read_fork_point
from loom_desktop.infra.thread_runner import Relay, ThreadRunner, failure_cause


@dataclass
class HealPlan:
    """What the dialog shows before Start: the findings, their repairs, how to run them."""

    findings: tuple[Any, ...]
    candidates: list[Any]
    total_tokens: int = 0
    recorded_model: str = ""
    provider: str = "anthropic"  # the provider that speaks like the run
    workspace: tuple[list[str], str] | None = None  # an agent re-run's (argv, cwd)
    why_no_agent: str = ""


@dataclass
class HealJob:
    """One heal to run: the planned candidates (copied, so a plan can be run again)."""

    doc: Any
    path: str
    check: Check
    findings: Sequence[Any]
    candidates: list[Any]
    out_dir: str
    options: HealOptions = field(default_factory=HealOptions)
    provider: str = "scripted"
    model: str = ""
    base_url: str | None = None


def plan_heal(
    doc: Any, path: str, findings: Sequence[Any] | None, options: HealOptions
) -> HealPlan:
    """Worker: the checkup (unless the doctor panel already has it), the candidates
    cheapest first, and the fork facts the run settings are prefilled from."""
    total = 0
    if findings is None:
        found = checkup(doc)
        findings, total = found.findings, found.total_tokens
    candidates = plan_repairs(doc, path, findings, options)
    plan = HealPlan(tuple(findings), candidates, total)
    first = next((e.seq for e in doc.effects if e.kind == "model" and not e.depth), None)
    if first is not None:
        _fork_facts(plan, doc, path, first)
    return plan


def _fork_facts(plan: HealPlan, doc: Any, path: str, seq: int) -> None:
    """The run settings are prefilled as the fork dialog's are (the same reading of the fork
    point): the recorded model, the provider that speaks like the run, and whether the agent
    can be re-run (its workspace was recorded and its command is there) or why not."""
    found = read_fork_point(doc, path, seq)
    plan.recorded_model, plan.provider = found["ctx"].model or "", found["provider"]
    plan.workspace, plan.why_no_agent = found["workspace"], found["why"]


def provider_factory(name: str, model: str, base_url: str | None) -> Callable[[], Any]:
    """One provider per candidate (they may run at once), checked once up front: an unusable
    provider is reported before any candidate starts, naming the reason."""
    return checked_factory(lambda: make_provider(name, model, base_url), name)


def out_dir_for(path: str | Path, folder: str | Path | None = None) -> Path:
    """A new ``<trace stem>.heal`` folder in ``folder`` (default: the per-user runs folder;
    ``-2``… when a previous heal's branches are there: they may be open in tabs), as the
    CLI's ``heal`` picks it."""
    base = Path(folder).expanduser() if folder else runs_dir()
    return free_dir(base, stem_of(path) + ".heal")


# -- for the dialog -----------------------------------------------------------------


def pick_directory(parent: QWidget, start: str) -> str:
    """Ask where to save the regression trace (a seam: tests replace it)."""
    return QFileDialog.getExistingDirectory(parent, "Save the regression trace in", start)


def probe(name: str, model: str, base_url: str | None) -> tuple[bool, str]:
    """Worker: can this provider run (its key, its base URL)? Never shows the key."""
    provider = make_provider(name, model, base_url)
    try:
        return availability(provider)
    finally:
        getattr(provider, "close", lambda: None)()


def save_winner(winner: str, folder: str) -> str:
    """The winning branch saved as a regression trace in ``folder`` (the engine names it
    ``healed-<hash>.loom.json``); OSError or ValueError naming the cause when it cannot."""
    data = json.loads(Path(winner).read_text(encoding="utf-8"))
    return save_regression(data, folder)


class _Relay(Relay):
    """``done`` plus each candidate's snapshot and a failure's words."""

    update = Signal(object)
    error = Signal(str)


class HealRunner(ThreadRunner):
    """Runs one :class:`HealJob` in its own thread; see the module docstring."""

    relay_type = _Relay
    _relay: _Relay
    updated = Signal(object)  # a Candidate snapshot
    outcome: HealResult | None  # ``finished(HealResult)`` keeps it here
    failed = Signal(str)  # the heal could not run (provider, files...): one line

    def __init__(self, job: HealJob, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.error: str | None = None
        self._relay.update.connect(self.updated)
        self._relay.error.connect(self._on_error)

    @property
    def ended(self) -> bool:
        """The outcome reached the GUI thread (``finished`` or ``failed`` was emitted)."""
        return self.outcome is not None or self.error is not None

    def thread_name(self) -> str:
        return f"heal {Path(self.job.path).name}"

    # -- GUI thread ----------------------------------------------------------------------
    def _on_error(self, message: str) -> None:
        self.error = message
        self.failed.emit(message)

    # -- the heal's threads ----------------------------------------------------------------
    def _work(self) -> None:
        job = self.job
        try:
            factory = (
                None
                if job.options.mode == "agent"
                else provider_factory(job.provider, job.model, job.base_url)
            )
            healer = Healer(
                job.doc,
                job.path,
                job.check,
                factory,
                job.out_dir,
                job.options,
                cancel=self.token,
                on_update=self._report,
            )
            healer.candidates = [replace(c, cancel=CancelToken()) for c in job.candidates]
            result = healer.run(job.findings)
        except BaseException as exc:  # noqa: BLE001 - every failure is reported
            self._relay.error.emit(failure_cause(exc))  # the dialog names the file
            return
        self._relay.done.emit(result)

    def _report(self, cand: Any) -> None:
        """``on_update`` (any heal thread): a copy, so the GUI reads a consistent row."""
        self._relay.update.emit(copy.copy(cand))
