"""The step alignment: exact on small differences, greedy but sane on big ones."""

from __future__ import annotations

import random

import pytest

from loom_core.diff import align as align_mod
from loom_core.diff.align import align, intern_tokens

M, R, S, G = 0, 1, 2, 3  # model, tool:read, tool:search, tool:grep


def _valid(pairs: list, na: int, nb: int) -> None:
    """Every index of each side exactly once, in increasing order."""
    assert [i for i, _ in pairs if i is not None] == list(range(na))
    assert [j for _, j in pairs if j is not None] == list(range(nb))


def test_intern_shares_ids() -> None:
    ta, tb = intern_tokens([("model", 0), ("tool:x", 0)], [("tool:x", 0), ("tool:y", 1)])
    assert ta == [0, 1] and tb == [1, 2]


def test_identical_is_positional() -> None:
    assert align([M, R, M], [M, R, M]) == [(0, 0), (1, 1), (2, 2)]


def test_prefix_is_positional_then_tails() -> None:
    assert align([M, R], [M, R, M, S]) == [(0, 0), (1, 1), (None, 2), (None, 3)]
    assert align([M, R, M], [M]) == [(0, 0), (1, None), (2, None)]
    assert align([], [M]) == [(None, 0)]


def test_substitution_pairs() -> None:
    assert align([M, R, M], [M, G, M]) == [(0, 0), (1, 1), (2, 2)]


@pytest.mark.parametrize("exact", [True, False])
def test_insertion_in_a_long_run_shifts_the_rest(
    exact: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both the exact and the greedy path find a single inserted step."""
    if not exact:
        monkeypatch.setattr(align_mod, "EXACT_CELLS", 0)
    rng = random.Random(3)
    a = [t for _ in range(300) for t in (M, rng.choice((R, S, G)))]
    b = a[:101] + [S] + a[101:]
    pairs = align(a, b)
    _valid(pairs, len(a), len(b))
    only = [p for p in pairs if None in p]
    assert only == [(None, 101)]
    assert all(a[i] == b[j] for i, j in pairs if i is not None and j is not None)


@pytest.mark.parametrize("exact", [True, False])
def test_several_edits_resync(exact: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not exact:
        monkeypatch.setattr(align_mod, "EXACT_CELLS", 0)
    rng = random.Random(5)
    a = [t for _ in range(400) for t in (M, rng.choice((R, S)), rng.choice((R, S, G)))]
    b = list(a)
    del b[600:603]
    b[300] = G if b[300] != G else R
    b[100:100] = [M, G]
    pairs = align(a, b)
    _valid(pairs, len(a), len(b))
    unmatched = [p for p in pairs if None in p or a[p[0]] != b[p[1]]]
    assert len(unmatched) <= 6  # 2 inserted, 3 dropped, 1 substituted


def test_unrelated_runs_stay_valid_and_bounded() -> None:
    """Big, unrelated token lists: every index once (the greedy path, no quadratic work)."""
    rng = random.Random(11)
    a = [rng.randrange(6) for _ in range(100_000)]
    b = [rng.randrange(6) for _ in range(90_000)]
    pairs = align(a, b)
    _valid(pairs, len(a), len(b))


@pytest.mark.parametrize("sub", [1, 2])
def test_random_small_cases_are_minimal_edits(sub: int) -> None:
    """Exact path: minimal edit distance (sub=1) or a longest common subsequence (sub=2)."""
    rng = random.Random(2)
    for _ in range(200):
        a = [rng.randrange(3) for _ in range(rng.randrange(12))]
        b = [rng.randrange(3) for _ in range(rng.randrange(12))]
        pairs = align(a, b, substitution=sub)
        _valid(pairs, len(a), len(b))
        indels = sum(1 for i, j in pairs if i is None or j is None)
        subs = sum(1 for i, j in pairs if i is not None and j is not None and a[i] != b[j])
        assert indels + sub * subs == _edit_distance(a, b, sub)


def _edit_distance(a: list[int], b: list[int], sub: int) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            row.append(min(prev[j - 1] + (sub if x != y else 0), prev[j] + 1, row[j - 1] + 1))
        prev = row
    return prev[-1]
