"""Every real Claude Code session of the real-world folder (``claude-code``) reads with its own facts.

Nine sessions (Claude Code 1.0.98 to 2.1.39; sub-agents inline and in their own files,
compaction, responses written as several lines). The facts are counted from the raw lines
by ``claude_raw`` (never with our reader): responses and tool results per depth, tokens
with cache reads and writes, the compaction calls Claude Code made and billed, and the
last answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from loom_core.formats.claude_code import READER
from loom_core.formats.document import Document
from loom_core.formats.loader import load
from loom_core.views.summary import summarize
from loom_core.views.timeline import build_timeline
from tests.core.formats.claude_raw import TOKENS, count
from tests.core.formats.real_world import FILES, real_files

SESSIONS = real_files("claude-code", ".jsonl")
if not SESSIONS:
    pytest.skip(f"no real-world files beside the repository ({FILES})", allow_module_level=True)


def _usage(doc: Document, i: int) -> dict[str, int]:
    eff = doc.effects[i]
    if eff.kind == "model":
        found = doc.result(i).get("usage") or {}
    else:
        raw = getattr(eff.meta, "usage", None)  # (code before meta.usage: none)
        found = msgspec.json.decode(raw) if raw is not None else {}
    return {k: found.get(k) or 0 for k in TOKENS}


def test_the_corpus_is_all_there() -> None:
    assert len(SESSIONS) == 9


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name[:40])
def test_each_session_reads_with_the_counts_its_lines_hold(path: Path) -> None:
    want = count(path)
    doc = load(path)
    kinds = [(e.kind, e.depth or 0) for e in doc.effects]
    for depth in (0, 1):
        assert kinds.count(("model", depth)) == want.models[depth]
        assert sum(k.startswith("tool:") and d == depth for k, d in kinds) == want.tools[depth]
    assert {d for _k, d in kinds} <= {0, 1}
    assert kinds.count(("compact", 0)) == want.compactions
    totals = dict.fromkeys(TOKENS, 0)
    for i in range(len(doc.effects)):
        for key, n in _usage(doc, i).items():
            totals[key] += n
    assert totals == want.tokens
    facts = summarize(doc, "absent")
    assert (facts["input_tokens"], facts["output_tokens"]) == (
        want.tokens["input_tokens"],
        want.tokens["output_tokens"],
    )
    tl = build_timeline(doc)
    assert (tl.input_tokens, tl.output_tokens) == (facts["input_tokens"], facts["output_tokens"])
    assert facts["output"] == want.output


@pytest.mark.parametrize(
    "path", [p for p in SESSIONS if p.with_suffix("").is_dir()], ids=lambda p: p.name[:40]
)
def test_the_compaction_call_is_a_step_where_it_happened(path: Path) -> None:
    """Billed but never shown before: now a ``compact`` step at its boundary, the call's
    summary as its result and its tokens counted (about 1.4 % of a session's)."""
    want = count(path)
    doc = load(path)
    (at,) = [i for i, e in enumerate(doc.effects) if e.kind == "compact"]
    records = doc.extra["records"][at]
    assert records[0]["subtype"] == "compact_boundary"  # the step sits on the boundary
    assert any(r.get("agentId", "").startswith("acompact") for r in records)
    assert _usage(doc, at) == want.compaction_tokens
    assert want.compaction_tokens["cache_read_input_tokens"] > 0
    assert doc.result(at).lstrip().startswith("<analysis>")  # the summary the call wrote
    before = [e.kind for e in doc.effects[:at]]
    assert "model" in before and doc.effects[at + 1].kind == "model"
    assert any("acompact" in p for p in READER.companions(str(path)))  # live tabs re-read it


def test_the_compaction_of_one_session_is_the_readmes_figure() -> None:
    (path,) = [p for p in SESSIONS if p.name.startswith("marot__spotter__4d5611e5")]
    tokens = count(path).compaction_tokens
    assert tokens["cache_read_input_tokens"] == 164_830
    assert tokens["cache_creation_input_tokens"] == 8_681


def _named(prefix: str) -> Path:
    (path,) = [p for p in SESSIONS if p.name.startswith(prefix)]
    return path


def test_the_readmes_figures_are_what_the_files_and_we_say() -> None:
    """The corpus README's own figures, so a slip shared by ``claude_raw`` and the reader
    cannot hide: ``fa812bfe`` writes 105 of its 157 responses as several lines (69 with a
    different usage on each), so summing every line would give 28,988,867 cache-read and
    36,843 output tokens instead of 15,373,675 and 36,256; ``fe5e1c67`` has 161 sub-agent
    responses inline, in 405 sidechain lines; ``5c0375b4`` 22 sidechain lines."""
    path = _named("marot__spotter__fa812bfe")
    usages: dict[str, list[dict[str, int]]] = {}
    for text in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(text)
        if rec.get("type") == "assistant":
            usages.setdefault(rec["message"]["id"], []).append(rec["message"]["usage"])
    several = [u for u in usages.values() if len(u) > 1]
    assert (len(usages), len(several)) == (157, 105)
    assert sum(any(x != u[0] for x in u) for u in several) == 69
    every = [x for u in usages.values() for x in u]
    assert sum(x["cache_read_input_tokens"] for x in every) == 28_988_867
    assert sum(x["output_tokens"] for x in every) == 36_843
    last = [u[-1] for u in usages.values()]
    assert sum(x["cache_read_input_tokens"] for x in last) == 15_373_675
    assert sum(x["output_tokens"] for x in last) == 36_256
    main = [e for e in load(path).effects if e.kind == "model" and not e.depth]
    assert len(main) == 157
    for prefix, sidechain, deep in (
        ("d-kimuson__claude-code-viewer__fe5e1c67", 405, 161),
        ("d-kimuson__claude-code-viewer__5c0375b4", 22, 10),
    ):
        path = _named(prefix)
        recs = [json.loads(t) for t in path.read_text(encoding="utf-8").splitlines()]
        assert sum(r.get("isSidechain") is True for r in recs) == sidechain
        shown = [e for e in load(path).effects if e.kind == "model" and e.depth == 1]
        assert len(shown) == deep
