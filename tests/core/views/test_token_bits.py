"""The frequent words' exact bits (issue 24): a text inside a frequent word is answered
from its bits without reading any step's text, and the filter with them finds exactly
what the step-by-step scan finds, whatever the texts, needles and words chosen."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom_core.formats.canonical import checksum, effect_key
from loom_core.formats.loader import load
from loom_core.views import step_index, text_index, token_bits
from loom_core.views.filtering import filter_steps
from loom_core.views.timeline import build_timeline
from tests.core.views.test_filtering_columns import _reference
from tests.core.views.test_text_index import _counting_builds

WORDS = ["gamma", "delta", "gammaray", "Alpha_9", "beta", "brûlée", "x.y", "ab", "delt"]


def _write(folder: Path, texts: list[str]) -> Path:
    log = [
        {"seq": i, "kind": "tool:bash", "key": effect_key("bash", i), "result": text}
        for i, text in enumerate(texts)
    ]
    doc: dict[str, Any] = {"version": 2, "model": "m", "prompt": "go", "episodes": ["go"]}
    doc.update(output="", log=log)
    doc["checksum"] = checksum(doc)
    path = folder / "t.loom.json"
    path.write_text(json.dumps(doc, ensure_ascii=False))
    return path


def test_a_text_inside_a_frequent_word_reads_no_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_index, "CHUNK_STEPS", 16)
    texts = [f"gamma delta {i}" if i % 5 else f"GAMMARAY beta {i}" for i in range(200)]
    tl = build_timeline(load(_write(tmp_path, texts)))
    index = text_index.ensure(tl, str(tmp_path / "idx"))
    assert index is not None and {b"gamma", b"delta", b"gammaray"} <= set(index.tokens.tokens)
    built = _counting_builds(monkeypatch)
    for text in ("gamma delta", "gamm", "amma", "delta", "ray", "gamma beta"):
        rows = filter_steps(tl, text)
        assert rows is not None and list(rows) == _reference(tl, text), text
    assert built == []  # every answer from the words' bits and the trigrams: no text read
    for text in ('"gamma delta"', '"a d"', '"y b"'):  # across words: by their other trigrams
        rows = filter_steps(tl, text)
        assert rows is not None and list(rows) == _reference(tl, text), text
    again = text_index.load(
        text_index.index_file(str(tmp_path / "idx"), tl.doc.path, len(tl)) or "", len(tl)
    )
    assert again is not None and again.tokens.tokens == index.tokens.tokens
    assert again.tokens.bits.tobytes() == index.tokens.bits.tobytes()


def test_the_build_yields_between_a_chunks_words_and_its_trigrams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_index, "CHUNK_STEPS", 16)
    tl = build_timeline(load(_write(tmp_path, [f"gamma delta {i}" for i in range(160)])))
    asked: list[int] = []
    assert text_index.build(tl, lambda: bool(asked.append(1))) is not None
    assert len(asked) > 2 * 10  # ten chunks: twice in each, where a window's build pauses


_TEXT = st.lists(
    st.one_of(st.sampled_from(WORDS), st.text('aAbgmé._ 9\\"', max_size=4)), max_size=8
).map(" ".join)


_NEEDLE = st.one_of(
    st.sampled_from(WORDS),
    st.tuples(st.sampled_from(WORDS), st.sampled_from(WORDS)).map(
        lambda p: json.dumps(" ".join(p))
    ),
    st.text('aAbgmdélt._ 9y"', min_size=1, max_size=6),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(_TEXT, min_size=1, max_size=40),
    needles=st.lists(_NEEDLE, min_size=1, max_size=2),
    limit=st.integers(0, 5),
)
def test_the_words_bits_change_no_answer(texts: list[str], needles: list[str], limit: int) -> None:
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as mp:
        mp.setattr(step_index, "CHUNK_STEPS", 7)
        mp.setattr(token_bits, "MAX_TOKENS", limit)  # some frequent words get bits, some not
        tl = build_timeline(load(_write(Path(folder), texts)))
        assert text_index.ensure(tl, str(Path(folder) / "idx")) is not None
        for text in [*needles, " ".join(needles), json.dumps(" ".join(needles))]:
            rows = filter_steps(tl, text)
            assert (rows if rows is None else list(rows)) in (_reference(tl, text), None), text
