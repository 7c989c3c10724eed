"""Settings ▸ Library…: this computer's own library, or a team's on PostgreSQL.

Why the URL is all the app keeps: a password in a settings file is a secret on disk, so
the URL is refused when it holds one (libpq reads it from ``~/.pgpass``, a service file
or ``PGPASSWORD``, as every PostgreSQL client does). The run store is the library's own
setting, shared by everyone who uses it, so it is read from and written to the database,
not kept here. ``LOOM_LIBRARY_URL`` in the environment wins over what is chosen here
(CI and scripts set it), and the dialog says so.

"Test connection" and OK talk to the database on a pool thread: a server that does not
answer takes seconds to say so, and the window must not freeze meanwhile.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from loom_core.errors import LoadError
from loom_core.library.db import library_path
from loom_core.library.pg_probe import probe
from loom_core.library.pg_schema import URL_ENV, check_url
from loom_desktop.infra.thread_runner import failure_cause
from loom_desktop.infra.workers import Task

URL_HINT = "postgresql://you@db.example.com:5432/loom"
SECRETS = "The password goes in ~/.pgpass (PGPASSFILE), a service file or PGPASSWORD, never here."


def chosen_address(saved: str) -> str | None:
    """The library the app uses: None (the environment's URL, else this computer's file)
    when ``LOOM_LIBRARY_URL`` is set or nothing usable was chosen, else the saved URL. A
    settings file edited by hand may hold anything: what is not a password-free
    ``postgresql://`` URL is ignored, never taken for a file path to write a library to."""
    if os.environ.get(URL_ENV, "").strip() or not saved:
        return None
    try:
        check_url(saved)
    except LoadError:
        return None
    return saved


def save_store(url: str, store: str) -> str:
    """Name ``store`` as the library's run store (a pool thread); the address kept."""
    from loom_core.library.address import open_runs
    from loom_core.library.publish import name_store
    from loom_core.library.store import store_io

    db = open_runs(url)
    try:
        with store_io():  # naming a bucket starts fsspec's thread: not for the app's life
            return name_store(db, store)
    finally:
        db.close()


class LibraryDialog(QDialog):
    """See the module docstring. ``address`` after OK: the URL chosen, "" for local.
    ``store``: the run store the library in use named when the window last asked it
    (shown at once, as the library's; "" unknown)."""

    def __init__(self, saved: str, parent: QWidget | None = None, store: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Library")
        self.address = saved
        self.local = QRadioButton(f"This computer only (a file: {library_path()})")
        self.team = QRadioButton("A team's library on PostgreSQL")
        self.url = QLineEdit(saved, placeholderText=URL_HINT)
        self.store = QLineEdit(placeholderText="s3://bucket/prefix or a shared folder (optional)")
        self.store.setToolTip("Where published runs are kept; the library's setting, for everyone")
        self.test_btn = QPushButton("Test connection")
        self.status = QLabel(SECRETS, wordWrap=True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self._task = Task(self)
        self._then: Callable[[Any], object] = lambda _result: None  # set by each request
        self._named = ""  # the run store the library named when last tested
        self._task.finished.connect(lambda result: self._then(result))
        self._task.failed.connect(lambda exc: self._say(f"✗ {failure_cause(exc)}"))
        self._layout()
        (self.team if saved else self.local).setChecked(True)
        self._wire()
        self._env_note()
        if store and self.team.isChecked():
            self.store.setText(store)
            self._named = store

    def _layout(self) -> None:
        form = QFormLayout()
        form.addRow("Database URL", self.url)
        form.addRow("Run store", self.store)
        lay = QVBoxLayout(self)
        lay.addWidget(self.local)
        lay.addWidget(self.team)
        lay.addLayout(form)
        lay.addWidget(self.test_btn)
        lay.addWidget(self.status)
        lay.addWidget(self.buttons)
        self.resize(560, self.sizeHint().height())

    def _wire(self) -> None:
        self.team.toggled.connect(self._enable)
        self.url.textEdited.connect(self._other_library)
        self.test_btn.clicked.connect(self.test)
        self.buttons.accepted.connect(self.ok)
        self.buttons.rejected.connect(self.reject)
        self._enable(self.team.isChecked())

    def _env_note(self) -> None:
        """The environment's URL is the one in use: shown, testable, not editable here."""
        env = os.environ.get(URL_ENV, "").strip()
        if env:
            self.team.setChecked(True)
            self.url.setText(env)
            self.status.setText(f"{URL_ENV} is set in the environment ({env}): it wins over this.")
            for widget in (self.local, self.team, self.url, self.store):
                widget.setEnabled(False)

    def _other_library(self, _url: str) -> None:
        """The URL typed names another library: the store shown was the one in use's."""
        if self._named and self.store.text().strip() == self._named:
            self.store.clear()
        self._named = ""

    def _enable(self, team: bool) -> None:
        for widget in (self.url, self.store, self.test_btn):
            widget.setEnabled(team)

    def _checked_url(self) -> str | None:
        """The URL typed, or None after saying what is wrong with it."""
        url = self.url.text().strip()
        try:
            check_url(url)
        except LoadError as err:
            self._say(f"✗ {err.cause}" if url else "✗ type the database's postgresql:// URL")
            return None
        return url

    def _say(self, text: str) -> None:
        self.status.setText(text)

    def test(self) -> None:
        """Test connection: one short look at the database, on a pool thread."""
        url = self._checked_url()
        if url is None:
            return
        self._say("connecting…")
        self._run(lambda _ctx: probe(url), self._tested)

    def _tested(self, probe: Any) -> None:
        self._say(f"✓ {probe.text()}")
        self._named = probe.store
        if probe.store and not self.store.text().strip():
            self.store.setText(probe.store)

    def ok(self) -> None:
        """Keep the choice; a run store typed here is named in the library first."""
        if os.environ.get(URL_ENV, "").strip():  # nothing to choose: the environment wins
            self.accept()
            return
        if not self.team.isChecked():
            self.address = ""
            self.accept()
            return
        url = self._checked_url()
        if url is None:
            return
        self.address = url
        store = self.store.text().strip()
        if not store or store == self._named:  # nothing new to tell the library
            self.accept()
            return
        self._say("naming the run store…")
        self._run(lambda _ctx: save_store(url, store), lambda _s: self.accept())

    def _run(self, work: Any, then: Any) -> None:
        """``work`` on a pool thread; ``then(result)``, or its error in the status line (a
        newer request supersedes an older one's answer)."""
        self._then = then
        self._task.start(work)
