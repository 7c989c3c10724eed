"""Prices: genai-prices' bundled data, cache/reasoning rates, offline models, the override file.

The expected dollars are worked out by hand from the rates in the genai-prices
snapshot (asserted first, so a package update that changes a price says so here),
and our fast arithmetic is checked against ``genai_prices.calc_price`` itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom_core.demo.agent import MODEL as DEMO_MODEL
from loom_core.views import price_file, pricing
from loom_core.views.pricing import TokenUsage, call_cost
from loom_core.views.run_cost import token_usage

SONNET = "claude-sonnet-4-5"


@pytest.fixture(autouse=True)
def fresh_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test reads the environment afresh (the tables are cached per process)."""
    monkeypatch.delenv(price_file.OVERRIDE_ENV, raising=False)
    price_file.load_overrides.cache_clear()
    pricing.rates_of.cache_clear()
    yield
    price_file.load_overrides.cache_clear()
    pricing.rates_of.cache_clear()


def _db_price(model: str) -> object:
    from genai_prices.data_snapshot import get_snapshot

    return get_snapshot().find_provider_model(model, None, None, None)[1].prices


def test_the_rates_we_expect_are_the_databases() -> None:
    sonnet = _db_price(SONNET)
    assert (
        sonnet.input_mtok.base,
        sonnet.output_mtok.base,
        sonnet.cache_read_mtok.base,
        sonnet.cache_write_mtok.base,
    ) == (3, 15, Decimal("0.3"), Decimal("3.75"))
    assert sonnet.input_mtok.tiers[0].start == 200_000 and sonnet.input_mtok.tiers[0].price == 6
    gpt = _db_price("gpt-4o")
    assert (gpt.input_mtok, gpt.output_mtok, gpt.cache_read_mtok) == (
        Decimal("2.5"),
        10,
        Decimal("1.25"),
    )


def test_anthropic_cache_writes_and_reads_have_their_own_rates() -> None:
    usage = token_usage(
        {
            "input_tokens": 1000,
            "output_tokens": 200,
            "cache_creation_input_tokens": 2000,
            "cache_read_input_tokens": 10000,
        }
    )
    assert usage == TokenUsage(13000, 200, cache_read=10000, cache_write=2000)
    # 1000 x $3 + 2000 x $3.75 + 10000 x $0.30 + 200 x $15, per million
    assert call_cost(SONNET, usage) == pytest.approx(0.0165, rel=1e-12)
    # a dated id and a provider prefix find the same row
    assert call_cost("claude-sonnet-4-5-20250929", usage) == pytest.approx(0.0165, rel=1e-12)
    assert call_cost("anthropic/claude-sonnet-4-5", usage) == pytest.approx(0.0165, rel=1e-12)


def test_the_long_context_tier_applies_to_every_token() -> None:
    usage = TokenUsage(250_000, 1000)
    assert call_cost(SONNET, usage) == pytest.approx((250_000 * 6 + 1000 * 22.5) / 1e6)


def test_openai_cached_and_reasoning_tokens() -> None:
    chat = token_usage(
        {
            "prompt_tokens": 5000,
            "completion_tokens": 300,
            "prompt_tokens_details": {"cached_tokens": 4000},
            "completion_tokens_details": {"reasoning_tokens": 100},
        }
    )
    responses = token_usage(
        {
            "input_tokens": 5000,
            "output_tokens": 300,
            "input_tokens_details": {"cached_tokens": 4000},
            "output_tokens_details": {"reasoning_tokens": 100},
        }
    )
    assert chat == responses == TokenUsage(5000, 300, cache_read=4000, reasoning=100)
    # 1000 x $2.50 + 4000 x $1.25 + 300 x $10 (gpt-4o bills reasoning as output)
    assert call_cost("gpt-4o", chat) == pytest.approx(0.0105, rel=1e-12)
    # a model with its own reasoning rate: 200 x $8 + 100 x $3 output, 1000 x $2 input
    deep = TokenUsage(1000, 300, reasoning=100)
    assert call_cost("perplexity/sonar-deep-research", deep) == pytest.approx(0.0039, rel=1e-12)


@pytest.mark.parametrize(
    "usage",
    [
        None,
        5,
        "x",
        [],
        {"input_tokens": "many"},
        {"prompt_tokens_details": 3, "prompt_tokens": 9},
        {"input_tokens": 5, "cache_read_input_tokens": -4},
        {"input_tokens": 1e400, "output_tokens": True},
    ],
)
def test_any_json_reads_as_some_usage(usage: object) -> None:
    got = token_usage(usage)
    assert got.cache_read + got.cache_write <= got.input and got.reasoning <= got.output
    assert call_cost(SONNET, got) is not None


MODELS = [
    SONNET,
    "claude-haiku-4-5",
    "claude-3-5-haiku",
    "gpt-4o",
    "gpt-5",
    "o3",
    "perplexity/sonar",
    "perplexity/sonar-deep-research",
    "gemini-2.5-pro",
]


@settings(max_examples=150, deadline=None)
@given(
    model=st.sampled_from(MODELS),
    inp=st.integers(0, 400_000),
    out=st.integers(0, 50_000),
    shares=st.tuples(*[st.floats(0, 1)] * 4),
)
def test_fast_arithmetic_matches_genai_prices(
    model: str, inp: int, out: int, shares: tuple[float, ...]
) -> None:
    from genai_prices import Usage, calc_price

    read = int(inp * shares[0])
    write = int((inp - read) * shares[1])
    usage = TokenUsage(inp, out, read, write, int(write * shares[2]), int(out * shares[3]))
    provider, _, name = model.rpartition("/")
    expected = calc_price(
        Usage(
            input_tokens=inp,
            output_tokens=out,
            cache_read_tokens=read,
            cache_write_tokens=write,
            cache_write_1h_tokens=usage.cache_write_1h,
            output_reasoning_tokens=usage.reasoning,
        ),
        name,
        provider_id=provider or None,
        genai_request_timestamp=pricing._PRICED_AT,
    ).total_price
    assert call_cost(model, usage) == pytest.approx(float(expected), rel=1e-9, abs=1e-15)


