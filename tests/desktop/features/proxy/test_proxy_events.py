"""The app on our proxy's event stream: no polling, decisions on the live timeline, notices.

Real parts: our proxy in-process (the test rig: fake upstream + proxy on a loop
thread) with a shield, the real ``anthropic`` SDK as the agent, the real window
offscreen; loom-harness's own proxy for the polling fallback. A fake tray icon is
the seam for desktop notifications (the offscreen platform has no tray).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QWidget

from loom_core.formats.loader import load
from loom_core.proxy.config import ShieldFlags
from loom_core.proxy.control_client import ControlClient
from loom_core.views.timeline import F_DENIED, F_SHIELD, K_MODEL, build_timeline
from loom_desktop.infra.notify import HeldNotifier
from loom_desktop.main_window import MainWindow
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import NEVER_S, Rig, start_rig
from tests.core.proxy.test_control_client import _ask, loom_proxy  # noqa: F401 (fixture)

TOOLS = [
    {"name": name, "description": name, "input_schema": {"type": "object"}}
    for name in ("deploy", "read_notes")
]
WAIT_MS = 15_000
SHIELD_BITS = F_SHIELD | F_DENIED


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(tmp_path / "rt"))
    r = start_rig(tmp_path, shield=ShieldFlags(confirm=["deploy*"], confirm_timeout=NEVER_S))
    try:
        yield r
    finally:
        r.close()


@pytest.fixture(autouse=True)
def _no_reader_threads() -> Iterator[None]:
    """Torn down after the window: every event-stream reader must have been stopped."""
    yield
    left = [t.name for t in threading.enumerate() if t.name.startswith("loom-proxy-events")]
    assert not left, f"event-stream readers outlived the test: {left}"


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(2, thread_name_prefix="sdk-agent") as p:
        yield p


def ask(rig: Rig, pool: ThreadPoolExecutor, content: str) -> Future[Any]:
    client = rig.anthropic()
    return pool.submit(
        lambda: client.messages.create(
            model="fake-1",
            max_tokens=64,
            tools=TOOLS,
            messages=[{"role": "user", "content": content}],
        )
    )


class FakeTray(QObject):
    """Stands in for ``QSystemTrayIcon``: records messages, can be 'clicked'."""

    messageClicked = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[tuple[str, str]] = []
        self.visible = False

    def show(self) -> None:
        self.visible = True

    def hide(self) -> None:
        self.visible = False

    def showMessage(self, title: str, text: str, _icon: Any, _ms: int) -> None:  # noqa: N802
        self.messages.append((title, text))


def test_held_calls_come_by_stream_without_polling(
    qtbot, window: MainWindow, rig: Rig, pool: ThreadPoolExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    polled: list[int] = []
    real_pending = ControlClient.pending
    monkeypatch.setattr(
        ControlClient, "pending", lambda self: polled.append(1) or real_pending(self)
    )
    panel = window.attach_proxy(rig.proxy.port, confirm_timeout=NEVER_S)
    connection = window.proxies[-1]
    qtbot.waitUntil(lambda: connection.mode == "stream", timeout=WAIT_MS)  # hello arrived
    assert panel.status.text() == "no held calls"
    rig.upstream.script(Reply(text="", calls=[("t1", "deploy", {"env": "prod"})]))
    answer = ask(rig, pool, "ship it")
    qtbot.waitUntil(lambda: panel.current() is not None, timeout=WAIT_MS)
    assert panel.current().tool == "deploy" and "denied automatically in" in panel.countdown.text()
    with qtbot.waitSignal(connection.pending_changed, timeout=WAIT_MS):
        pass  # the countdown moves on between events, locally
    panel.approve()
    assert answer.result(15).content[-1].type == "tool_use"
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0, timeout=WAIT_MS)  # "decided" event

    hub = rig.proxy.server.events  # the stream drops while the proxy lives: reopened
    rig.lt.loop.call_soon_threadsafe(lambda: [hub._drop(s) for s in list(hub.subscribers)])
    qtbot.waitUntil(lambda: hub.dropped == 1 and len(hub.subscribers) == 1, timeout=WAIT_MS)
    rig.upstream.script(Reply(text="", calls=[("t2", "deploy", {"env": "dev"})]))
    answer = ask(rig, pool, "again")
    qtbot.waitUntil(lambda: panel.current() is not None, timeout=WAIT_MS)
    assert panel.current().input == {"env": "dev"}
    panel.deny()
    answer.result(15)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0, timeout=WAIT_MS)
    assert polled == [] and not connection.polling  # never polled
    reader = connection._reader
    assert reader is not None and reader.is_alive()
    window.close()  # stops the reader thread (bounded join)
    assert connection._reader is None and not reader.is_alive()


def test_loom_harness_proxy_is_polled(qtbot, window: MainWindow, loom_proxy) -> None:  # noqa: F811
    port, upstream, _lt = loom_proxy
    panel = window.attach_proxy(port, confirm_timeout=NEVER_S)
    qtbot.waitUntil(lambda: window.proxies[-1].mode == "poll", timeout=WAIT_MS)
    assert window.proxies[-1].polling
    upstream.script(Reply(text="ok", calls=[("t1", "deploy", {"env": "prod"})]))
    out: list[Any] = []
    thread = _ask(port, out)
    qtbot.waitUntil(lambda: panel.current() is not None, timeout=WAIT_MS)
    panel.deny()
    thread.join(20)
    assert out and not [b for b in out[0].content if b.type == "tool_use"]


def agent_run(rig: Rig) -> Any:
    """A tool loop, as agents run: one prompt, tool results fed back until a final text."""
    client = rig.anthropic()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "release 1.4"}]
    for _ in range(4):
        reply = client.messages.create(
            model="fake-1", max_tokens=64, tools=TOOLS, messages=messages
        )
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            return reply
        messages += [
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in reply.content],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": u.id, "content": "notes: all green"}
                    for u in uses
                ],
            },
        ]
    raise AssertionError("the agent did not finish")


def test_live_tab_places_a_denied_call_like_the_finished_trace(
    qtbot, window: MainWindow, rig: Rig, pool: ThreadPoolExecutor
) -> None:
    journal = rig.proxy.session.paths.journal
    view = window.open_path(str(journal))
    rig.upstream.script(
        Reply(text="Reading.", calls=[("r1", "read_notes", {})]),
        Reply(
            text="Shipping.",
            calls=[("r2", "read_notes", {"again": True}), ("d1", "deploy", {"env": "prod"})],
        ),
        Reply(text="Done, without deploying."),
    )
    run = pool.submit(agent_run, rig)
    call = _wait_held(qtbot, rig)
    ControlClient(rig.proxy.port).decide(call.id, False, reason="frozen")
    assert run.result(15).content[0].text == "Done, without deploying."

    def live_models() -> int:
        tl = view.session.timeline
        return 0 if tl is None else tl.kind.count(K_MODEL)

    qtbot.waitUntil(lambda: live_models() == 3, timeout=WAIT_MS)  # all three exchanges
    live = view.session.timeline
    [(step, placed)] = live.shield_at.items()
    assert placed == [0]
    models = [s for s in range(len(live)) if live.kind[s] == K_MODEL]
    assert step == models[1] and live.flags[step] & F_DENIED  # the deploy's model step

    def drawn() -> bool:
        xs = view.timeline_widget.markers[F_DENIED].getData()[0]
        return xs is not None and step in list(xs)

    qtbot.waitUntil(drawn, timeout=WAIT_MS)
    view.session.set_step(step)
    view.flush_render()
    assert "shield deny via operator" in view.context_view.browser.toPlainText()

    rig.stop()  # finalized: the same run as a trace
    final = build_timeline(load(rig.save))
    assert len(final) == len(live)
    assert [final.kind[s] for s in range(len(final))] == [live.kind[s] for s in range(len(live))]
    assert final.shield_at == live.shield_at
    assert (final.call_of, final.agents, list(final.agent)) == (
        live.call_of,
        live.agents,
        list(live.agent),
    )
    assert [f & SHIELD_BITS for f in final.flags] == [f & SHIELD_BITS for f in live.flags]
    assert [e.model_dump() for e in final.doc.shield_events] == [
        e.model_dump() for e in live.doc.shield_events
    ]


def _wait_held(qtbot, rig: Rig) -> Any:
    found: list[Any] = []
    qtbot.waitUntil(
        lambda: bool(found.extend(ControlClient(rig.proxy.port).pending()) or found),
        timeout=WAIT_MS,
    )
    return found[0]


def _background(qtbot, window: MainWindow) -> QWidget:
    other = QWidget()
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow(), timeout=WAIT_MS)
    return other


def test_notification_once_per_held_call_in_the_background(
    qtbot, window: MainWindow, rig: Rig, pool: ThreadPoolExecutor
) -> None:
    tray = FakeTray()
    window.notifier = HeldNotifier(window, tray=tray)
    panel = window.attach_proxy(rig.proxy.port, confirm_timeout=NEVER_S)
    qtbot.waitUntil(lambda: window.proxies[-1].mode == "stream", timeout=WAIT_MS)
    _background(qtbot, window)
    rig.upstream.script(
        Reply(text="", calls=[("a", "deploy", {"env": "one"})]),
        Reply(text="", calls=[("b", "deploy", {"env": "two"})]),
    )
    answers = [ask(rig, pool, "first")]
    qtbot.waitUntil(lambda: len(tray.messages) == 1, timeout=WAIT_MS)
    answers.append(ask(rig, pool, "second"))
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=WAIT_MS)
    for _ in range(2):  # the list is re-sent (ages move on): no second notice per call
        with qtbot.waitSignal(window.proxies[-1].pending_changed, timeout=WAIT_MS):
            pass
    assert len(tray.messages) == 2 and tray.visible
    assert all("deploy is waiting for approval" in text for _title, text in tray.messages)
    second = panel.model.calls[1]
    assert panel.current().id != second.id
    tray.messageClicked.emit()  # the user clicks the last message
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
    assert panel.current().id == second.id  # its card is selected
    for call in list(panel.model.calls):
        ControlClient(rig.proxy.port).decide(call.id, True)
    for answer in answers:
        answer.result(15)
    window.close()
    assert not tray.visible


def test_no_notification_while_active_and_alert_without_tray(
    qtbot, window: MainWindow, rig: Rig, pool: ThreadPoolExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    alerts: list[Any] = []
    monkeypatch.setattr(QApplication, "alert", staticmethod(lambda w, ms=0: alerts.append(w)))
    panel = window.attach_proxy(rig.proxy.port, confirm_timeout=NEVER_S)
    notifier = window.notifier
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
    rig.upstream.script(
        Reply(text="", calls=[("a", "deploy", {"env": "one"})]),
        Reply(text="", calls=[("b", "deploy", {"env": "two"})]),
    )
    first = ask(rig, pool, "first")
    qtbot.waitUntil(lambda: panel.current() is not None, timeout=WAIT_MS)
    assert notifier.sent == [] and alerts == []  # the user is looking
    _background(qtbot, window)
    second = ask(rig, pool, "second")
    qtbot.waitUntil(lambda: len(notifier.sent) == 1, timeout=WAIT_MS)
    assert notifier.tray is None and window in alerts  # no tray here: the taskbar flashes
    assert notifier.sent[0][0] == panel.model.calls[1].id  # only the new call
    for call in list(panel.model.calls):
        ControlClient(rig.proxy.port).decide(call.id, False)
    first.result(15)
    second.result(15)


def _record(
    session: Any, n: int, text: str, calls: list[tuple[str, Any]], events: list[dict[str, Any]]
) -> None:
    """One Anthropic exchange of a single-prompt run, with the shield events it carried."""
    content = [{"type": "text", "text": text}] + [
        {"type": "tool_use", "id": f"t{n}{i}", "name": name, "input": args}
        for i, (name, args) in enumerate(calls)
    ]
    response = {
        "id": f"msg{n}",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 2},
    }
    request = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
    assert session.record("/v1/messages", "anthropic", request, response, events, 1.0)


def _event(action: str, tool: str | None, args: Any = None, via: str = "operator") -> dict:
    if tool is None:
        return {"ts": 1.0, "action": action, "via": "sequence", "rule": "taint"}
    return {"ts": 1.0, "tool": tool, "input": args, "rule": "r", "action": action, "via": via}


def test_incremental_placement_matches_the_trace_step_by_step(tmp_path: Path) -> None:
    """Found later (an edited approval whose original call shows up afterwards), taint
    events with no call, and a deny: placed as the finished trace places them."""
    from loom_core.formats.save import save_dict
    from loom_core.proxy.session import RecordingSession
    from loom_core.views.timeline import TimelineBuilder
    from loom_desktop.document.live_shield import LiveShield

    session = RecordingSession(tmp_path / "s.loom.json")
    prod = {"env": "prod"}
    blocked = (
        '[loom shield] Blocked tool call rm({"path": "/"}) -- denied by the operator.'
        " The call was not executed."
    )
    _record(session, 0, "hi", [("read", {})], [_event("tainted", None)])
    _record(session, 1, "edited", [("deploy", {"env": "dev"})], [_event("approve", "deploy", prod)])
    _record(session, 2, "later", [("read", {"x": 1})], [_event("tainted", None)])
    _record(session, 3, "same call", [("deploy", prod)], [])
    _record(session, 4, blocked, [], [_event("deny", "rm", {"path": "/"})])
    _record(session, 5, "bye", [], [])
    save_dict(session.trace(), tmp_path / "s.loom.json")
    session.abandon()
    final = build_timeline(load(tmp_path / "s.loom.json"))

    doc = load(session.paths.journal)
    shield = LiveShield(session.paths.journal)
    assert shield.proxy
    doc.header.recorded_via = "proxy"
    builder = TimelineBuilder(doc)
    seen = []
    for upto in range(1, len(doc.effects) + 1):  # the tab indexes one effect at a time
        builder.extend(upto)
        shield.refresh(builder.tl)
        seen.append(dict(builder.tl.shield_at))
    builder.extend(final=True)
    shield.refresh(builder.tl)
    live = builder.tl
    assert final.shield_at and live.shield_at == final.shield_at
    assert [f & SHIELD_BITS for f in live.flags] == [f & SHIELD_BITS for f in final.flags]
    models = [s for s in range(len(live)) if live.kind[s] == K_MODEL]
    assert final.shield_at[models[3]] == [1, 2]  # the approval, found late, and the taint after
    assert any(1 in v and s != models[3] for shown in seen for s, v in shown.items())


def test_a_badly_typed_sidecar_event_is_left_out_not_raised(tmp_path: Path) -> None:
    """A hand-edited sidecar event the type does not take (a text time, a numeric action)
    is skipped like a line that does not parse; the events beside it are still placed."""
    from loom_core.proxy.session import RecordingSession
    from loom_core.views.timeline import TimelineBuilder
    from loom_desktop.document.live_shield import LiveShield

    session = RecordingSession(tmp_path / "s.loom.json")
    bad = {"ts": "noon", "action": 5, "via": "operator"}
    _record(session, 0, "blocked", [], [bad, _event("deny", "rm", {"path": "/"})])
    _record(session, 1, "bye", [], [])
    doc = load(session.paths.journal)
    session.abandon()
    shield = LiveShield(session.paths.journal)
    builder = TimelineBuilder(doc)
    for upto in range(1, len(doc.effects) + 1):  # the tab indexes one effect at a time
        builder.extend(upto)
        shield.refresh(builder.tl)
    assert [(e.action, e.tool) for e in shield.events] == [("deny", "rm")]
    assert list(builder.tl.shield_at.values()) == [[0]]
