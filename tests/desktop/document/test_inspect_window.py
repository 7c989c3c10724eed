"""The window on an Inspect AI log written by inspect-ai itself: its first sample opens in a
tab, the sample bar lists every sample and epoch, choosing one shows it in the same tab
(read off the GUI thread), and a sample that cannot be read gets a dialog while the tab
keeps what it showed."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox

from loom_core.formats.zipread import read_member
from loom_desktop.document.context_html import ViewState, step_html
from tests.core.clis import core
from tests.inspect_producer import eval_log, graded_log, json_log

SHOT = Path("/tmp/inspect-window.png")


def _facts(log: Path) -> dict[str, Any]:
    return json.loads(Path(str(log) + ".facts.json").read_text())


def _models(view: Any) -> int:
    return sum(e.kind == "model" for e in view.doc.effects)


def test_the_tab_offers_every_sample_and_switches(window: Any, qtbot: Any) -> None:
    log = eval_log()
    facts = _facts(log)
    view = window.open_path(str(log), background=False)
    bar = view.sample_bar
    assert bar is not None
    qtbot.waitUntil(bar.isVisible, timeout=5_000)
    assert bar.combo.count() == len(facts["order"]) == 4
    assert bar.combo.currentIndex() == 0
    assert _models(view) == facts[facts["order"][0]]["model_calls"]
    tl = view.session.timeline
    first_model = next(s for s in range(len(tl)) if tl.kind_name(s) == "model")
    assert "as recorded by the producer" in step_html(tl, first_model, ViewState())
    third = [s for s in range(len(tl)) if tl.kind_name(s) == "model"][2]
    page = step_html(tl, third, ViewState())  # sent: the add call and the lookup error
    assert "→ add(" in page and "ERROR: unknown: no entry for bob" in page

    target = facts["order"].index("a:2")
    bar.choose(target)
    qtbot.waitUntil(lambda: view.doc.extra["sample"]["id"] == "a", timeout=20_000)
    assert view.doc.extra["sample"]["epoch"] == 2
    assert _models(view) == facts["a:2"]["model_calls"]
    assert bar.combo.currentIndex() == target
    assert view.model.rowCount() > _models(view)
    assert view.session.step == 0
    window.resize(1280, 800)
    view.session.set_step(next(s for s in range(len(tl)) if tl.kind_name(s) == "model"))
    view.flush_render()
    qtbot.wait(50)
    assert window.grab().save(str(SHOT))


def test_a_log_just_written_opens_whole_with_its_samples(
    window: Any, qtbot: Any, open_and_wait: Any, tmp_path: Path
) -> None:
    """A fresh file of a growing format is followed live; an Inspect log is not (a sample is
    final once written, and following would pin the tab to the first one)."""
    fresh = tmp_path / "fresh.eval"
    fresh.write_bytes(eval_log().read_bytes())
    view = open_and_wait(window, fresh)
    assert view.live is None
    qtbot.waitUntil(lambda: view.sample_bar is not None and view.sample_bar.isVisible())
    assert view.sample_bar.combo.count() == 4


def test_a_damaged_sample_is_a_dialog_and_the_tab_stays(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    log = eval_log()
    data, buf = log.read_bytes(), io.BytesIO()
    with zipfile.ZipFile(log) as zf, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for name in zf.namelist():
            member = read_member(zf, name, data, str(log))
            out.writestr(name, b"{torn" if name == "samples/a_epoch_2.json" else member)
    broken = tmp_path / "broken.eval"
    broken.write_bytes(buf.getvalue())
    view = window.open_path(str(broken), background=False)
    before = view.doc
    view.sample_bar.choose(_facts(log)["order"].index("a:2"))
    qtbot.waitUntil(lambda: bool(view.sample_bar.findChildren(QMessageBox)), timeout=20_000)
    box = view.sample_bar.findChildren(QMessageBox)[0]
    assert "broken.eval" in box.text() and "samples/a_epoch_2.json" in box.text()
    assert view.doc is before and window.tabs.count() == 1
    assert view.sample_bar.combo.currentIndex() == 0
    box.close()


def test_the_bar_says_what_summary_json_says_of_each_sample(window: Any, qtbot: Any) -> None:
    """Model and scorer steps and tokens per sample, from the list ``summary --json``
    prints: the bar and the command line never show two numbers for one sample."""
    log = graded_log()
    done = core("summary", "--json", log)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)["samples"]
    view = window.open_path(str(log), background=False)
    bar = view.sample_bar
    qtbot.waitUntil(lambda: bool(bar.counts), timeout=20_000)
    texts = [bar.combo.itemText(i) for i in range(bar.combo.count())]
    assert len(texts) == len(listed) == 3
    for text, entry in zip(texts, listed, strict=True):
        words = f"{entry['model_steps']} model step · {entry['scorer_steps']} scorer step"
        tokens = f"{entry['input_tokens'] + entry['output_tokens']:,} tokens"
        assert text.startswith(f"{entry['id']} · epoch 1") and text.endswith(f"{words} · {tokens}")
    assert "model_graded_fact: I" in texts[2]  # the third answer was graded wrong


def test_a_json_log_opens_in_a_tab_with_its_samples(window: Any, qtbot: Any) -> None:
    """``inspect eval --log-format json``: the same tab, bar and steps as the .eval log."""
    log = json_log()
    view = window.open_path(str(log), background=False)
    qtbot.waitUntil(lambda: view.sample_bar is not None and view.sample_bar.isVisible())
    assert view.sample_bar.combo.count() == 4
    assert _models(view) == _facts(log)[_facts(log)["order"][0]]["model_calls"]