def test_offline_models_cost_nothing_and_unknown_ones_are_unknown() -> None:
    many = TokenUsage(50_000, 5_000)
    assert DEMO_MODEL in pricing.OFFLINE_MODELS  # the demo's fake model is offline
    assert call_cost("scripted", many) == 0.0 and call_cost(DEMO_MODEL, many) == 0.0
    assert pricing.is_offline("scripted") and not pricing.is_offline(SONNET)
    assert call_cost("my-local-llama", many) is None and call_cost("", many) is None
    assert call_cost("my-local-llama", TokenUsage()) == 0.0  # nothing spent


def _override(monkeypatch: pytest.MonkeyPatch, path: Path, text: str) -> None:
    path.write_text(text)
    monkeypatch.setenv(price_file.OVERRIDE_ENV, str(path))


def test_override_file_prices_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _override(
        monkeypatch,
        tmp_path / "p.json",
        json.dumps(
            {"my-local-llama": [1.0, 2.0], SONNET: {"input": 10, "output": 20, "cache_read": 1}}
        ),
    )
    assert call_cost("my-local-llama-latest", TokenUsage(1000, 100)) == pytest.approx(0.0012)
    # cache reads at the override's rate; cache writes (no rate given) as plain input
    usage = TokenUsage(3000, 100, cache_read=1000, cache_write=1000)
    assert call_cost(SONNET, usage) == pytest.approx((2000 * 10 + 1000 * 1 + 100 * 20) / 1e6)
    assert "overrides from" in pricing.provenance() and str(tmp_path) in pricing.provenance()


@pytest.mark.parametrize(
    "text, cause",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"m": [1]}', "'m' must be [input, output]"),
        ('{"m": [1, "two"]}', "'m' output must be a non-negative number"),
        ('{"m": {"input": 1, "output": 2, "cache": 3}}', "unknown rate 'cache'"),
        ('{"m": [-1, 2]}', "'m' input must be a non-negative number"),
    ],
)
def test_a_malformed_override_file_is_a_named_problem(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str, cause: str
) -> None:
    _override(monkeypatch, tmp_path / "prices.json", text)
    problem = price_file.load_overrides().problem
    assert problem is not None and problem.path == str(tmp_path / "prices.json")
    assert cause in problem.cause
    with pytest.raises(type(problem)):
        price_file.check_overrides()
    # the database still prices; the provenance says the file was ignored
    assert call_cost(SONNET, TokenUsage(1000, 0)) == pytest.approx(0.003)
    assert "override file ignored" in pricing.provenance()


def test_a_missing_override_file_is_a_problem_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(price_file.OVERRIDE_ENV, str(tmp_path / "nope.json"))
    problem = price_file.load_overrides().problem
    assert problem is not None and "cannot read" in problem.cause


def test_no_network_is_ever_touched(tmp_path: Path) -> None:
    """Pricing in a process where opening any socket fails, from the bundled snapshot."""
    script = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise AssertionError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.socket.connect_ex = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from loom_core.views.pricing import call_cost, TokenUsage, provenance\n"
        "from genai_prices import data_snapshot\n"
        "assert call_cost('gpt-4o', TokenUsage(1000, 10)) > 0\n"
        "assert data_snapshot._custom_snapshot is None\n"
        "print(provenance())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    env.pop(price_file.OVERRIDE_ENV, None)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "bundled snapshot, offline" in done.stdout


def test_the_cli_stops_on_a_malformed_override(tmp_path: Path) -> None:
    from loom_core.demo.sample import write_sample

    bad = tmp_path / "prices.json"
    bad.write_text("{oops")
    sample = tmp_path / "sample.loom.json"
    write_sample(sample)
    env = {
        **os.environ,
        price_file.OVERRIDE_ENV: str(bad),
        "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
    }
    for argv in (
        ["summary", str(sample)],
        ["summary", str(sample), "--json"],
        ["steps", str(sample)],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "loom_core", *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 2 and done.stdout == ""
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and str(bad) in lines[0] and "not valid JSON" in lines[0]
    ok = subprocess.run(
        [sys.executable, "-m", "loom_core", "checksum", str(sample)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ok.returncode == 0  # commands that show no money do not care


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**15), 10**15)
    | st.floats(allow_nan=True)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "input_tokens",
                    "output_tokens",
                    "prompt_tokens",
                    "completion_tokens",
                    "cache_creation_input_tokens",
                    "cache_read_input_tokens",
                    "cache_creation",
                    "ephemeral_1h_input_tokens",
                    "cached_tokens",
                    "reasoning_tokens",
                    "prompt_tokens_details",
                    "input_tokens_details",
                    "completion_tokens_details",
                    "output_tokens_details",
                    "x",
                ]
            ),
            inner,
            max_size=6,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(usage=_JSON, model=st.sampled_from([SONNET, "gpt-4o", "scripted", "nope", ""]))
def test_any_usage_value_prices_without_a_traceback(usage: object, model: str) -> None:
    got = token_usage(usage)
    assert all(isinstance(v, int) and v >= 0 for v in got)
    assert got.cache_read + got.cache_write <= got.input and got.reasoning <= got.output
    cost = call_cost(model, got)
    assert cost is None or (cost >= 0 and cost == cost)
