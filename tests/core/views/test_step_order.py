"""Episodes interleaved into a range of effects (the timeline's step order), built with
numpy: the same steps as placing them one by one, for any placement, including episodes
after the last effect of a final log and before an effect outside the range."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from loom_core.views.timeline import _step_order


def _one_by_one(
    start: int, end: int, episode_before: dict[int, list[int]], final: bool
) -> tuple[list[int], list[int]]:
    effect_of: list[int] = []
    episode_of: list[int] = []
    for at in range(start, end + 1):
        if at in episode_before and (at < end or final):
            effect_of += [-1] * len(episode_before[at])
            episode_of += episode_before[at]
        if at < end:
            effect_of.append(at)
            episode_of.append(-1)
    return effect_of, episode_of


@given(
    st.integers(0, 30),
    st.integers(0, 40),
    st.dictionaries(st.integers(0, 80), st.lists(st.integers(0, 9), min_size=1, max_size=3)),
    st.booleans(),
)
def test_the_steps_are_those_placed_one_by_one(
    start: int, length: int, episode_before: dict[int, list[int]], final: bool
) -> None:
    effects, episodes = _step_order(start, start + length, episode_before, final)
    want = _one_by_one(start, start + length, episode_before, final)
    assert (effects.tolist(), episodes.tolist()) == want
