"""Dates Qt writes (the file dialogs' "Date Modified") read unambiguously under a C locale.

Why: Qt's file dialogs format dates with the *system* locale, read from the environment
(``LC_ALL``, ``LC_TIME``, ``LANG``) when the application starts. Many Linux machines and
containers run with ``LANG=C.UTF-8``, and Qt's C locale writes a short date as ``d MM
yyyy``: 5 December 2026 showed as "5 12 2026" (5 December or May 12?). When the time
locale is C or POSIX, :func:`iso_dates` lets Qt read its time formats from English
(Sweden): English words, ISO 8601 dates and 24-hour times (2026-12-05 14:03, short enough
for the dialog's column), then puts the environment back: numbers and everything else
stay as the user set them (only the time category is read), and no child process
inherits it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QLocale

ISO_TIME_LOCALE = "en_SE.UTF-8"  # English words, yyyy-MM-dd dates, 24-hour times
_PLAIN = ("C", "POSIX", "")


def time_locale(env: dict[str, str] | os._Environ[str]) -> str:
    """The locale the C library (and Qt) formats times with: LC_ALL, LC_TIME, then LANG."""
    for key in ("LC_ALL", "LC_TIME", "LANG"):
        if env.get(key):
            return env[key]
    return "C"


def is_plain(name: str) -> bool:
    """A C or POSIX locale (``C.UTF-8`` too), whose dates Qt writes as ``5 12 2026``."""
    return name.split(".", 1)[0].split("@", 1)[0] in _PLAIN


@contextmanager
def iso_dates() -> Iterator[None]:
    """Create the QApplication inside this block: under a C locale, Qt's system locale
    takes ISO short dates; the environment is as it was once the block ends."""
    if not is_plain(time_locale(os.environ)):
        yield
        return
    saved = {k: os.environ.get(k) for k in ("LC_ALL", "LC_TIME")}
    os.environ.pop("LC_ALL", None)  # a C LC_ALL would override LC_TIME
    os.environ["LC_TIME"] = ISO_TIME_LOCALE
    try:
        yield
        QLocale.system()  # Qt reads the environment now, once, and keeps what it read
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
