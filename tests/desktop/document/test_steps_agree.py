"""The app's step list and ``python -m loom_core steps`` agree, row for row.

Both draw from :func:`loom_core.views.steps.step_row`; what this guards is everything around it:
the app builds its timeline its own way (head first, or slice by slice as a live journal
grows), places shield decisions, and renders cells, while the command loads the file once.
Four kinds of run: the bundled sample, a live journal written while the tab follows it,
a proxy recording with a denied call, and a branch made by ``fork``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loom_core.proxy.config import ShieldFlags
from loom_core.views.steps import flag_marks
from loom_desktop.document.step_list_model import (
    COL_AGENT,
    COL_KIND,
    COL_STEP,
    COL_SUMMARY,
    COL_TOKENS,
)
from loom_desktop.main_window import MainWindow
from tests.core.clis import core
from tests.core.fork.scenarios import weather_run
from tests.core.harness_runs import journal_complete
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import anthropic_agent, start_rig


def cli_rows(path: Path) -> list[dict[str, Any]]:
    done = core("steps", path, "--json")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def assert_agree(view: Any, path: Path) -> list[dict[str, Any]]:
    """Every row the tab shows is the command's row, cell by cell."""
    expected = cli_rows(path)
    model = view.model
    assert model.rowCount() == len(expected)
    for r, want in enumerate(expected):
        assert model.step_row(model.step_at(r)).to_dict() == want, f"row {r}"
        cells = [
            model.index(r, c).data()
            for c in (COL_STEP, COL_KIND, COL_AGENT, COL_SUMMARY, COL_TOKENS)
        ]
        number = "" if want["seq"] is None else str(want["seq"])
        assert cells[0] == number and cells[1].endswith(want["kind"]) and cells[2] == want["agent"]
        assert cells[3].endswith(want["summary"]) and cells[4] == (
            f"{want['tokens']:,}" if want["tokens"] else ""
        )
        assert cells[3][: len(cells[3]) - len(want["summary"])] == flag_marks(
            model.step_row(model.step_at(r)).flags
        )
    return expected


def test_the_sample(open_and_wait, window: MainWindow, sample: Path) -> None:
    rows = assert_agree(open_and_wait(window, sample), sample)
    assert [r["seq"] for r in rows if r["seq"] is not None] == list(range(28))
    assert any(r["shield"] for r in rows) and any(r["seq"] is None for r in rows)


def test_a_live_journal(qtbot, window: MainWindow, tmp_path: Path) -> None:
    recorded, _run = journal_complete(tmp_path)
    lines = recorded.read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[: len(lines) // 2]))  # half the run so far
    view = window.open_path(str(path))
    assert view.live is not None
    view.live.tailer.poll_interval = 0.1
    qtbot.waitUntil(lambda: view.model.rowCount() > 0, timeout=15_000)
    with open(path, "ab") as fh:  # the rest arrives while the tab follows
        fh.write(b"".join(lines[len(lines) // 2 :]))
    expected = cli_rows(recorded)
    qtbot.waitUntil(lambda: view.model.rowCount() == len(expected), timeout=15_000)
    rows = assert_agree(view, path)
    assert [r["seq"] for r in rows].count(None) == 2  # two user prompts, no numbers
    assert any("error" in r["flags"] for r in rows)


def record_with_a_denial(tmp_path: Path) -> Any:
    """A two-call proxy recording (trace, journal and sidecar) whose first reply's
    ``get_time`` call the shield denied."""
    rig = start_rig(tmp_path, shield=ShieldFlags(deny=["get_time*"]))
    try:
        rig.upstream.script(
            Reply(
                text="Checking.",
                calls=[("t1", "get_weather", {"city": "Paris"}), ("t2", "get_time", {"tz": "CET"})],
                usage=(120, 15),
            ),
            Reply(text="Paris 18°C.", usage=(200, 10)),
        )
        anthropic_agent(
            rig.anthropic(),
            [{"role": "user", "content": "Paris?"}],
            {"t1": "Paris: 18°C"},
            3,
            model="claude-sonnet-4-5",
            max_tokens=100,
        )
        rig.stop()
    finally:
        rig.close()
    return rig


def assert_denied_at_step_0(rows: list[dict[str, Any]]) -> None:
    [denied] = [r for r in rows if r["shield"]]
    assert denied["seq"] == 0 and denied["flags"] == ["shield", "denied"]
    assert denied["shield"][0]["tool"] == "get_time" and denied["shield"][0]["action"] == "deny"


def test_a_proxy_recording_with_a_denied_call(
    open_and_wait, window: MainWindow, tmp_path: Path
) -> None:
    rig = record_with_a_denial(tmp_path)
    assert_denied_at_step_0(assert_agree(open_and_wait(window, rig.save), rig.save))


def test_a_proxy_journal_live(qtbot, window: MainWindow, tmp_path: Path) -> None:
    """The live tab reads decisions from the sidecar; so does ``steps`` on the journal."""
    journal = record_with_a_denial(tmp_path).save.with_name("session.journal.jsonl")
    view = window.open_path(str(journal))
    assert view.live is not None
    expected = cli_rows(journal)
    qtbot.waitUntil(
        lambda: (
            view.model.rowCount() == len(expected)
            and any(view.model.step_row(s).shield for s in range(len(expected)))
        ),
        timeout=15_000,
    )
    assert_denied_at_step_0(assert_agree(view, journal))
    assert {r["agent"] for r in expected if r["seq"] is not None} == {"main"}


def test_a_branch(open_and_wait, window: MainWindow, tmp_path: Path) -> None:
    parent = weather_run(tmp_path)
    branch = tmp_path / "branch.loom.json"
    done = core(
        "fork",
        parent,
        "--step",
        "3",
        "--inject",
        "Only Oslo.",
        "--provider",
        "scripted",
        "-o",
        branch,
    )
    assert done.returncode == 0, done.stderr
    view = open_and_wait(window, branch)
    rows = assert_agree(view, branch)
    assert [r["seq"] for r in rows][:6] == [None, 0, 1, 2, 3, 4]  # the parent's prefix, its edit
    assert rows[4]["kind"] == "edit" and rows[5]["kind"] == "model"
    title = window.tabs.tabText(window.tabs.indexOf(view))
    assert title.endswith("at step 3 · note injected")
    assert view.session.step == 5  # the call after the edit
