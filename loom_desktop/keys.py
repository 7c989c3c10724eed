"""Every keyboard shortcut in one place: the ``?`` sheet is built from the real bindings.

Window-wide keys are the window's menu actions; the sheet reads them from the
window itself. Keys that act on one part of the window (a run's step list, the
approvals queue, a comparison) are bound with :func:`bind` from the tables
below, which must name a slot for every key and a key for every slot, so the
sheet cannot list a key that does nothing nor miss one that does something.
A test walks every action and shortcut of a busy window and fails on a key
bound twice where both would be live (Qt then runs neither: "Ambiguous
shortcut overload").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget

# key (QKeySequence portable text) -> what it does
STEP_KEYS: Mapping[str, str] = {
    "Left": "previous step",
    "Right": "next step",
    "Home": "first step",
    "End": "last step; in a live run, follow the newest step again",
    "Space": "play / pause",
    ",": "previous step of the same kind",
    ".": "next step of the same kind",
}
APPROVAL_KEYS: Mapping[str, str] = {
    "A": "approve the selected held call",
    "D": "deny it (with the reason typed in the panel, if any)",
    "E": "edit its arguments, then approve",
}
COMPARE_KEYS: Mapping[str, str] = {
    "N": "next difference",
    "P": "previous difference",
}
FILTER_KEYS: Mapping[str, str] = {
    "Return": "to the step list (on the first match if the filter hides the current step)",
    "Escape": "clear the filter; again: back to the step list",
}
FILTER_HELP = (
    "text, kind:model, tool:read*, agent:lead, is:error (errors and blocked calls), "
    "is:blocked, is:denied, is:shield, is:subagent"
)
GROUPS: tuple[tuple[str, Mapping[str, str]], ...] = (
    ("In a run's tab (step list, timeline, context)", STEP_KEYS),
    ("In the filter box (Ctrl+F)", FILTER_KEYS),
    (
        "While a call is held: anywhere in the window (typing in a text box still types)",
        APPROVAL_KEYS,
    ),
    ("In a comparison tab", COMPARE_KEYS),
)
_PRETTY = {"Left": "←", "Right": "→", "Up": "↑", "Down": "↓"}

Row = tuple[str, str]  # (key as shown, what it does)


def bind(
    widget: QWidget,
    keys: Mapping[str, str],
    slots: Mapping[str, Callable[[], object]],
    context: Qt.ShortcutContext = Qt.ShortcutContext.WidgetWithChildrenShortcut,
) -> list[QShortcut]:
    """Bind ``keys`` on ``widget`` and its children (``context``: or its whole window);
    each key's text becomes its whatsThis."""
    if set(keys) != set(slots):
        raise ValueError(f"keys without a slot or slots without a key: {set(keys) ^ set(slots)}")
    shortcuts = []
    for key, what in keys.items():
        sc = QShortcut(QKeySequence(key), widget, context=context)
        sc.setWhatsThis(what)
        sc.activated.connect(slots[key])
        shortcuts.append(sc)
    return shortcuts


def shown(sequence: QKeySequence) -> str:
    """A key as the sheet shows it: arrows as arrows, single letters in lower case
    (``A`` would read as Shift+A)."""
    text = sequence.toString(QKeySequence.SequenceFormat.NativeText)
    text = _PRETTY.get(text, text)
    return text.lower() if len(text) == 1 and text.isalpha() else text


def on_keyboard(sequence: QKeySequence) -> bool:
    """False for the dedicated Find/Open/Close… keys of some keyboards that standard
    bindings add: bound, but not worth a line in the sheet."""
    # PySide6's stubs lack QKeySequence.__getitem__ (it exists: the n-th key combination)
    if sequence.isEmpty():
        return False
    first = sequence[0]  # type: ignore[index]
    return bool(first.key().value < Qt.Key.Key_Back.value)


def action_text(action: QAction) -> str:
    """A menu action's label without mnemonics or the trailing ellipsis."""
    return action.text().replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…")


def window_rows(actions: Iterable[QAction]) -> list[Row]:
    """One row per key of each action that has one (an action may have several)."""
    rows = []
    for action in actions:
        keys = " or ".join(shown(k) for k in action.shortcuts() if on_keyboard(k))
        if not keys:
            continue
        what = action_text(action)
        tip = action.toolTip()
        if tip and tip != action.text().replace("&", "") and tip != what:
            what = f"{what}: {tip}"
        rows.append((keys, what))
    return rows


def sheet(window_actions: Iterable[QAction]) -> list[tuple[str, list[Row]]]:
    """The sheet's sections: the window's menu keys, then each part's own keys."""
    sections = [("Anywhere in the window", window_rows(window_actions))]
    for title, keys in GROUPS:
        sections.append((title, [(shown(QKeySequence(k)), what) for k, what in keys.items()]))
    return sections
