"""The long fuzz run (``make fuzz``): N mutated inputs per family, counted, crashes kept.

    QT_QPA_PLATFORM=offscreen python -m tests.core.fuzz.drive --cases 10000 [--family F]
    QT_QPA_PLATFORM=offscreen python -m tests.core.fuzz.drive --window --cases 10000

``--window`` opens every input in one real main window instead (see
:mod:`tests.desktop.fuzz_window`). One family per process runs them side by side.

Each input goes through the loader, the progressive loader, every view, the context
view's HTML and the CLI (in-process). Hypothesis only generates here (no shrinking):
every input is classified as accepted, rejected (a clean LoadError / exit 2), crashed
or hung (over ``--hang`` seconds), and every crash is written to
``tests/fuzz_regressions/`` where the normal test suite replays it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.core.fuzz.strategies import FAMILIES, documents, mutated
from tests.core.fuzz.surfaces import exercise

REGRESSIONS = Path(__file__).resolve().parents[2] / "fuzz_regressions"
# Inputs per hypothesis run: a run keeps a record of every choice it made, which grows
# with each input (0.4 MB per broken journal), so a long family is many short runs.
BATCH = 500


class Hung(Exception):
    """One input took longer than the hang limit."""


class Stopped(BaseException):
    """SIGTERM (``timeout``, a deadline): stop before the next input, print the figures."""


_terminated: list[int] = []


def _term(signum: int, _frame: Any) -> None:
    _terminated.append(signum)  # acted on between inputs, never inside one


def _alarm(_signum: int, _frame: Any) -> None:
    raise Hung()


def renderer() -> Any:
    """The context view's HTML for a step (Qt-free function of the desktop package)."""
    from loom_desktop.document.context_html import ViewState, step_html

    return lambda tl, step: step_html(tl, step, ViewState(system_open=True, show_all=True))


def keep(family: str, data: bytes) -> Path:
    """Save a failing input where the normal suite replays it."""
    REGRESSIONS.mkdir(exist_ok=True)
    path = REGRESSIONS / f"{family}-{hashlib.sha256(data).hexdigest()[:12]}.json"
    path.write_bytes(data)
    return path


def base_pool(size: int) -> Any:
    """Valid documents to break: built once (building costs more than breaking)."""
    pool: list[Any] = []

    @settings(
        max_examples=size,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(documents)
    def collect(doc: Any) -> None:
        pool.append(doc)

    collect()
    return st.sampled_from(pool)


def run_family(
    family: str,
    cases: int,
    hang: float,
    tally: Counter,
    seed: int,
    causes: bool = False,
    bases: Any = None,
    window: Any = None,
) -> None:
    render = renderer()
    signal.signal(signal.SIGALRM, _alarm)
    if window is not None:
        signal.signal(signal.SIGALRM, window.alarm)

    def one(data: bytes) -> None:
        if _terminated:
            raise Stopped()
        if window is not None:
            _in_window(window, family, data, tally)
        else:
            _exercise(data)
        row = {s: tally[(family, s)] for s in ("ok", "rejected", "crashed", "hung")}
        if sum(row.values()) % 250 == 0:
            print("# " + json.dumps({"family": family, **row}), flush=True)

    def _exercise(data: bytes) -> None:
        with tempfile.TemporaryDirectory(prefix="loom-fuzz-") as tmp:
            signal.setitimer(signal.ITIMER_REAL, hang)
            try:
                outcome = exercise(data, Path(tmp), render=render)
                tally[(family, outcome.status)] += 1
                if outcome.cause and causes:
                    print(f"REJECT {family}: {outcome.cause}", file=sys.stderr)
            except Hung:
                tally[(family, "hung")] += 1
                print(f"HANG {family}: kept {keep(family, data)}", file=sys.stderr)
            except Exception as err:  # noqa: BLE001 - a crash is what we count
                tally[(family, "crashed")] += 1
                where = traceback.extract_tb(err.__traceback__)[-1]
                print(
                    f"CRASH {family}: {type(err).__name__}: {str(err)[:200]} at "
                    f"{where.filename}:{where.lineno}; kept {keep(family, data)}",
                    file=sys.stderr,
                )
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)

    strategy = mutated(family, bases) if bases is not None else mutated(family)
    for start in range(0, cases, BATCH):
        batch = settings(
            max_examples=min(BATCH, cases - start),
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
            derandomize=False,
        )(given(strategy)(one))
        batch._hypothesis_internal_use_seed = seed * 100_003 + start  # type: ignore[attr-defined]
        batch()


