"""File ▸ Export ▸ Self-contained HTML / ``export-html``: one page, offline, true to the app.

The page is checked in a real browser (Debian's headless Chromium, over the DevTools
protocol): it renders, the keyboard scrubs through steps, and it fetches nothing. Where
Chromium is not installed those browser tests are skipped, saying so; the page's data is
checked against the app's own rows either way.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import pytest

from benchmarks.chromium_cdp import Browser, chromium_binary
from loom_core.export.html import render_page
from loom_core.export.page_data import page_data
from loom_core.formats.loader import load
from loom_core.views.steps import step_rows
from loom_core.views.timeline import build_timeline
from tests.core.clis import core

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample.loom.json"
needs_chromium = pytest.mark.skipif(
    chromium_binary() is None, reason="Debian's chromium is not installed"
)


def _data(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="loom-data">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1))


def test_rows_are_the_apps_rows() -> None:
    doc = load(SAMPLE)
    data = _data(render_page(doc))
    rows = list(step_rows(build_timeline(doc)))
    assert [r[0] for r in data["rows"]] == [r.seq for r in rows]
    assert [r[1] for r in data["rows"]] == [r.kind for r in rows]
    assert [r[6] for r in data["rows"]] == [r.cost_text for r in rows]
    # one step, one number: the header counts the numbered steps (prompt rows are none)
    assert data["totals"]["steps"] == len(doc.effects) == 28 < len(rows)


def test_a_context_rebuilt_from_the_chain_is_the_apps_frame() -> None:
    from loom_core.views.frames import frame_at

    doc = load(SAMPLE)
    tl = build_timeline(doc)
    data = page_data(doc, tl)
    for step in (s for s in range(len(tl)) if tl.kind_name(s) == "model"):
        chain, s = [], step
        while s >= 0:
            c = data["details"][s]["context"]
            chain.append(c)
            s = c["prev"] if c["keep"] else -1
        msgs: list = []
        for c in reversed(chain):
            msgs = msgs[: c["keep"]] + c["new"]
        frame = frame_at(tl.context, tl.effect_of[step])
        assert [m[1] for m in msgs] == [m.text for m in frame.messages()], step


def test_nothing_in_the_data_can_close_the_script_element(tmp_path: Path) -> None:
    src = json.loads(SAMPLE.read_text())
    src["log"][2]["result"] = "</script><script>alert(1)</script>"
    (tmp_path / "x.loom.json").write_text(json.dumps(src))
    page = render_page(load(tmp_path / "x.loom.json"))
    assert page.count("</script>") == 2  # the data block's and the program's
    assert _data(page)["details"][3]["result"].startswith("</script>")


def test_scrub_replaces_secrets(tmp_path: Path) -> None:
    src = json.loads(SAMPLE.read_text())
    src["log"][2]["result"] = "key sk-ant-api03-" + "a" * 40
    (tmp_path / "x.loom.json").write_text(json.dumps(src))
    doc = load(tmp_path / "x.loom.json")
    assert "sk-ant-api03-" in render_page(doc)
    assert "sk-ant-api03-" not in render_page(doc, scrub=True)


def test_cli_writes_refuses_and_names_bad_input(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    done = core("export-html", SAMPLE, "-o", out)
    assert done.returncode == 0 and out.stat().st_size > 10_000
    again = core("export-html", SAMPLE, "-o", out)
    assert (
        again.returncode == 2 and "exists" in again.stderr and len(again.stderr.splitlines()) == 1
    )
    bad = tmp_path / "bad.loom.json"
    bad.write_text("{")
    failed = core("export-html", bad, "-o", tmp_path / "b.html")
    assert failed.returncode == 2 and str(bad) in failed.stderr
    assert not (tmp_path / "b.html").exists()


async def _browse(page: Path, shot: Path) -> dict:
    async with Browser() as b:
        await b.open(page.as_uri() + "#step=12")
        first = await b.eval("document.body.dataset.step")
        head = await b.eval("document.querySelector('#detail .hdr').textContent")
        for _ in range(3):
            await b.key("ArrowDown", 40)
        moved = await b.eval("document.body.dataset.step")
        await b.key("End", 35)
        last = await b.eval("document.querySelector('#detail .hdr').textContent")
        rows = await b.eval("document.querySelectorAll('.row').length")
        await b.screenshot(shot)
        return {"first": first, "head": head, "moved": moved, "last": last, "rows": rows,
                "requests": list(b.requests)}  # fmt: skip


@needs_chromium
@pytest.mark.timeout(180)
def test_the_page_renders_scrubs_and_fetches_nothing_in_chromium(tmp_path: Path) -> None:
    page = tmp_path / "sample.html"
    assert core("export-html", SAMPLE, "-o", page).returncode == 0
    seen = asyncio.run(_browse(page, tmp_path / "shot.png"))
    rows = _data(page.read_text())["rows"]
    at = next(i for i, r in enumerate(rows) if r[0] == 12)
    assert seen["first"] == str(at) and "step 12" in seen["head"]
    assert seen["moved"] == str(at + 3)
    assert f"step {rows[-1][0]}" in seen["last"]
    assert 0 < seen["rows"] < len(rows) + 1
    assert all(u.startswith("file://") for u in seen["requests"]), seen["requests"]
    assert (tmp_path / "shot.png").stat().st_size > 10_000


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_pages_and_traces_get_a_plain_files_mode(tmp_path: Path) -> None:
    """Shared files are written as a plain write would leave them (0666 less the umask; a
    replaced file keeps its mode), not 0600 from the private temporary file."""
    import stat

    from loom_core.formats.save import save_document

    old = os.umask(0o022)
    try:
        page, trace = tmp_path / "p.html", tmp_path / "t.loom.json"
        assert core("export-html", SAMPLE, "-o", page).returncode == 0
        save_document(load(SAMPLE), trace)
        assert stat.S_IMODE(page.stat().st_mode) == 0o644
        assert stat.S_IMODE(trace.stat().st_mode) == 0o644
        trace.chmod(0o640)
        save_document(load(SAMPLE), trace)
        assert stat.S_IMODE(trace.stat().st_mode) == 0o640
    finally:
        os.umask(old)


def test_only_the_pages_own_script_may_run() -> None:
    """The policy names the page's script by its hash: no 'unsafe-inline', so a script an
    escaping slip let into the data would not run."""
    import base64
    import hashlib

    page = render_page(load(SAMPLE))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert policy is not None
    script_src = next(p for p in policy.group(1).split(";") if p.strip().startswith("script-src"))
    assert "unsafe-inline" not in script_src
    program = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(program) == 1
    digest = base64.b64encode(hashlib.sha256(program[0].encode()).digest()).decode()
    assert script_src.split() == ["script-src", f"'sha256-{digest}'"]


def test_the_legend_names_what_the_run_has_in_the_apps_colours() -> None:
    from loom_core.views.palette import KIND_COLORS

    legend = page_data(load(SAMPLE))["legend"]
    assert [k for k, _c in legend["kinds"]] == ["prompt", "model", "tool", "time"]
    assert all(color == KIND_COLORS[kind] for kind, color in legend["kinds"])
    assert [m[0] for m in legend["marks"]] == ["error", "blocked", "denied", "shield"]
    assert [m[1] for m in legend["marks"]] == ["✖", "▼", "◆", "★"]


async def _look(page: Path, shot: Path, step: int) -> dict:
    async with Browser() as b:
        await b.open(page.as_uri() + f"#step={step}")
        legend = await b.eval("document.getElementById('legend').textContent")
        head = await b.eval("document.querySelector('#detail .hdr').textContent")
        # the canvas drew its axis labels and markers: sample pixels of their colours
        await b.screenshot(shot)
        return {
            "legend": legend,
            "head": head,
            "ready": await b.eval("document.body.dataset.ready"),
        }


@needs_chromium
@pytest.mark.timeout(240)
def test_the_page_has_a_legend_and_an_inspect_tool_step_no_empty_agent(tmp_path: Path) -> None:
    from tests.inspect_producer import eval_log

    sample_page = tmp_path / "sample.html"
    assert core("export-html", SAMPLE, "-o", sample_page).returncode == 0
    seen = asyncio.run(_look(sample_page, tmp_path / "sample.png", 12))
    assert seen["ready"] == "1"  # the script ran under the hash-only policy
    for words in ("prompt", "model", "tool", "✖ error", "▼ blocked call", "◆ denied", "★ shield"):
        assert words in seen["legend"], (words, seen["legend"])
    log_page = tmp_path / "inspect.html"
    assert core("export-html", eval_log(), "-o", log_page).returncode == 0
    rows = _data(log_page.read_text())["rows"]
    tool = next(r for r in rows if r[1].startswith("tool:"))
    assert tool[3] == ""  # inspect names no agent for a tool call
    seen = asyncio.run(_look(log_page, tmp_path / "inspect.png", tool[0]))
    assert seen["head"].startswith(f"{tool[1]} · step {tool[0]}")
    assert "agent" not in seen["head"], seen["head"]  # was "· agent " with nothing after it
