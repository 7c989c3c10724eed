"""Two quick decisions in the approvals panel both arrive and both are reported.

Real parts: our proxy on the test rig with a confirm shield, two real ``anthropic`` SDK
agents each held on a ``deploy``, the real window's approvals panel on the event
stream. The first decision's request is held back (a gate in the control client) until
the second has been sent and answered, so the two are truly in flight together; no
test waits on the clock.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from loom_core.proxy.control_client import ControlClient
from loom_desktop.main_window import MainWindow
from tests.core.proxy.decisions import SHIELD, TOOLS
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import NEVER_S, Rig, start_rig

WAIT_MS = 15_000


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(tmp_path / "rt"))
    with start_rig(tmp_path, shield=SHIELD) as r:
        yield r


def _ask(rig: Rig, pool: ThreadPoolExecutor, content: str) -> Any:
    client = rig.anthropic()
    return pool.submit(
        lambda: client.messages.create(
            model="fake-1",
            max_tokens=64,
            tools=TOOLS,
            messages=[{"role": "user", "content": content}],
        )
    )


@pytest.mark.parametrize("first", ["arrives", "fails"])
def test_two_quick_decisions_both_arrive(
    qtbot, window: MainWindow, rig: Rig, first: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate, sent = threading.Event(), []
    real = ControlClient.decide

    def gated(self: ControlClient, call_id: str, approve: bool, **extra: Any) -> None:
        sent.append(call_id)
        if len(sent) == 1:
            assert gate.wait(10), "the test never opened the gate"
        real(self, call_id, approve, **extra)

    monkeypatch.setattr(ControlClient, "decide", gated)
    panel = window.attach_proxy(rig.proxy.port, confirm_timeout=NEVER_S)
    connection = window.proxies[-1]
    decided: list[str] = []
    errors: list[str] = []
    connection.decided.connect(decided.append)
    connection.error.connect(errors.append)
    qtbot.waitUntil(lambda: connection.mode == "stream", timeout=WAIT_MS)
    rig.upstream.script(
        Reply(text="", calls=[("a", "deploy", {"env": "one"})]),
        Reply(text="", calls=[("b", "deploy", {"env": "two"})]),
    )
    with ThreadPoolExecutor(2, thread_name_prefix="sdk-agent") as pool:
        answers = [_ask(rig, pool, "first")]
        qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=WAIT_MS)
        answers.append(_ask(rig, pool, "second"))
        qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=WAIT_MS)
        one, two = (c.id for c in panel.model.calls)

        panel.list.setCurrentIndex(panel.model.index(0))
        panel.approve()  # held back at the gate: in flight
        qtbot.waitUntil(lambda: sent == [one], timeout=WAIT_MS)
        assert connection.deciding(one) and not panel.approve_btn.isEnabled()
        panel.approve()  # a second click on the same call sends nothing
        panel.deny()
        assert not panel.deny_btn.isEnabled() and list(connection._deciding) == [one]
        if os.environ.get("LOOM_SHOTS"):
            window.grab().save(os.path.join(os.environ["LOOM_SHOTS"], f"approvals-{first}.png"))

        panel.list.setCurrentIndex(panel.model.index(1))
        assert panel.deny_btn.isEnabled()  # another call can be decided meanwhile
        panel.reason.setText("not now")
        panel.deny()
        qtbot.waitUntil(lambda: decided == [two], timeout=WAIT_MS)
        if first == "fails":  # someone else decided it meanwhile: the proxy answers 404
            real(ControlClient(rig.proxy.port), one, False)
        gate.set()
        if first == "arrives":
            qtbot.waitUntil(lambda: decided == [two, one], timeout=WAIT_MS)
        else:
            qtbot.waitUntil(
                lambda: any(f"no pending approval '{one}'" in e for e in errors), timeout=WAIT_MS
            )
            assert decided == [two]
            assert f"no pending approval '{one}'" in panel.problem.text()  # not overwritten
        assert not connection.deciding(one) and not connection.deciding(two)
        uses = [[b for b in a.result(15).content if b.type == "tool_use"] for a in answers]
    assert [bool(u) for u in uses] == [first == "arrives", False]
    assert sent == [one, two]
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0, timeout=WAIT_MS)
