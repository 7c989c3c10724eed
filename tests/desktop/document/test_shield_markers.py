"""Decision markers in a live proxy tab: each decision on its own call's step, edits shown.

Real parts: our proxy on the test rig with a confirm shield, the real ``anthropic`` SDK
as the agent (:mod:`tests.core.proxy.decisions`: approve, always allow, deny with a
reason, edit then approve, timeout), the real window following the proxy's journal.
The tab must place every decision where the saved trace places it, on the model call
that made the decided call, and the context view must show the edited arguments,
marked, beside what the model asked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from loom_core.formats.loader import load
from loom_core.views.timeline import F_DENIED, F_SHIELD, K_MODEL, build_timeline
from loom_desktop.document.shield_html import EDITED_MARK
from loom_desktop.main_window import MainWindow
from tests.core.proxy.decisions import EXPECTED, SHIELD, run_with_decisions
from tests.core.proxy.harness import Rig, start_rig

WAIT_MS = 20_000
SHIELD_BITS = F_SHIELD | F_DENIED


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(tmp_path / "rt"))
    with start_rig(tmp_path, shield=SHIELD) as r:
        yield r


def test_live_tab_puts_each_decision_on_its_calls_step(qtbot, window: MainWindow, rig: Rig) -> None:
    view = window.open_path(str(rig.proxy.session.paths.journal))
    with ThreadPoolExecutor(1, thread_name_prefix="sdk-agent") as pool:
        assert run_with_decisions(rig, pool).result(20) == "Done."

    def models() -> list[int]:
        tl = view.session.timeline
        return [] if tl is None else [s for s in range(len(tl)) if tl.kind[s] == K_MODEL]

    qtbot.waitUntil(lambda: len(models()) == 8, timeout=WAIT_MS)
    live, steps = view.session.timeline, models()
    assert live.shield_at == {steps[k]: [i] for i, k in enumerate(EXPECTED)}

    def drawn(bit: int) -> list[int]:
        xs = view.timeline_widget.markers[bit].getData()[0]
        return [] if xs is None else [int(x) for x in xs]

    decided = [steps[k] for k in EXPECTED]
    denied = [s for s in decided if live.flags[s] & F_DENIED]
    assert len(denied) == 2  # deny with a reason, and the timeout
    # ◆ on a denial, ★ on every other decision: never both on one step
    qtbot.waitUntil(
        lambda: (
            drawn(F_SHIELD) == [s for s in decided if s not in denied] and drawn(F_DENIED) == denied
        ),
        timeout=WAIT_MS,
    )

    expect = {
        1: ["approve via operator by alice", 'deploy({"env": "prod"})'],
        2: ['always allow \'deploy({"env": "prod"})\' from now on'],
        3: ["deny via operator by bob", "reason: dev is frozen"],
        4: [
            "approve via operator by carol",
            f'deploy({{"env": "staging"}}) {EDITED_MARK}',
            'the model asked deploy({"env": "production"})',
        ],
        5: ["deny via timeout", "nobody answered in time"],
    }
    for k, words in expect.items():
        view.session.set_step(steps[k])
        view.flush_render()
        text = view.context_view.browser.toPlainText()
        assert all(w in text for w in words), (k, words, text[-600:])
        # one sign per decision, the one its step carries: ◆ a denial, ★ any other
        sign = "◆" if steps[k] in denied else "★"
        assert text.count(f"{sign} shield") == 1, text
        assert text.count("★ shield") + text.count("◆ shield") == 1, text
    view.session.set_step(steps[4])
    view.flush_render()
    if os.environ.get("LOOM_SHOTS"):
        window.grab().save(os.path.join(os.environ["LOOM_SHOTS"], "live-edited.png"))

    rig.stop()  # the saved trace places them the same
    final = build_timeline(load(rig.save))
    assert final.shield_at == live.shield_at
    assert [f & SHIELD_BITS for f in final.flags] == [f & SHIELD_BITS for f in live.flags]
