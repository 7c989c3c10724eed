"""Run ▸ Compare…: pick two runs (open tabs or files) and open them in an A ⟷ B tab.

:func:`open_compare_tab` is what ``MainWindow.open_compare`` does: a side that is an
open tab must be fully loaded (its document is compared as it is); a path is
loaded by the Compare view's worker, and a failure closes that tab with a dialog.

The defaults guess the comparison a user most likely wants: a fork branch
against the parent it names in its ``fork`` member (when that parent is open),
otherwise the current tab against the next one. A is the original and B the
alternative, so the view's "B is cheaper" reads as "the branch saved money".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QWidget,
)

from loom_core.formats.document import Document
from loom_desktop.features.compare.view import CompareView, Side
from loom_desktop.features.fork.links import is_provenance, same_file
from loom_desktop.infra.file_filter import run_file_filter
from loom_desktop.infra.services import WindowServices

_TIP = Qt.ItemDataRole.ToolTipRole


def fork_parent(doc: Document | None) -> str | None:
    """The parent path a fork branch names in its top-level ``fork`` member, if any."""
    if doc is None:
        return None
    fork = (getattr(doc.header, "model_extra", None) or {}).get("fork")
    return fork["parent"]["path"] or None if is_provenance(fork) else None


def default_pair(views: list[Any], current: Any) -> tuple[Any, Any]:
    """(A, B): a branch's open parent and the branch, else the current tab and the next one.

    B is ``None`` when only one run is open (the user browses for the other).
    """
    if not views:
        return None, None
    cur = current if current in views else views[0]
    parent = fork_parent(cur.doc)
    if parent:
        match = next((v for v in views if v is not cur and same_file(v.path, parent)), None)
        if match is not None:
            return match, cur
    if len(views) == 1:
        return cur, None
    return cur, views[(views.index(cur) + 1) % len(views)]


class CompareDialog(QDialog):
    """Two combo boxes of open runs (plus browsed files); OK opens the comparison."""

    def __init__(self, window: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent or window)
        self.setWindowTitle("Compare runs")
        self.window_ = window
        self.views = window.documents()
        self.combo_a, self.combo_b = QComboBox(), QComboBox()
        form = QFormLayout(self)
        for label, combo in (
            ("Run &A (original):", self.combo_a),
            ("Run &B (compared):", self.combo_b),
        ):
            combo.setMinimumWidth(360)
            for k, view in enumerate(self.views):  # data: the tab's index in ``views``
                combo.addItem(Path(view.path).name, k)
                combo.setItemData(k, view.path, _TIP)
            combo.currentIndexChanged.connect(lambda _i: self._update_ok())
            row = QHBoxLayout()
            row.addWidget(combo, 1)
            browse = QPushButton("Browse…")
            browse.clicked.connect(lambda _c=False, c=combo: self._browse(c))
            row.addWidget(browse)
            caption = QLabel(label)  # a row of a layout gets no buddy: "&A" would show as is
            caption.setBuddy(combo)
            form.addRow(caption, row)
        swap = QPushButton("⇅ Swap A and B")
        swap.clicked.connect(self.swap)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Compare")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(swap, self.buttons)
        a, b = default_pair(self.views, window.current())
        self._select(self.combo_a, a)
        self._select(self.combo_b, b)
        self.result_view: Any = None  # the CompareView opened by OK
        self._update_ok()

    # -- choices ----------------------------------------------------------------------
    def _select(self, combo: QComboBox, choice: Any) -> None:
        index = next((k for k, v in enumerate(self.views) if v is choice), -1)
        combo.setCurrentIndex(index)

    def _value(self, combo: QComboBox) -> Any:
        data = combo.currentData()
        return self.views[data] if isinstance(data, int) else data

    def choice(self) -> tuple[Any, Any]:
        """(A, B) as chosen: each an open DocumentView or a path (``None`` if unset)."""
        return self._value(self.combo_a), self._value(self.combo_b)

    def set_path(self, side: str, path: str) -> None:
        """Use the file at ``path`` for side ``"a"`` or ``"b"`` (what Browse… does)."""
        combo = self.combo_a if side == "a" else self.combo_b
        index = combo.findData(str(path))
        if index < 0:
            combo.addItem(f"{Path(path).name} (file)", str(path))
            index = combo.count() - 1
            combo.setItemData(index, str(path), _TIP)
        combo.setCurrentIndex(index)

    def swap(self) -> None:
        a, b = self.choice()
        for combo, value in ((self.combo_a, b), (self.combo_b, a)):
            if isinstance(value, str):
                self.set_path("a" if combo is self.combo_a else "b", value)
            else:
                self._select(combo, value)

    def _browse(self, combo: QComboBox) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a run", "", run_file_filter())
        if path:
            self.set_path("a" if combo is self.combo_a else "b", path)

    def _update_ok(self) -> None:
        a, b = self.choice()
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(
            a is not None and b is not None
        )

    def accept(self) -> None:
        a, b = self.choice()
        if a is None or b is None:
            return
        super().accept()
        self.result_view = self.window_.open_compare(a, b)

    @classmethod
    def ask(cls, window: Any) -> CompareDialog:
        """Show the dialog (window-modal, non-blocking); OK opens the Compare tab."""
        dialog = cls(window)
        dialog.open()
        return dialog


def report_error(window: WindowServices, message: str) -> None:
    """A dialog naming the file and the cause (the window keeps the message)."""
    window.report_error("Cannot compare", message)


def open_compare_tab(window: Any, a: Any, b: Any) -> CompareView | None:
    """Add an A ⟷ B tab to ``window`` for two open tabs or paths (None: a side is not ready)."""
    sides: list[Side] = []
    for side in (a, b):
        if isinstance(side, (str, Path)):
            sides.append(str(side))
        elif getattr(side, "doc", None) is None or not getattr(side, "complete", False):
            report_error(
                window,
                f"Cannot compare {getattr(side, 'path', side)}\n\nthe document is not loaded yet",
            )
            return None
        else:
            sides.append(side.doc)
    view = CompareView(sides[0], sides[1], window)
    view.failed.connect(lambda path, cause: _failed(window, view, path, cause))
    index = window.tabs.addTab(view, view.title)
    window.tabs.setTabToolTip(
        index, "\n".join(s.path if isinstance(s, Document) else s for s in sides)
    )
    window.tabs.setCurrentIndex(index)
    view.start()
    return view


def _failed(window: Any, view: CompareView, path: str, cause: str) -> None:
    index = window.tabs.indexOf(view)
    if index >= 0:
        window.close_tab(index)
    report_error(window, f"Cannot compare: cannot open {path}\n\n{cause}")
