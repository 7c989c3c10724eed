"""Every view on every foreign format, each file from its real producer (tests/desktop/
foreign_files.py), opened the way a user does (``MainWindow.open_path``).

Per format: the timeline and list have the producer's steps; the context view at a model
step shows the messages (as recorded, rebuilt, or said not recorded); the raw view the
source record; tokens and cost in the status bar; Doctor runs; Fork from Here re-runs the
last top-level model call against the fake upstream and loom-harness verifies the branch;
Export ▸ HTML writes the page; ``summary --json`` has a loom trace's keys, ``steps`` the
window's rows, and ``convert`` gives a trace loom-harness verifies. A grab of each window is
saved when ``LOOM_FORMAT_SHOTS`` names a folder.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loom_desktop.main_window import MainWindow
from loom_desktop.resources import sample_trace
from tests.core.clis import core
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import ANTHROPIC_KEY, OPENAI_KEY, running_upstream
from tests.desktop.document.test_steps_agree import assert_agree
from tests.desktop.features.fork.test_fork_gui import open_dialog, start, verified, wait_branch
from tests.desktop.features.heal.test_doctor_heal import show_doctor
from tests.desktop.foreign_files import FORMATS, Made, make


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeUpstream]:
    """The fake model API for the fork; keys of both providers in the environment."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    for name in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with running_upstream() as fake:
        yield fake


def _models(view: Any) -> list[int]:
    tl = view.session.timeline
    return [s for s in range(len(tl)) if tl.kind_name(s) == "model"]


def _top_models(view: Any) -> list[int]:
    tl = view.session.timeline
    return [s for s in _models(view) if not view.doc.effects[tl.effect_of[s]].depth]


def _show(view: Any, step: int) -> None:
    view.session.set_step(step)
    view.flush_render()


def _check_steps(view: Any, made: Made) -> None:
    kinds = [e.kind or "" for e in view.doc.effects]
    assert kinds.count("model") == made.model_calls
    assert sum(k.startswith("tool:") for k in kinds) == made.tool_calls
    tl = view.session.timeline
    assert view.model.rowCount() == len(tl) >= len(kinds)
    assert len(view.timeline_widget.bars.heights) == len(tl)  # a bar per step
    usage = (tl.input_tokens, tl.output_tokens)
    assert usage == made.tokens, "tokens the producer was sent"


def _check_context(view: Any, made: Made) -> None:
    _show(view, _top_models(view)[-1])
    page = view.context_view.browser.toPlainText()
    assert made.says in page, page[:2000]
    if made.context == "recorded":
        assert "as recorded by the producer" in page
    elif made.context == "none":
        assert "content capture is opt-in" in page
    raw = json.loads(view.context_view.raw_text())
    assert raw["source record"] and raw["as a loom effect"]["kind"] == "model"


def _check_status(window: MainWindow, view: Any) -> None:
    _show(view, len(view.session.timeline) - 1)
    window.update_status()
    labels = window.status_labels
    total = view.session.timeline.input_tokens + view.session.timeline.output_tokens
    assert labels["tokens"].text().endswith(f"/ {total:,}")
    assert labels["cost"].text().startswith("cost ")


def _check_doctor(qtbot: Any, window: MainWindow, view: Any) -> None:
    errors = len(window.errors)
    show_doctor(qtbot, window, view)
    result, steps = window.doctor.results[id(view)]
    assert len(steps) == len(result.findings) == window.doctor.model.rowCount()
    assert len(window.errors) == errors


def _check_fork(qtbot: Any, window: MainWindow, view: Any, upstream: FakeUpstream) -> None:
    step = _top_models(view)[-1]
    seq, why = window.forks.why_not(view, step)
    assert seq is not None, why
    item = window.forks.step_menu(view, step).actions()[0]  # the step list's right-click
    assert item.isEnabled() and item.text() == "Fork from Here…"
    upstream.script(Reply(text="Forked answer.", usage=(40, 4)))
    dialog = open_dialog(qtbot, window, view, step)
    settings = dialog.settings
    provider = settings.provider_name()  # the one that speaks like the run
    settings.base_url.setText(upstream.url + ("/v1" if provider == "openai" else ""))
    qtbot.waitUntil(lambda: dialog.start_btn.isEnabled(), timeout=20_000)
    start(dialog)
    title = f"fork of {Path(view.path).name} at step {seq}"
    branch = wait_branch(qtbot, window, title=title)
    data = verified(branch.path)
    assert data["output"] == "Forked answer." and len(upstream.seen) == 1
    assert data["fork"]["provider"] == provider
    window.tabs.setCurrentWidget(view)


def _check_export(qtbot: Any, window: MainWindow, view: Any, tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    window.exports.export(view.doc, view.session.timeline, str(target))
    qtbot.waitUntil(lambda: "Exported" in window.statusBar().currentMessage(), timeout=30_000)
    assert "loom-data" in target.read_text()


@functools.cache
def _loom_summary_keys() -> list[str]:
    return list(json.loads(core("summary", sample_trace(), "--json").stdout))


def _check_cli(view: Any, made: Made, tmp_path: Path) -> None:
    foreign = json.loads(core("summary", made.path, "--json").stdout)
    assert list(foreign) == _loom_summary_keys() and foreign["format"] == made.format
    assert_agree(view, made.path)  # steps prints the window's rows
    out = tmp_path / "converted.loom.json"
    done = core("convert", made.path, "-o", out)
    assert done.returncode == 0, done.stderr
    run = verified(out)
    assert [e["kind"] for e in run["log"]] == [e.kind for e in view.doc.effects]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_view_on_each_format(
    fmt: str,
    qtbot: Any,
    window: MainWindow,
    open_and_wait: Any,
    tmp_path: Path,
    upstream: FakeUpstream,
    runs_dir: Path,
) -> None:
    made = make(fmt, tmp_path / "made")
    view = open_and_wait(window, made.path)
    assert view.doc.format == made.format and view.live is None and not window.errors
    _check_steps(view, made)
    _check_context(view, made)
    _check_status(window, view)
    _check_doctor(qtbot, window, view)
    _check_export(qtbot, window, view, tmp_path)
    _check_cli(view, made, tmp_path)
    _show(view, _top_models(view)[-1])
    shots = os.environ.get("LOOM_FORMAT_SHOTS")
    if shots:
        window.tabs.setCurrentWidget(view)
        assert window.grab().save(str(Path(shots) / f"{fmt}.png"))
    _check_fork(qtbot, window, view, upstream)
    assert not window.errors, window.errors
