"""Branch tabs: a fork streamed into a live tab, then swapped for its trace; parent ⟷ branch links.

Why swap tabs rather than morph one: a tab is a :class:`DocumentView` over one file.
While a fork runs, the tab follows the run's journal (an ordinary live tab); when it
ends, a fresh view of the branch trace takes the same place in the tab bar, with
the checksum, the final status and the branch bar read from the file itself -- so
a branch opened later from disk looks exactly like one made in this session.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThreadPool, Signal
from shiboken6 import isValid

from loom_core.fork.edits import Edit
from loom_desktop.features.fork.branch_bar import BranchBar, BranchesBar
from loom_desktop.features.fork.links import (
    BranchInfo,
    branch_title,
    edit_row,
    edit_text,
    find_branches,
    fork_member,
    is_provenance,
    row_of_seq,
    same_file,
)
from loom_desktop.features.fork.sentinel import NOTHING
from loom_desktop.infra.thread_runner import STOP_JOIN_S

if TYPE_CHECKING:
    from loom_desktop.features.fork.runner import ForkJob, ForkRunner, RunOutcome


class _Relay(QObject):
    """Carries a branch scan's result from the pool to the GUI thread."""

    found = Signal(str, object)


class BranchTabs(QObject):
    """Owns the running forks of one window and the links between their tabs."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.runners: list[ForkRunner] = []
        self.made: dict[str, list[str]] = {}  # parent (absolute) -> branches made this session
        self.endpoints: dict[str, tuple[str, str | None]] = {}  # branch -> (provider, base URL)
        self._relay = _Relay(self)
        self._relay.found.connect(self._on_scan)
        self.closed = False

    # -- running -------------------------------------------------------------------------
    def start(self, job: ForkJob, doc: Any = None, replace: Any = None) -> ForkRunner:
        """Run ``job``; its branch streams into a new tab (or into ``replace``'s place)."""
        from loom_desktop.features.fork.runner import ForkRunner, branch_path  # when used

        if not job.out:
            taken = {r.job.out for r in self.runners}
            job.out = str(
                branch_path(
                    job.parent,
                    job.step,
                    taken,
                    Path(job.folder).expanduser() if job.folder else None,
                )
            )
        if job.stop:  # nothing streams: the tab just reloads when the file is rewritten
            view = replace
            bar = view.findChild(BranchBar)
        else:
            journal = Path(job.journal)
            journal.unlink(missing_ok=True)  # a previous run's: the tab must not show it first
            view = (
                self._swap(replace, str(journal))
                if replace is not None
                else self.window.open_path(str(journal))
            )
            self._title(view, "● " + branch_title(job.parent, job.step, job.edit.describe()))
            bar = BranchBar(
                Path(job.parent).name,
                job.step,
                job.edit.describe(),
                "agent" if job.mode == "agent" else "model",
            )
            bar.set_path(job.out)
            view.layout().insertWidget(0, bar)
            bar.parent_requested.connect(lambda: self.open_parent(job.parent, job.step))
        runner = ForkRunner(job, doc, self)
        if bar is not None:
            bar.set_status("running")
            bar.cancel_requested.connect(runner.cancel)
            runner.progressed.connect(bar.set_progress)
            runner.output_line.connect(bar.set_line)
        runner.finished.connect(lambda outcome: self._finished(runner, view, outcome))
        view.destroyed.connect(runner.cancel)  # the tab was closed: stop paying for it
        self.runners.append(runner)
        self.made.setdefault(str(Path(job.parent).resolve()), []).append(job.out)
        if job.mode != "agent":
            self.endpoints[job.out] = (job.provider, job.base_url)
        runner.start()
        self.refresh_parent(job.parent)
        return runner

    def _finished(self, runner: ForkRunner, view: Any, outcome: RunOutcome) -> None:
        runner.stop(5.0)  # the thread has reported; this only reaps it
        if self.closed:
            return  # the window is closing: no new tabs, no dialogs
        if runner in self.runners:
            self.runners.remove(runner)
        runner.deleteLater()
        trace = outcome.path if outcome.path and Path(outcome.path).is_file() else None
        if isValid(view) and self.window.tabs.indexOf(view) >= 0:  # else the tab was closed
            if trace is not None:
                self._swap(view, trace)
            else:
                self.window.close_tab(self.window.tabs.indexOf(view))
        self._report(runner.job, outcome, trace)
        self.refresh_parent(runner.job.parent)

    def _report(self, job: ForkJob, outcome: RunOutcome, trace: str | None) -> None:
        where = job.where
        kept = f"\n\nThe partial branch is kept: {trace}" if trace else ""
        if outcome.status == "error":
            who = f"{job.provider} {job.model}".strip()
            self._error(
                "Fork failed",
                f"The fork of {where} stopped: the provider {who} failed.\n\n{outcome.error}{kept}",
            )
        elif outcome.status == "failed":
            self._error("Cannot fork", f"Cannot fork {where}\n\n{outcome.error}{kept}")
        elif outcome.note and trace is None:
            self._error(
                "No branch",
                f"Agent re-run of {where}: {outcome.note}.\n\n"
                + "\n".join(outcome.output_tail[-8:]),
            )
        words = f"Branch of {where}: {outcome.status}"
        words += f" ({outcome.note})" if outcome.note else ""
        self.window.show_status(words + (f" — {trace}" if trace else ""), 15_000)

    def _error(self, title: str, message: str) -> None:
        self.window.report_error(title, message)

    def shutdown(self) -> None:
        """Cancel every run and wait for its thread (bounded); the branches keep what ran."""
        self.closed = True
        for runner in self.runners:
            runner.cancel()  # all at once: they wind down together
        deadline = time.monotonic() + STOP_JOIN_S
        for runner in self.runners:
            runner.stop(max(0.0, deadline - time.monotonic()))
        self.runners.clear()

    # -- tabs ------------------------------------------------------------------------------
    def _swap(self, old: Any, path: str) -> Any:
        """Open ``path`` in ``old``'s place in the tab bar and close ``old``."""
        tabs = self.window.tabs
        index, current = tabs.indexOf(old), tabs.currentWidget()
        view = self.window.open_path(path)
        if index >= 0:
            tabs.tabBar().moveTab(tabs.indexOf(view), index)
            self.window.close_tab(tabs.indexOf(old))
        if current is not old and current is not None and tabs.indexOf(current) >= 0:
            tabs.setCurrentWidget(current)
        return view

    def _title(self, view: Any, title: str) -> None:
        index = self.window.tabs.indexOf(view)
        if index >= 0:
            self.window.tabs.setTabText(index, title)

    # -- links -----------------------------------------------------------------------------
    def on_loaded(self, view: Any) -> None:
        """A trace finished loading: a branch gets its bar; every trace its Branches list."""
        if view.doc is None or view.doc.format != "trace" or view.findChild(BranchBar):
            return
        prov = getattr(view.doc.header, "fork", None)
        if is_provenance(prov):
            self._branch_bar(view, prov)
            # a branch made elsewhere (a heal's winner, the CLI) joins its open parent's list
            self.refresh_parent(str(prov["parent"]["path"]))
        self.scan(view)

    def _branch_bar(self, view: Any, prov: dict[str, Any]) -> None:
        parent, seq = str(prov["parent"]["path"]), int(prov.get("step") or 0)
        won = getattr(view.doc.header, "healed_by", None)
        healed = won if isinstance(won, str) else ""
        bar = BranchBar(
            Path(parent).name, seq, edit_text(prov), str(prov.get("mode") or "model"), healed
        )
        bar.set_status(str(prov.get("status") or ""), prov.get("pending_call"), prov.get("error"))
        bar.set_path(view.path)
        bar.parent_requested.connect(lambda: self.open_parent(parent, seq))
        bar.compare_requested.connect(lambda: self.window.open_compare(parent, view))
        bar.continue_requested.connect(lambda value: self.resume(view, prov, value))
        bar.stop_requested.connect(lambda: self.resume(view, prov, stop=True))
        view.layout().insertWidget(0, bar)
        self._title(view, branch_title(parent, seq, edit_text(prov), healed))
        view.session.set_step(edit_row(view, prov) + 1)  # the first call that saw the edit

    def resume(
        self, view: Any, prov: dict[str, Any], tool_result: Any = NOTHING, stop: bool = False
    ) -> ForkRunner | None:
        """Continue the branch in ``view`` (with a tool result, or stop it) in the same tab."""
        from loom_desktop.features.fork.runner import ForkJob

        if any(same_file(r.job.out, view.path) for r in self.runners):
            return None  # already running
        provider, base_url = self.endpoints.get(view.path, (str(prov.get("provider") or ""), None))
        parent = str(prov["parent"]["path"])
        try:
            edit = Edit.from_dict(dict(prov.get("edit") or {}))
        except (TypeError, ValueError):
            edit = Edit()
        job = ForkJob(
            parent,
            int(prov.get("step") or 0),
            edit,
            view.path,
            "resume",
            provider or "scripted",
            str(prov.get("model") or ""),
            base_url,
            tool_result=tool_result,
            stop=stop,
        )
        return self.start(job, self._parent_doc(parent), replace=view)

    def _parent_doc(self, parent: str) -> Any:
        view = self._open_view(parent)
        return view.doc if view is not None and view.complete else None

    def _open_view(self, path: str) -> Any:
        return next(
            (
                v
                for v in self.window.documents()
                if v.doc is not None and v.doc.format == "trace" and same_file(v.path, path)
            ),
            None,
        )

    def open_parent(self, parent: str, seq: int) -> Any:
        """Select (or open) the parent's tab, at the fork step."""
        view = self._open_view(parent)
        if view is None:
            view = self.window.open_path(parent)
            view.loaded.connect(lambda: view.session.set_step(row_of_seq(view, seq)))
            return view
        self.window.tabs.setCurrentWidget(view)
        view.session.set_step(row_of_seq(view, seq))
        return view

    def open_branch(self, path: str) -> Any:
        running = next((r for r in self.runners if same_file(r.job.out, path)), None)
        journal = running.job.journal if running is not None else None
        for v in self.window.documents():
            if same_file(v.path, path) or (journal and same_file(v.path, journal)):
                self.window.tabs.setCurrentWidget(v)
                return v
        return self.window.open_path(path)

    def scan(self, view: Any) -> None:
        """List the branches beside ``view``'s trace (on the pool) in its Branches bar.

        The result goes by path to whichever tabs show that file when it arrives, so a
        tab closed meanwhile is simply not among them."""
        path, relay = view.path, self._relay

        def work() -> None:
            found = find_branches(path)
            try:
                relay.found.emit(path, found)
            except RuntimeError:
                pass  # the window closed meanwhile

        QThreadPool.globalInstance().start(work)

    def _on_scan(self, path: str, found: list[BranchInfo]) -> None:
        for view in self.window.documents():
            if view.path == path and view.doc is not None and view.doc.format == "trace":
                self._show_branches(view, list(found))

    def refresh_parent(self, parent: str) -> None:
        for view in self.window.documents():
            if view.doc is not None and view.doc.format == "trace" and same_file(view.path, parent):
                self.scan(view)

    def _show_branches(self, view: Any, found: list[BranchInfo]) -> None:
        known = {str(Path(b.path).resolve()) for b in found}
        for path in self.made.get(str(Path(view.path).resolve()), []):
            if str(Path(path).resolve()) not in known:
                found.append(self._session_branch(path))
        bar = view.findChild(BranchesBar)
        if bar is None and not found:
            return
        if bar is None:
            bar = BranchesBar()
            bar.open_requested.connect(self.open_branch)
            view.layout().insertWidget(1 if view.findChild(BranchBar) else 0, bar)
        bar.set_branches(found)

    def _session_branch(self, path: str) -> BranchInfo:
        """A branch made here that the scan did not find (still running, or in the data dir)."""
        running = next((r for r in self.runners if same_file(r.job.out, path)), None)
        prov = fork_member(path) if Path(path).is_file() else None
        job = running.job if running is not None else None
        status = "running" if running is not None else str((prov or {}).get("status") or "failed")
        seq = job.step if job is not None else int((prov or {}).get("step") or 0)
        edit = job.edit.describe() if job is not None else edit_text(prov or {})
        return BranchInfo(path, seq, status, edit, job.mode if job is not None else "model")
