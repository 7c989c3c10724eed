"""The column filter finds exactly what a step-by-step scan finds, in order, in batches.

The reference below is the filter as it was (each step's kind, flags and lowercased
payload looked at in Python); the fast one must agree on every query, across text
chunk boundaries, on a run that grows between queries, and when cancelled.
"""

from __future__ import annotations

import json
from array import array
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest

from loom_core.formats.canonical import checksum, effect_key
from loom_core.formats.loader import load
from loom_core.views import step_index
from loom_core.views.filtering import _CALL_FLAGS, _FLAGS, filter_steps, iter_matches, parse_query
from loom_core.views.timeline import K_EPISODE, Timeline, TimelineBuilder, build_timeline

RESOURCE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"
QUERIES = [
    "kind:model",
    "tool:read*",
    "tool:bash",
    "tool:search Paris",
    "agent:helper",
    "is:subagent",
    "is:error",
    "is:blocked",
    "ERROR",
    "brûlée",
    '"needle with space"',
    "tool:",
    "model",
    "kind:tool zz",
    "a b c",
    "tool:bash is:subagent needle",
    "kind:human",
    "unknownword",
]


def _reference(tl: Timeline, text: str) -> list[int] | None:
    """The step-by-step filter the columns replaced."""
    q = parse_query(text)
    if q.empty:
        return None
    if q.nothing:
        return []
    groups = []
    for t in q.texts:
        escaped = json.dumps(t)[1:-1].encode("ascii")
        groups.append([t.encode()] if escaped == t.encode() else [t.encode(), escaped.lower()])
    out = []
    results: dict[int, list[int]] = {}
    for result, caller in enumerate(tl.call_of):
        if caller >= 0:
            results.setdefault(caller, []).append(result)

    def tool_named(step: int) -> bool:
        name = tl.kind_name(step)
        return name.startswith("tool:") and any(fnmatchcase(name[5:], t) for t in q.tools)

    def called(step: int) -> bool:  # a model step that called such a tool
        shield = [str(tl.doc.shield_events[i].tool or "") for i in tl.shield_at.get(step, ())]
        return any(tool_named(r) for r in results.get(step, ())) or any(
            fnmatchcase(t, p) for t in shield for p in q.tools
        )

    for step in range(len(tl)):
        flags = tl.flags[step]
        for result in results.get(step, ()):
            flags |= tl.flags[result] & _CALL_FLAGS
        name = tl.kind_name(step)
        ok = (
            (not q.kinds or tl.kind[step] in q.kinds)
            and (not q.flags or flags & q.flags)
            and (not q.subagent or tl.depth[step])
            and (not q.agents or any(a in tl.agents[tl.agent[step]].lower() for a in q.agents))
            and (not q.tools or tool_named(step) or called(step))
        )
        if ok and groups:
            e = tl.effect_of[step]
            if e < 0:
                payload = tl.doc.episodes[tl.episode_of[step]].lower().encode()
            else:
                raw = tl.doc.effects[e].result
                payload = (bytes(raw).lower() if raw is not None else b"") + name.lower().encode()
            ok = all(any(n in payload for n in g) for g in groups)
        if ok:
            out.append(step)
    return out


def _trace(n: int) -> dict[str, Any]:
    log = []
    for seq in range(n):
        depth = 1 if seq % 13 in (5, 6) else 0
        meta = {"agent": "helper" if depth else "lead"}
        if seq % 2 == 0:
            result: Any = {
                "text": f"Step {seq} Looks at PARIS" if seq % 5 == 0 else f"thinking {seq}",
                "tool_calls": [{"id": f"c{seq}", "name": "bash", "input": {"cmd": "ls"}}],
                "usage": {"input_tokens": 10, "output_tokens": 2},
            }
            log.append(
                {
                    "seq": seq,
                    "kind": "model",
                    "key": effect_key("model", seq),
                    "result": result,
                    "depth": depth,
                    "meta": meta,
                }
            )
            continue
        tool = ("bash", "read_file", "search")[seq % 3]
        body = "ERROR: boom needle with space" if seq % 17 == 0 else f"output Brûlée {seq}"
        if seq % 23 == 0:
            body = "BLOCKED: by rule"
        log.append(
            {
                "seq": seq,
                "kind": f"tool:{tool}",
                "key": effect_key(tool, seq),
                "result": body,
                "depth": depth,
                "meta": meta,
            }
        )
    doc = {
        "version": 2,
        "model": "m",
        "prompt": "go A B C",
        "episodes": ["go A B C", "more"],
        "output": "",
        "log": log,
    }
    doc["checksum"] = checksum(doc)
    return doc


@pytest.fixture(params=["synthetic", "sample"])
def doc_path(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    if request.param == "sample":
        return RESOURCE
    path = tmp_path / "t.loom.json"
    path.write_text(json.dumps(_trace(400), ensure_ascii=False))
    return path


def test_every_query_finds_what_a_step_by_step_scan_finds(
    doc_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_index, "CHUNK_STEPS", 37)  # many chunk boundaries
    tl = build_timeline(load(doc_path))
    assert any(tl.kind[s] == K_EPISODE for s in range(len(tl)))
    for text in QUERIES:
        batches = list(iter_matches(tl, text))
        rows = filter_steps(tl, text)
        flat = [s for b in batches for s in b]
        assert (rows if rows is None else list(rows)) in (_reference(tl, text), None), text
        assert rows is None or flat == list(rows), text
        assert flat == sorted(set(flat)), text  # ascending, no step twice


def test_a_growing_run_is_filtered_up_to_its_current_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_index, "CHUNK_STEPS", 50)
    monkeypatch.setattr(step_index, "CHUNK_BYTES", 900)  # some chunks end on size
    path = tmp_path / "t.loom.json"
    path.write_text(json.dumps(_trace(300), ensure_ascii=False))
    builder = TimelineBuilder(load(path))
    for upto in (7, 49, 50, 51, 180, 300):
        builder.extend(upto, final=upto == 300)
        for text in ("needle", "tool:bash paris", "output", "is:error"):
            rows = filter_steps(builder.tl, text)
            assert rows is not None and list(rows) == _reference(builder.tl, text), (upto, text)


def test_streamed_batches_arrive_before_the_search_ends_and_cancel_stops_it(
    doc_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_index, "CHUNK_STEPS", 5)
    tl = build_timeline(load(doc_path))
    seen: list[array[int]] = []
    rows = filter_steps(tl, "e", found=seen.append)
    assert rows is not None and len(seen) > 1 and [s for b in seen for s in b] == list(rows)
    calls = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 2

    partial = filter_steps(tl, "e", cancelled)
    assert partial is not None and len(partial) < len(rows)
    assert list(partial) == list(rows)[: len(partial)]


def test_flag_names_cover_blocked_and_denied() -> None:
    assert _FLAGS["error"] & _CALL_FLAGS == _CALL_FLAGS
