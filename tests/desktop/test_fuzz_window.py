"""The window-mode fuzz, bounded: every family's broken files opened in the real window.

``make fuzz`` runs it long (``python -m tests.core.fuzz.drive --window``); here a
sample of every family, and every kept regression, goes through one real main window
the way a user opens a file (see :mod:`tests.desktop.fuzz_window`): each must load or
give the dialog naming the file and cause, with nothing escaping into Qt, no silent
tab and no hang. A failing input is kept under ``tests/fuzz_regressions/``.
"""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path

import pytest

from loom_desktop.main_window import MainWindow
from tests.core.fuzz.drive import REGRESSIONS, base_pool, run_family
from tests.core.fuzz.strategies import FAMILIES
from tests.desktop.fuzz_window import WindowFuzz

SAMPLE = 30  # inputs per family: 240 in all, about 0.1 s each on an idle core
BOUND = 20.0  # seconds one input may take before it counts as hung


@pytest.fixture
def harness(window: MainWindow, tmp_path: Path):
    previous = signal.getsignal(signal.SIGALRM)  # pytest-timeout's, restored after
    fuzz = WindowFuzz(window, tmp_path, BOUND)
    try:
        with fuzz.hooks():
            fuzz.open_anchor()
            yield fuzz
    finally:
        fuzz.plot.close()
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.long
def test_every_family_opens_in_the_window_without_a_crash(harness: WindowFuzz) -> None:
    tally: Counter = Counter()
    bases = base_pool(60)
    for family in FAMILIES:
        run_family(family, SAMPLE, BOUND, tally, seed=12, bases=bases, window=harness)
    bad = {k: n for k, n in tally.items() if k[1] in ("crashed", "hung")}
    assert not bad, f"{bad}: see the CRASH/HUNG lines above; inputs kept in {REGRESSIONS}"
    for family in FAMILIES:  # each family really went through: loads and dialogs counted
        assert tally[(family, "ok")] + tally[(family, "rejected")] == SAMPLE, family
    assert sum(tally[(f, "rejected")] for f in FAMILIES) > 0


@pytest.mark.parametrize("path", sorted(REGRESSIONS.glob("*.json")), ids=lambda p: p.name)
def test_kept_regressions_open_in_the_window(harness: WindowFuzz, path: Path) -> None:
    case = harness.run(path.read_bytes(), journal_name=path.name.startswith("journal_lines"))
    assert case.status in ("ok", "rejected"), case.problems


GOOD = b'{"version": 2, "log": [{"seq": 0, "kind": "tool:x", "result": "ok"}]}'


def test_the_harness_counts_what_escapes_into_qt(
    harness: WindowFuzz, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its own check: a slot that raises, a reader that fails with a Python exception (the
    dialog then shows its name) and a tab that never reports are crashes, not loads."""
    from loom_desktop.document import view as view_module
    from loom_desktop.widgets.context_view import ContextView

    assert harness.run(GOOD).status == "ok"
    with monkeypatch.context() as m:
        m.setattr(ContextView, "show_step", lambda *_a: 1 / 0)
        case = harness.run(GOOD)
        assert case.status == "crashed" and "ZeroDivisionError" in case.problems[0]
    with monkeypatch.context() as m:
        m.setattr(view_module, "load_progressive", lambda *_a: [][1])
        case = harness.run(GOOD)
        assert case.status == "crashed" and "IndexError" in case.problems[0]
    with monkeypatch.context() as m:
        m.setattr(view_module.DocumentView, "start_loading", lambda *_a: None)
        harness.bound = 1.0
        case = harness.run(GOOD)
        assert case.status == "crashed" and case.problems[0].startswith("silent")
    harness.bound = BOUND
    assert harness.run(b"{").status == "rejected"
