"""The sample bar: which run of a file that holds several (an Inspect AI log) the tab shows.

Why a bar in the tab and not a chooser when the file opens: the first sample opens at
once, like any file, and the others are one click away; switching keeps the tab, its
splitters and its filter. The other sample is read off the GUI thread (a sample can
hold hundreds of thousands of events); one that cannot be read gets a dialog naming the
file and the cause, and the tab keeps showing the sample it had.

Each entry then gets its counts (model and scorer steps, tokens) from the same list
``summary --json`` prints (:func:`~loom_core.formats.inspect_eval.sample_list`), made in
the background once per file: the bar and the command line never disagree on a sample.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QMessageBox, QWidget

from loom_core.errors import LoadError
from loom_core.formats.document import Document
from loom_core.formats.inspect_eval import load_sample, sample_list
from loom_core.formats.inspect_log import counts_text
from loom_core.formats.loader import read_bytes
from loom_core.formats.progressive import Loaded
from loom_core.views.timeline import build_timeline
from loom_desktop.infra.workers import Task


def samples_of(doc: Any) -> list[dict[str, Any]]:
    """The runs ``doc``'s file holds (``extra["samples"]``), when it holds more than one."""
    extra = getattr(doc, "extra", None)
    listed = extra.get("samples") if isinstance(extra, dict) else None
    found = [s for s in listed if isinstance(s, dict)] if isinstance(listed, list) else []
    return found if len(found) > 1 else []


def _load(path: str, sample_id: str, epoch: int) -> Loaded:
    doc = load_sample(read_bytes(path), path, sample_id, epoch)
    return Loaded(doc, build_timeline(doc))


class SampleBar(QWidget):
    """A combo of the file's samples; choosing one loads it and hands it to ``show``,
    then emits ``shown`` (whoever asked for a sample goes to its step after that)."""

    shown = Signal()

    def __init__(
        self, path: str, show: Callable[[Loaded], None], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.path, self._show = path, show
        self.combo = QComboBox()
        self.combo.setMinimumContentsLength(40)
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.combo.setToolTip("Each sample (and epoch) of the log is a run of its own")
        self.note = QLabel()
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 2, 6, 2)
        lay.addWidget(QLabel("Sample:"))
        lay.addWidget(self.combo, 1)
        lay.addWidget(self.note)
        self._samples: list[dict[str, Any]] = []
        self._current = -1
        self.counts: dict[str, dict[str, Any]] = {}  # ID:EPOCH -> its sample_list entry
        self.task = Task(self)
        self.task.finished.connect(self._loaded)
        self.task.failed.connect(self._failed)
        self.counting = Task(self)
        self.counting.finished.connect(self._counted)
        self.combo.activated.connect(self.choose)

    def show_document(self, doc: Document) -> None:
        """List ``doc``'s samples, the one it is selected."""
        self._samples = samples_of(doc)
        found = doc.extra.get("sample")
        shown: dict[str, Any] = found if isinstance(found, dict) else {}
        key = (str(shown.get("id")), shown.get("epoch"))
        self.combo.blockSignals(True)
        self.combo.clear()
        for s in self._samples:
            self.combo.addItem(self._text(s))
        keys = [(str(s.get("id")), s.get("epoch")) for s in self._samples]
        self._current = keys.index(key) if key in keys else 0
        self.combo.setCurrentIndex(self._current)
        self.combo.blockSignals(False)
        self.note.setText(f"{len(self._samples)} samples")
        if not self.counts and not self.counting.running:
            path = self.path
            self.counting.start(lambda _ctx: sample_list(read_bytes(path), path))

    def _text(self, sample: dict[str, Any]) -> str:
        """An entry: the sample's label, then (once counted) what its run holds."""
        label = str(sample.get("label") or f"{sample.get('id')} · epoch {sample.get('epoch')}")
        counts = counts_text(self.counts.get(f"{sample.get('id')}:{sample.get('epoch')}", {}))
        return f"{label} · {counts}" if counts else label

    def _counted(self, entries: list[dict[str, Any]]) -> None:
        self.counts = {f"{e.get('id')}:{e.get('epoch')}": e for e in entries}
        for i, sample in enumerate(self._samples):
            self.combo.setItemText(i, self._text(sample))

    def choose(self, index: int) -> None:
        """Show sample ``index`` of the list (read in the background)."""
        if not 0 <= index < len(self._samples) or index == self._current:
            return
        chosen = self._samples[index]
        sample_id, epoch = str(chosen.get("id")), chosen.get("epoch")
        epoch = epoch if isinstance(epoch, int) else 1
        path = self.path
        self.note.setText("loading…")
        self.task.start(lambda _ctx: _load(path, sample_id, epoch))

    def current(self) -> str:
        """``ID:EPOCH`` of the sample the tab shows ("" before it has shown one)."""
        if not 0 <= self._current < len(self._samples):
            return ""
        shown = self._samples[self._current]
        return f"{shown.get('id')}:{shown.get('epoch')}"

    def switch_to(self, spec: str) -> bool:
        """Show sample ``spec`` (``ID:EPOCH``, as a library hit names it). True: it is
        being read and ``shown`` follows; False: it is the one shown, or not in the file."""
        keys = [f"{s.get('id')}:{s.get('epoch')}" for s in self._samples]
        if spec not in keys or keys.index(spec) == self._current:
            return False
        index = keys.index(spec)
        self.combo.setCurrentIndex(index)
        self.choose(index)
        return True

    def _loaded(self, result: Loaded) -> None:
        self._show(result)  # the tab calls show_document back with the new run
        self.shown.emit()

    def _failed(self, exc: object) -> None:
        self.combo.setCurrentIndex(self._current)
        self.note.setText(f"{len(self._samples)} samples")
        cause = exc.cause if isinstance(exc, LoadError) else f"{type(exc).__name__}: {exc}"
        box = QMessageBox(
            QMessageBox.Icon.Critical,
            "Cannot open sample",
            f"Cannot open that sample of {self.path}\n\n{cause}",
            QMessageBox.StandardButton.Ok,
            self,
        )
        box.open()
