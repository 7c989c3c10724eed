"""loom-harness's three findings: thresholds at their edges, checked against the oracle.

Why every case also asks loom-harness: agreeing with ``loom doctor`` on the
same file is the contract, so each edge (200 tokens, 25%, 3 words, 9/10
Jaccard, whole-word mentions) is asserted on our result *and* compared with
``Run.load(path).checkup()``. A seeded random sweep then covers the
combinations no one would write by hand.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from loom import Run

from loom_core.doctor import DUPLICATE, HARNESS_KINDS, OVERSIZED, UNUSED, checkup_path
from tests.core.clis import core
from tests.core.doctor.traces import WORDS, Trace


def harness_view(path: Path) -> tuple[int, list[tuple[Any, ...]]]:
    """Our harness-kind findings as loom-harness states them (its seq: None for episodes)."""
    report = checkup_path(path)
    found = [
        (f.kind, f.severity, f.message, f.tokens, None if f.effect is None else f.step, f.snippet)
        for f in report.findings
        if f.kind in HARNESS_KINDS
    ]
    return report.total_tokens, sorted(found, key=repr)


def oracle_view(path: Path) -> tuple[int, list[tuple[Any, ...]]]:
    ref = Run.load(str(path)).checkup()
    found = [(f.kind, f.severity, f.message, f.tokens, f.seq, f.content[:60]) for f in ref.findings]
    return ref.total_tokens, sorted(found, key=repr)


def check(trace: Trace, path: Path) -> list[tuple[Any, ...]]:
    """Save, assert we agree with loom-harness, return the findings."""
    trace.save(path)
    ours = harness_view(path)
    assert ours == oracle_view(path)
    return ours[1]


# -- oversized ---------------------------------------------------------------


@pytest.mark.parametrize(
    "tool_chars, filler_chars, flagged",
    [
        (800, 2400, True),  # 200 tokens, exactly 25% of 800
        (796, 2400, False),  # 199 tokens
        (800, 2404, False),  # 200 tokens, 200/801 < 25%
        (4000, 0, True),  # alone in the context
    ],
)
def test_oversized_edges(tmp_path: Path, tool_chars: int, filler_chars: int, flagged: bool) -> None:
    t = Trace("y" * filler_chars if filler_chars else "go")
    t.effect("tool:fetch", "w" * tool_chars)
    found = check(t, tmp_path / "t.loom.json")
    kinds = [f[0] for f in found]
    assert (OVERSIZED in kinds) is flagged
    if flagged and filler_chars:
        assert found[0][2] == "tool:fetch result is 200 tokens (25% of context)"


def test_oversized_percentage_is_floored(tmp_path: Path) -> None:
    """203 of 350 tokens is 58.0%, 250 of 363 is 68.87% -> printed 68%."""
    t = Trace("y" * (113 * 4))
    t.effect("tool:fetch", "w" * 1000)
    (found,) = check(t, tmp_path / "t.loom.json")
    assert found[2] == "tool:fetch result is 250 tokens (68% of context)"


def test_only_tool_results_are_oversized(tmp_path: Path) -> None:
    t = Trace("x")
    t.model("w" * 4000)
    t.effect("human", "h" * 4000)
    assert check(t, tmp_path / "t.loom.json") == []


# -- unused ------------------------------------------------------------------


@pytest.mark.parametrize(
    "result, answer, flagged",
    [
        ("alpha bravo charlie", "", True),  # three words, never mentioned
        ("alpha bravo ab xyz 1234", "", False),  # two words of 5+ chars
        ("alpha bravo alpha bravo", "", False),  # two distinct words
        ("alpha bravo charlie", "I used CHARLIE.", False),  # case-insensitive mention
        ("alpha bravo charlie", "alphabet soup", True),  # whole words only
        ("alpha bravo charlie", "alpha_beta", False),  # '_' separates words
        ("\u212aappa bravo charlie", "", False),  # a Kelvin sign is no 'k'
    ],
)
def test_unused_edges(tmp_path: Path, result: str, answer: str, flagged: bool) -> None:
    t = Trace("x")
    t.effect("tool:lookup", result)
    t.model(answer)
    found = check(t, tmp_path / "t.loom.json")
    assert ([f[0] for f in found] == [UNUSED]) is flagged


def test_unused_needs_a_later_answer(tmp_path: Path) -> None:
    t = Trace("x")
    t.model("alpha was mentioned before")
    seq = t.effect("tool:lookup", "alpha bravo charlie")
    (found,) = check(t, tmp_path / "t.loom.json")
    assert found[:5] == (
        UNUSED,
        "warn",
        "tool:lookup result (4 tokens) never referenced by any later answer",
        4,
        seq,
    )


def test_unused_counts_json_results_and_sub_agent_answers(tmp_path: Path) -> None:
    t = Trace("x")
    t.effect("tool:stats", {"alpha": 1, "bravo": 2, "charlie": 3}, depth=1)
    t.effect("tool:stats", {"delta": 1, "echoes": 2, "foxtrot": 3}, depth=1)
    t.model("the delta is fine", depth=1)
    found = check(t, tmp_path / "t.loom.json")
    assert [f[4] for f in found] == [0]


# -- duplicate ---------------------------------------------------------------


def _words(n: int, start: int = 0) -> str:
    return " ".join(WORDS[start : start + n])


@pytest.mark.parametrize(
    "first, second, flagged",
    [
        (_words(9), _words(10), True),  # 9/10: exactly the threshold
        (_words(8), _words(9), False),  # 8/9 < 0.9
        (_words(18), _words(20), True),  # 18/20
        (_words(4), _words(4), False),  # fewer than 5 words
        (_words(5), _words(5).upper(), True),  # lower-cased
    ],
)
def test_duplicate_edges(tmp_path: Path, first: str, second: str, flagged: bool) -> None:
    t = Trace("x")
    t.effect("tool:a", first)
    t.model(first + " " + second)  # mentions everything: no unused findings
    t.effect("tool:b", second)
    t.model(second)
    found = check(t, tmp_path / "t.loom.json")
    assert ([f[0] for f in found] == [DUPLICATE]) is flagged
    if flagged:
        assert found[0][2] == "tool:b content nearly identical to earlier tool:a"


def test_duplicate_names_the_earliest_match_and_episodes_come_first(tmp_path: Path) -> None:
    """Episodes are items before every effect: a tool result repeating the second
    episode is a duplicate of that *earlier* user item, whatever the timing."""
    text = _words(10)
    t = Trace("hello", text)
    t.effect("tool:a", text + " " + WORDS[50])
    t.effect("human", text)
    t.model(text)
    found = check(t, tmp_path / "t.loom.json")
    assert [f[2] for f in found] == [
        "human content nearly identical to earlier user",
        "tool:a content nearly identical to earlier user",
    ]
    report = checkup_path(tmp_path / "t.loom.json")
    assert [f.step for f in report.findings] == [0, 1]  # sorted by step


def test_a_duplicate_says_where_the_earlier_item_is(tmp_path: Path) -> None:
    """loom doctor's message names the earlier item's kind only; ours adds its step, and the
    CLI says it on the snippet line (loom doctor's lines stay as they are)."""
    text = _words(10)
    t = Trace("hello")
    t.effect("tool:a", text)
    t.model("noted")
    t.effect("tool:b", text)
    t.model(text)
    t.save(tmp_path / "u.loom.json")
    (dup,) = checkup_path(tmp_path / "u.loom.json").of_kind(DUPLICATE)
    assert dup.text == "tool:b content nearly identical to earlier tool:a at step 0"
    assert dup.message == "tool:b content nearly identical to earlier tool:a"  # loom's words
    printed = core("doctor", tmp_path / "u.loom.json").stdout
    assert f"{dup.quoted_snippet()} at step 2; the earlier one at step 0" in printed


def test_an_episode_duplicate_has_no_effect(tmp_path: Path) -> None:
    text = _words(6)
    t = Trace(text, text)
    t.model("fine")
    found = check(t, tmp_path / "t.loom.json")
    assert found == [
        (DUPLICATE, "warn", "user content nearly identical to earlier user", 10, None, text[:60])
    ]
    (f,) = checkup_path(tmp_path / "t.loom.json").findings
    assert f.effect is None and f.episode == 1 and f.redact_prefix == text[:48]


# -- random sweep against the oracle -------------------------------------------


def _random_trace(rng: random.Random, proxy: bool) -> Trace:
    vocab = [
        "alpha",
        "Bravo",
        "CHARLIE",
        "ab",
        "xyz",
        "alphabet",
        "ü✓",
        "\u212aappa",
        "12345",
        *WORDS[: rng.choice([8, 30, 200])],
    ]

    def text(n: int) -> str:
        return " ".join(rng.choice(vocab) for _ in range(n))

    t = Trace(*[text(rng.randint(0, 12)) for _ in range(rng.randint(1, 3))], proxy=proxy)
    base = [text(rng.randint(3, 60)) for _ in range(3)]
    for _ in range(rng.randint(0, 30)):
        r = rng.random()
        depth = 0 if proxy else rng.choice([0, 0, 1])
        if r < 0.3:
            t.model(text(rng.randint(0, 6)), depth=depth)
        elif r < 0.8:
            q = rng.random()
            value: Any = (
                rng.choice(base)
                if q < 0.4
                else text(rng.randint(0, 500))
                if q < 0.5
                else {"k": text(6)}
                if q < 0.6
                else text(rng.randint(0, 20))
            )
            t.effect("tool:" + rng.choice("ab"), value, depth)
        else:
            t.effect(
                rng.choice(["human", "time", "memory", "sample"]),
                rng.choice(base) if rng.random() < 0.5 else text(6),
                depth,
            )
    return t


@pytest.mark.parametrize("seed", range(4))
def test_random_traces_agree_with_loom_harness(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    kinds: set[str] = set()
    for n in range(60):
        found = check(_random_trace(rng, proxy=n % 3 == 0), tmp_path / f"r{n}.loom.json")
        kinds.update(f[0] for f in found)
    assert kinds == set(HARNESS_KINDS)  # the sweep exercised every kind
