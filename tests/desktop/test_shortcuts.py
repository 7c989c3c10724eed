"""Every key does one thing, and the ``?`` sheet lists every key that is bound.

The window is made busy first (a run open, a comparison tab, the approvals and
doctor panels docked), then every QAction and QShortcut under it is walked: two
bindings of the same key whose scopes overlap (one widget contains the other)
are a bug, because Qt then runs neither ("Ambiguous shortcut overload").
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget

from loom_desktop.dialogs import show_shortcuts
from loom_desktop.keys import on_keyboard, sheet, shown
from loom_desktop.main_window import MainWindow
from tests.core.proxy.test_control_client import _free_port

_WIDE = (Qt.ShortcutContext.WindowShortcut, Qt.ShortcutContext.ApplicationShortcut)


def _bindings(window: MainWindow) -> Iterator[tuple[QKeySequence, QObject, QWidget]]:
    """(key, the action or shortcut, the widget whose focus makes it live)."""
    actions = {id(a): a for a in [*window.actions(), *window.findChildren(QAction)]}
    for action in actions.values():
        scopes = (
            [window]
            if action.shortcutContext() in _WIDE
            else [w for w in action.associatedObjects() if isinstance(w, QWidget)]
        )
        for key in action.shortcuts():
            for scope in scopes:
                yield key, action, scope
    for sc in window.findChildren(QShortcut):
        parent = sc.parent()
        assert isinstance(parent, QWidget)
        scope = parent.window() if sc.context() in _WIDE else parent
        if not sc.key().isEmpty():
            yield sc.key(), sc, scope


def _overlap(a: QWidget, b: QWidget) -> bool:
    return a is b or a.isAncestorOf(b) or b.isAncestorOf(a)


@pytest.fixture
def busy(qtbot, window: MainWindow, open_and_wait, sample: Path) -> Iterator[MainWindow]:
    """A window with a run, a comparison tab, and the approvals and doctor panels."""
    open_and_wait(window, sample)
    window.open_compare(str(sample), str(sample))
    window.attach_proxy(_free_port())
    window.doctor.show()
    compare = window.tabs.currentWidget()
    qtbot.waitUntil(lambda: compare.diff is not None, timeout=20_000)
    yield window
    for connection in window.proxies:
        connection.stop()


def test_no_key_is_bound_twice_where_both_are_live(busy: MainWindow) -> None:
    bindings = list(_bindings(busy))
    assert len(bindings) > 15
    clashes = [
        (shown(k1), type(o1).__name__, type(o2).__name__, s1.objectName() or type(s1).__name__)
        for i, (k1, o1, s1) in enumerate(bindings)
        for k2, o2, s2 in bindings[i + 1 :]
        if k1 == k2 and o1 is not o2 and _overlap(s1, s2)
    ]
    assert not clashes


def test_ctrl_f_focuses_the_filter_box(qtbot, busy: MainWindow) -> None:
    busy.tabs.setCurrentIndex(0)
    view = busy.current()
    view.table.setFocus()
    view.filter_box.setText("kind:model")
    qtbot.keyClick(view.table, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert view.filter_box.hasFocus() and view.filter_box.selectedText() == "kind:model"


def test_the_sheet_lists_every_bound_key(qtbot, busy: MainWindow) -> None:
    rows = [row for _title, section in sheet(busy.actions()) for row in section]
    listed = {key for keys, _what in rows for key in keys.split(" or ")}
    bound = {shown(k) for k, _o, _s in _bindings(busy) if on_keyboard(k)}
    assert bound - listed == set()
    assert {"a", "d", "e", "End", "Ctrl+F", "Ctrl+W", "?"} <= listed
    whats = dict(rows)  # a part's key says what it does there
    for sc in busy.findChildren(QShortcut):
        assert sc.whatsThis() in whats.values()
    box = show_shortcuts(busy)
    qtbot.waitUntil(box.isVisible)
    assert "approve the selected held call" in box.text() and "is:error" in box.text()
    assert box.width() <= 1000 and box.height() <= 700  # the whole sheet on a small screen
    box.close()