def _in_window(window: Any, family: str, data: bytes, tally: Counter) -> None:
    """One input through the real window (see :mod:`tests.desktop.fuzz_window`)."""
    case = window.run(data, journal_name=family == "journal_lines")
    tally[(family, case.status)] += 1
    if case.status in ("crashed", "hung"):
        print(
            f"{case.status.upper()} {family} (window): {'; '.join(case.problems)[:400]}; "
            f"kept {keep(family, data)}",
            file=sys.stderr,
        )


@contextlib.contextmanager
def real_window(bound: float) -> Iterator[Any]:
    """One offscreen application and main window for every input (settings, the run library
    and generated runs kept in a temp dir, never the user's)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory(prefix="loom-fuzz-window-") as tmp:
        os.environ["LOOM_DESKTOP_CONFIG_DIR"] = str(Path(tmp) / "config")
        from loom_core.library.db import ENV as LIBRARY_ENV
        from loom_core.runs_dir import ENV as RUNS_ENV

        os.environ[LIBRARY_ENV] = str(Path(tmp) / "library.sqlite3")  # not the user's
        os.environ[RUNS_ENV] = str(Path(tmp) / "runs")
        from PySide6.QtWidgets import QApplication

        from loom_desktop.main_window import MainWindow
        from tests.desktop.fuzz_window import WindowFuzz

        app = QApplication.instance() or QApplication([])
        window = MainWindow()
        window.resize(1000, 640)  # every paint path, at 60 % of the pixels to paint
        window.show()
        harness = WindowFuzz(window, Path(tmp), bound)
        try:
            with harness.hooks():
                harness.open_anchor()
                yield harness
        finally:
            window.close()
            window.deleteLater()
            app.processEvents()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000, help="inputs per family")
    parser.add_argument("--family", action="append", choices=FAMILIES)
    parser.add_argument("--hang", type=float, default=20.0, help="seconds before an input hangs")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--causes", action="store_true", help="print every rejection's cause")
    parser.add_argument("--pool", type=int, default=400, help="valid documents to mutate")
    parser.add_argument(
        "--window", action="store_true", help="open every input in one real main window instead"
    )
    args = parser.parse_args(argv)
    tally: Counter = Counter()
    start = time.monotonic()
    bases = base_pool(args.pool)
    signal.signal(signal.SIGTERM, _term)
    with real_window(args.hang) if args.window else contextlib.nullcontext() as window:
        for family in args.family or FAMILIES:
            began = time.monotonic()
            with contextlib.suppress(Stopped):  # then the figures so far, marked
                run_family(
                    family, args.cases, args.hang, tally, args.seed, args.causes, bases, window
                )
            row = {s: tally[(family, s)] for s in ("ok", "rejected", "crashed", "hung")}
            seconds = round(time.monotonic() - began)
            stopped = {"stopped": True} if _terminated else {}
            print(json.dumps({"family": family, **row, "seconds": seconds, **stopped}), flush=True)
            if _terminated:
                break
    total = {
        s: sum(v for (_f, st), v in tally.items() if st == s)
        for s in ("ok", "rejected", "crashed", "hung")
    }
    print(
        json.dumps(
            {
                "family": "all",
                "cases": sum(total.values()),
                **total,
                "seconds": round(time.monotonic() - start),
            }
        ),
        flush=True,
    )
    return 1 if total["crashed"] or total["hung"] else 0


if __name__ == "__main__":
    sys.exit(main())
