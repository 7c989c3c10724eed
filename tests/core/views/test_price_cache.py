"""The price rates kept on disk: a later process prices a model seen before without
importing ``genai_prices``, and every price is exactly what the database gives."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loom_core.views import price_cache, pricing
from loom_core.views.pricing import TokenUsage, call_cost

# usages that take each path of the arithmetic: plain, cache and reasoning parts, a tier
USAGES = (
    TokenUsage(1_000, 200),
    TokenUsage(12_000, 900, cache_read=5_000, cache_write=2_000, cache_write_1h=500),
    TokenUsage(3_000, 4_000, reasoning=2_500),
    TokenUsage(300_000, 1_000, cache_read=100_000),
)
MODELS = (
    "claude-sonnet-4-5",
    "claude-3-5-haiku-latest",
    "anthropic/claude-opus-4-1",
    "gpt-4o",
    "gpt-4o-mini",
    "o3-mini",
    "gemini-2.5-pro",
    "a-model-nobody-sells",
)
OFF_PEAK = "deepseek-chat"  # priced by the time of day in the snapshot


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    pricing.rates_of.cache_clear()
    price_cache.forget()
    yield
    pricing.rates_of.cache_clear()
    price_cache.forget()


def _costs(models: tuple[str, ...]) -> list[float | None]:
    return [call_cost(m, u) for m in models for u in USAGES]


def _again() -> None:
    """As a new process would start: nothing remembered in memory."""
    pricing.rates_of.cache_clear()
    price_cache.forget()


def test_kept_rates_price_exactly_as_the_database(price_cache_file: Path) -> None:
    fresh_rates = [pricing.rates_of(m) for m in MODELS]
    fresh_costs = _costs(MODELS)
    assert price_cache_file.is_file()
    _again()
    assert [pricing.rates_of(m) for m in MODELS] == fresh_rates  # every rate and its source
    assert _costs(MODELS) == fresh_costs  # to the last bit
    assert fresh_rates[-1] is None and fresh_costs[-1] is None  # unpriced stays unknown


def test_every_snapshot_model_of_the_big_providers_round_trips() -> None:
    from genai_prices.data_snapshot import get_snapshot

    names = [
        m.id
        for p in get_snapshot().providers
        if p.id in ("anthropic", "openai", "google")
        for m in p.models
    ]
    fresh = {m: (pricing.rates_of(m), [call_cost(m, u) for u in USAGES]) for m in names}
    _again()
    kept = {m: (pricing.rates_of(m), [call_cost(m, u) for u in USAGES]) for m in names}
    assert kept == fresh


_SECOND = """
import json, sys
from loom_core.views.pricing import TokenUsage, call_cost, rates_of
usages = [TokenUsage(*u) for u in json.loads(sys.argv[1])]
models = json.loads(sys.argv[2])
costs = [call_cost(m, u) for m in models for u in usages]
sources = [getattr(rates_of(m), "source", None) for m in models]
print(json.dumps({"costs": costs, "sources": sources, "imported": "genai_prices" in sys.modules}))
"""


def _process(models: tuple[str, ...]) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _SECOND, json.dumps(USAGES), json.dumps(models)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_a_later_process_needs_no_genai_prices_import() -> None:
    first = _process(MODELS)
    second = _process(MODELS)
    assert first["imported"] is True
    assert second["imported"] is False  # the first screen's Cost column without the import
    assert second["costs"] == first["costs"] and second["sources"] == first["sources"]


def test_time_of_day_prices_are_never_kept(price_cache_file: Path) -> None:
    pricing.rates_of(OFF_PEAK)
    pricing.rates_of("gpt-4o")
    models = json.loads(price_cache_file.read_text())["models"]
    assert OFF_PEAK not in models and "gpt-4o" in models
    assert _process((OFF_PEAK,))["imported"] is True


def test_another_release_or_a_broken_file_is_ignored(price_cache_file: Path) -> None:
    wrong = {"rates": {"input": [1.0, []], "output": [1.0, []], "per_request": 0, "source": "x"}}
    for text in (
        json.dumps({"format": 1, "genai_prices": "0.0.0-old", "models": {"gpt-4o": wrong}}),
        "{not json",
        json.dumps({"format": 1, "genai_prices": pricing._VERSION, "models": []}),
    ):
        price_cache_file.write_text(text)
        _again()
        rates = pricing.rates_of("gpt-4o")
        assert rates is not None and rates.source.startswith("genai-prices")
        kept = json.loads(price_cache_file.read_text())
        assert kept["genai_prices"] == pricing._VERSION  # rewritten for this release


def test_a_dated_price_is_kept_for_its_day_only(price_cache_file: Path) -> None:
    pricing.rates_of("gpt-4o")
    data = json.loads(price_cache_file.read_text())
    data["models"]["gpt-4o"]["day"] = "2001-01-01"  # kept on another day
    data["models"]["gpt-4o"]["rates"]["source"] = "stale"
    price_cache_file.write_text(json.dumps(data))
    _again()
    rates = pricing.rates_of("gpt-4o")
    assert rates is not None and rates.source != "stale"


def test_the_release_is_read_from_the_installed_metadata_as_importlib_reads_it() -> None:
    from importlib.metadata import version

    assert price_cache.release() == version("genai-prices")
    assert price_cache.release("msgspec") == version("msgspec")


def test_a_package_with_no_metadata_beside_it_is_asked_of_importlib(tmp_path: Path) -> None:
    (tmp_path / "lonely_pkg").mkdir()
    (tmp_path / "lonely_pkg" / "__init__.py").write_text("")
    sys.path.insert(0, str(tmp_path))
    try:
        from importlib.metadata import PackageNotFoundError

        with pytest.raises(PackageNotFoundError):
            price_cache.release("lonely_pkg")
    finally:
        sys.path.remove(str(tmp_path))
