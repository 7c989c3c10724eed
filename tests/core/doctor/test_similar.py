"""The fast duplicate search returns exactly what the pairwise definition does.

Why: loom-harness compares every item with every earlier one; ours skips most
pairs (partition fingerprints, identical-set hashing), which is only allowed if
no answer changes. A seeded sweep compares against the plain quadratic
definition, and a work count (not a timing) shows the pairs really are skipped.
"""

from __future__ import annotations

import random

import pytest

from loom_core.doctor import similar as sim
from loom_core.doctor.similar import earliest_matches


def pairwise(sets: list[frozenset[str] | None]) -> list[int | None]:
    """The harness's definition: earliest earlier set with Jaccard >= 0.9, 5+ words."""
    out: list[int | None] = []
    for k, s in enumerate(sets):
        match = None
        if s is not None and len(s) >= 5:
            for j in range(k):
                o = sets[j]
                if o is not None and o | s and len(s & o) / len(s | o) >= 0.9:
                    match = j
                    break
        out.append(match)
    return out


def _mutated(rng: random.Random, base: frozenset[str], vocab: list[str]) -> frozenset[str]:
    s = set(base)
    for _ in range(rng.randint(0, 4)):
        if rng.random() < 0.5 and s:
            s.discard(rng.choice(sorted(s)))
        else:
            s.add(rng.choice(vocab))
    return frozenset(s)


@pytest.mark.parametrize("seed", range(6))
def test_same_answers_as_the_pairwise_definition(seed: int) -> None:
    rng = random.Random(seed)
    matched = 0
    for _ in range(150):
        vocab = [f"w{i:04d}" for i in range(rng.randint(6, 120))]
        bases = [
            frozenset(rng.sample(vocab, rng.randint(1, min(len(vocab), 90)))) for _ in range(4)
        ]
        sets: list[frozenset[str] | None] = [
            None if rng.random() < 0.1 else _mutated(rng, rng.choice(bases), vocab)
            for _ in range(rng.randint(1, 50))
        ]
        expected = pairwise(sets)
        assert earliest_matches(sets) == expected
        matched += sum(m is not None for m in expected)
    assert matched > 100  # the sweep is not trivially empty


def test_distinct_sets_of_a_common_vocabulary_are_not_compared_pairwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """2,000 different 30-word sets drawn from 200 common words: pairwise would make
    about two million comparisons; the fingerprints leave a handful."""
    calls = 0
    real = sim.similar

    def counting(a: frozenset[str], b: frozenset[str]) -> bool:
        nonlocal calls
        calls += 1
        return real(a, b)

    monkeypatch.setattr(sim, "similar", counting)
    rng = random.Random(7)
    vocab = [f"common{i}" for i in range(200)]
    sets: list[frozenset[str] | None] = [frozenset(rng.sample(vocab, 30)) for _ in range(2000)]
    sets += sets[:50]  # and exact repeats, found by hashing
    found = earliest_matches(sets)
    assert found[2000:] == list(range(50))
    assert calls < 2000


def test_threshold_is_exactly_nine_tenths() -> None:
    ten = frozenset(f"w{i:02d}" for i in range(10))
    assert sim.similar(ten - {"w09"}, ten)  # 9/10
    assert not sim.similar(ten - {"w09", "w08"}, ten - {"w00"})  # 7/9
