"""Every real Claude Code session of the real-world folder (``claude-code``) reads with its own facts.

Nine sessions (Claude Code 1.0.98 to 2.1.39; sub-agents inline and in their own files,
compaction, responses written as several lines). The facts are counted from the raw lines
by ``claude_raw`` (never with our reader): responses and tool results per depth, tokens
with cache reads and writes, the compaction calls Claude Code made and billed, and the
last answer.
"""

from __future__ import annotations

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
