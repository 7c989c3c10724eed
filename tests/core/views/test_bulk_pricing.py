"""Bulk pricing gives every step the number pricing it alone gives.

The timeline prices a run's model calls in bulk (:func:`loom_core.views.columns.prices`), reading
the tokens the context index decoded once; anything but plain counts on a priced
model goes the full way. Whatever a hand-edited usage holds, both must agree.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom_core.formats.loader import load
from loom_core.views.run_cost import RunPricer
from loom_core.views.timeline import K_MODEL, build_timeline
from tests.core.diff.tracegen import model, write

COUNTS = st.one_of(
    st.integers(-5, 3_000_000),
    st.floats(-10, 1e13, allow_nan=False, allow_infinity=False),
    st.none(),
    st.just("12"),
    st.just(10**15),
)
USAGES = st.one_of(
    st.fixed_dictionaries({"input_tokens": COUNTS, "output_tokens": COUNTS}),
    st.fixed_dictionaries(
        {"input_tokens": COUNTS, "output_tokens": COUNTS},
        optional={
            "cache_creation_input_tokens": COUNTS,
            "cache_read_input_tokens": COUNTS,
            "output_tokens_details": st.fixed_dictionaries({"reasoning_tokens": COUNTS}),
            "server_tool_use": st.just({"web_search_requests": 1}),
        },
    ),
    st.fixed_dictionaries(
        {"prompt_tokens": COUNTS, "completion_tokens": COUNTS},
        optional={"prompt_tokens_details": st.just({"cached_tokens": 7})},
    ),
    st.just({}),
    st.none(),
    st.just([1, 2]),
)
# tiered (sonnet 4.5 above 200k input), flat, unpriced, offline, and the trace's default
MODELS = st.sampled_from(["claude-sonnet-4-5", "gpt-4o", "no-such-model", "scripted", None])


def _effect(usage: Any, model_name: str | None, n: int) -> dict[str, Any]:
    effect = model("hi", n=n)
    effect["result"]["usage"] = usage
    if model_name is not None:
        effect["meta"]["model"] = model_name
    return effect


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(USAGES, MODELS), min_size=1, max_size=8))
def test_bulk_costs_are_the_costs_of_each_call(calls: list[tuple[Any, str | None]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = write(
            Path(tmp) / "run.loom.json",
            [_effect(usage, name, n) for n, (usage, name) in enumerate(calls)],
        )
        doc = load(path)
    tl = build_timeline(doc)
    alone = RunPricer(doc)
    for step in range(len(tl)):
        if tl.kind[step] != K_MODEL:
            continue
        expected = alone.cost(tl.effect_of[step])
        got = tl.cost[step]
        assert (math.isnan(got) and expected is None) or got == expected, (step, calls)
    assert tl.cost_known == all(alone.cost(e) is not None for e in range(len(doc)))


def test_a_tiered_model_is_priced_by_the_tier_of_its_input(tmp_path: Path) -> None:
    path = write(
        tmp_path / "run.loom.json",
        [_effect({"input_tokens": t, "output_tokens": 10}, None, t) for t in (1000, 300_000)],
    )
    doc = load(path)
    tl = build_timeline(doc)
    costs = [tl.cost[s] for s in range(len(tl)) if tl.kind[s] == K_MODEL]
    assert costs == [RunPricer(doc).cost(e) for e in range(len(doc))]
    assert costs[1] / 300_000 > costs[0] / 1000  # the long-context tier costs more per token


def test_plain_calls_are_priced_without_decoding_their_results_again(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The context index decoded each result once; the pricer must not do it again
    (a million-step run spent seconds on the second decode)."""
    import loom_core.views.run_cost as run_cost

    path = write(tmp_path / "run.loom.json", [model("hi", n=n) for n in range(20)])
    doc = load(path)
    decoded: list[object] = []

    class Counting:
        def decode(self, raw: object) -> Any:
            decoded.append(raw)
            raise AssertionError("decoded again")

    monkeypatch.setattr(run_cost, "_usage_decoder", Counting())
    tl = build_timeline(doc)
    assert decoded == [] and tl.cost_known and tl.total_cost
