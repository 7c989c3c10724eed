"""USD of one model call, from the ``genai-prices`` database (bundled, offline).

Why a maintained database: a hand-kept table went stale and knew only input and
output rates, while cache writes, cache reads and reasoning tokens are billed at
their own rates. ``genai-prices`` ships a dated snapshot of the providers' price
lists inside the package; we only ever read that snapshot (its ``UpdatePrices``
downloader is never started), so nothing here touches the network.

Why our own arithmetic on its rates: ``genai_prices.calc_price`` costs ~0.2 ms
(Decimal arithmetic, unit decomposition); a 100,000-step timeline would take
seconds. The rates of a model are looked up once and applied with the same rules
(:func:`_leaves`: a priced cache/reasoning count is taken out of its parent
count; the tier is chosen by the total input); a property test checks the result
against ``calc_price`` itself. Models whose price uses units we do not read fall
back to ``calc_price``.

A model that is neither in the database nor in the user's override file
(``$LOOM_DESKTOP_PRICES``, :mod:`.price_file`) is *unpriced*: its cost is unknown
(``None``), never silently zero. The offline providers (the scripted provider and
the demo's fake model) cost nothing and say so (:func:`is_offline`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import Any, NamedTuple

from loom_core.views import price_cache
from loom_core.views.price_file import TokenRates, load_overrides, normalise

__all__ = [
    "TokenUsage",
    "Rates",
    "call_cost",
    "rates_of",
    "rate_at",
    "is_offline",
    "provenance",
    "OFFLINE_MODELS",
    "normalise",
]

# Models that answer offline: the scripted provider, and the demo's fake Anthropic
# server (loom_core.demo.agent.MODEL; a test keeps the two in step).
OFFLINE_MODELS = frozenset({"scripted", "claude-demo-1"})

_PER_M = 1e6
# usage unit -> the unit it is a part of (genai-prices' decomposition)
_PARENT = {
    "cache_read": "input",
    "cache_write": "input",
    "cache_write_1h": "cache_write",
    "reasoning": "output",
}
_PRICE_KEYS = {
    "input": "input_mtok",
    "output": "output_mtok",
    "cache_read": "cache_read_mtok",
    "cache_write": "cache_write_mtok",
    "cache_write_1h": "cache_write_1h_mtok",
    "reasoning": "output_reasoning_mtok",
}
# price keys whose usage we never report (their count is 0, so they add nothing)
_ZERO_KEYS = frozenset({"web_searches_kcount", "storage_searches_kcount"})


class TokenUsage(NamedTuple):
    """One call's tokens in genai-prices' terms: ``input`` counts every input token
    (cached ones too), ``output`` every output token (reasoning too); the others are
    parts of them billed at their own rates. (A tuple: one is made per model step.)"""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0  # part of cache_write (Anthropic's one-hour cache)
    reasoning: int = 0  # part of output

    @property
    def spent(self) -> bool:
        return bool(self.input or self.output)

    @property
    def detailed(self) -> bool:
        """Some tokens are billed at a rate of their own (cache, reasoning)."""
        return bool(self.cache_read or self.cache_write or self.reasoning)


# A rate: (USD per token below the first tier, ((tier start, USD per token), ...)).
Rate = tuple[float, tuple[tuple[int, float], ...]]


@dataclass(frozen=True)
class Rates:
    """A model's per-token rates (``None``: that part is billed as its parent)."""

    input: Rate
    output: Rate
    cache_read: Rate | None = None
    cache_write: Rate | None = None
    cache_write_1h: Rate | None = None
    reasoning: Rate | None = None
    per_request: float = 0.0
    source: str = ""  # where the rates came from, for tooltips and the CLI
    # (unit, rate, the priced units directly inside it), worked out once
    plan: tuple[tuple[str, Rate, tuple[str, ...]], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "plan", _plan(self))

    def cost(self, usage: TokenUsage) -> float:
        total_input = usage.input
        if not usage.detailed:  # the usual step: plain input and output
            return (
                self.per_request
                + rate_at(self.input, total_input) * total_input
                + rate_at(self.output, total_input) * usage.output
            )
        usd = self.per_request
        for unit, rate, inner in self.plan:
            count = getattr(usage, unit) - sum(getattr(usage, p) for p in inner)
            usd += rate_at(rate, total_input) * count
        return usd


def rate_at(rate: Rate, total_input: int) -> float:
    """The rate of the tier the call's total input falls in (a cliff, not a blend)."""
    base, tiers = rate
    for start, price in reversed(tiers):
        if total_input > start:
            return price
    return base


def _inside(unit: str, part: str) -> bool:
    while part in _PARENT:
        part = _PARENT[part]
        if part == unit:
            return True
    return False


def _plan(rates: Rates) -> tuple[tuple[str, Rate, tuple[str, ...]], ...]:
    """Each priced unit with the priced units directly inside it: its own count is its
    total minus theirs (genai-prices' leaf decomposition; unpriced parts stay in it)."""
    priced = [u for u in _PRICE_KEYS if getattr(rates, u) is not None]
    plan = []
    for unit in priced:
        parts = [p for p in priced if _inside(unit, p)]
        direct = tuple(p for p in parts if not any(_inside(q, p) for q in parts))
        plan.append((unit, getattr(rates, unit), direct))
    return tuple(plan)


# -- the database ---------------------------------------------------------------------
def _rate(value: Any) -> Rate | None:
    from genai_prices.types import TieredPrices

    if value is None:
        return None
    if isinstance(value, TieredPrices):
        return (
            float(value.base) / _PER_M,
            tuple((int(t.start), float(t.price) / _PER_M) for t in value.tiers),
        )
    return (float(value) / _PER_M, ())


def _from_database(model: str) -> Rates | Any | None:
    """Rates of ``model`` in the bundled snapshot; the genai ModelInfo when its price
    uses units :class:`Rates` does not model; ``None`` when it is not there. Kept on disk
    (:mod:`.price_cache`), so a later process needs no ``genai_prices`` import for it."""
    day = _PRICED_AT.date().isoformat()
    kept = price_cache.lookup(model, _VERSION, day)
    if kept is not price_cache.MISSING:
        return None if kept is None else _rates_from_json(kept)
    found, holds = _look_up(model, day)
    if found is None or isinstance(found, Rates):
        price_cache.store(model, _VERSION, holds, None if found is None else _rates_json(found))
    return found


def _look_up(model: str, day: str) -> tuple[Rates | Any | None, str | None]:
    """(what :func:`_from_database` returns, the day it holds on: ``ALWAYS``, ``day``, or
    None when it depends on the time of day and must not be kept)."""
    from genai_prices import data_snapshot
    from genai_prices.types import StartDateConstraint, TieredPrices

    snapshot = data_snapshot._bundled_snapshot()  # never a downloaded one
    found = None
    provider, _, name = model.rpartition("/")
    for ref, pid in ((model, None), (name, provider or None), (normalise(model), None)):
        try:
            found = snapshot.find_provider_model(ref, None, pid, None)
            break
        except LookupError:
            continue
    if found is None:
        return None, price_cache.ALWAYS
    prov, info = found
    holds: str | None = price_cache.ALWAYS
    if isinstance(info.prices, list):  # conditional prices: by date (a day), or by hour
        by_date = all(
            c.constraint is None or isinstance(c.constraint, StartDateConstraint)
            for c in info.prices
        )
        holds = day if by_date else None
    price = info.get_prices(_PRICED_AT)
    keys = {k for k, v in vars(price).items() if v is not None and not k.startswith("_")}
    known = set(_PRICE_KEYS.values()) | _ZERO_KEYS | {"requests_kcount"}
    if not keys <= known or price.input_mtok is None or price.output_mtok is None:
        return (prov, info), None
    kcount = price.requests_kcount
    assert not isinstance(kcount, TieredPrices)  # tiers split by input tokens, not requests
    per_request = float(kcount or 0) / 1000
    # input and output are priced (checked above), so they get a Rate, not None
    rates: dict[str, Any] = {u: _rate(getattr(price, k)) for u, k in _PRICE_KEYS.items()}
    source = f"genai-prices {_VERSION}: {prov.id}/{info.id}"
    return Rates(**rates, per_request=per_request, source=source), holds


def _rates_json(rates: Rates) -> dict[str, Any]:
    """``rates`` as JSON values (floats round-trip exactly through ``json``)."""
    out: dict[str, Any] = {u: getattr(rates, u) for u in _PRICE_KEYS}
    return {**out, "per_request": rates.per_request, "source": rates.source}


def _rates_from_json(value: dict[str, Any]) -> Rates:
    def rate(r: Any) -> Rate | None:
        return None if r is None else (float(r[0]), tuple((int(s), float(p)) for s, p in r[1]))

    units: dict[str, Any] = {u: rate(value.get(u)) for u in _PRICE_KEYS}
    return Rates(**units, per_request=float(value["per_request"]), source=str(value["source"]))


_PRICED_AT = datetime.now(UTC)  # one "today" per process: every view prices alike
_VERSION = price_cache.release()


@cache
def rates_of(model: str) -> Rates | Any | None:
    """The rates of ``model``: the user's override first, then the database."""
    override = load_overrides().rates.get(model) or load_overrides().rates.get(normalise(model))
    if override is not None:
        return _from_override(override)
    return _from_database(model)


def _from_override(r: TokenRates) -> Rates:
    def rate(v: float | None) -> Rate | None:
        return None if v is None else (v / _PER_M, ())

    return Rates(
        input=(r.input / _PER_M, ()),
        output=(r.output / _PER_M, ()),
        cache_read=rate(r.cache_read),
        cache_write=rate(r.cache_write),
        reasoning=rate(r.reasoning),
        source=f"override file {load_overrides().path}",
    )


def is_offline(model: object) -> bool:
    """A model that answers without a provider (scripted, the demo): it costs nothing."""
    return isinstance(model, str) and _offline_name(model)


@cache
def _offline_name(model: str) -> bool:
    return normalise(model) in OFFLINE_MODELS


def call_cost(model: object, usage: TokenUsage) -> float | None:
    """USD of one model call; ``None`` when it spent tokens on an unpriced model.

    The one pricing function: the step list, status bar, ``summary``, the timeline,
    Compare and the fork estimate all price a call through it.
    """
    if is_offline(model):
        return 0.0
    found = rates_of(model) if isinstance(model, str) and model.strip() else None
    if found is None:
        return None if usage.spent else 0.0
    if isinstance(found, Rates):
        return found.cost(usage)
    return _slow_cost(found, usage)


def _slow_cost(found: Any, usage: TokenUsage) -> float | None:
    from genai_prices import Usage

    provider, info = found
    try:
        calc = info.calc_price(
            Usage(
                input_tokens=usage.input,
                output_tokens=usage.output,
                cache_read_tokens=usage.cache_read,
                cache_write_tokens=usage.cache_write,
                output_reasoning_tokens=usage.reasoning,
            ),
            provider,
            genai_request_timestamp=_PRICED_AT,
        )
    except ValueError:  # usage its price cannot decompose
        return None
    value = float(calc.total_price)
    return value if math.isfinite(value) else None


def provenance() -> str:
    """Where prices come from, in one line (status bar tooltips, ``summary``)."""
    overrides = load_overrides()
    text = f"prices: genai-prices {_VERSION} (bundled snapshot, offline)"
    if overrides.problem:
        return text + f"; override file ignored: {overrides.problem}"
    if overrides.path:
        return text + f"; overrides from {overrides.path}"
    return text


# -- words --------------------------------------------------------------------------
OFFLINE_TEXT = "$0 offline"  # short: it fits the step list's cost column


def format_usd(value: float, signed: bool = False) -> str:
    """Money as every face writes it (step list, status bar, Compare, the plot's axis, the
    commands): ``$1,234.56`` from a dollar up, ``$0.0118`` below, and two significant digits
    where four decimals would say ``$0.0000`` of a priced call (``$0.000042``). ``?``
    unpriced (NaN), ``""`` for 0; a negative amount is ``−$0.0118``, and ``signed`` adds
    ``+`` to a positive one (a delta)."""
    if math.isnan(value):
        return "?"
    if value == 0:
        return ""
    size = abs(value)
    if size >= 1:
        text = f"{size:,.2f}"
    elif size >= 0.00005:  # 0.0001 or more at four decimals
        text = f"{size:.4f}"
    else:
        digits = 1 - math.floor(math.log10(size))  # two significant digits
        text = f"{size:.{digits}f}".rstrip("0")
    sign = "−" if value < 0 else "+" if signed else ""
    return f"{sign}${text}"


def cost_words(value: float | None, offline: bool = False) -> str:
    """A step's or a run's cost as every face shows it (``unknown``: unpriced)."""
    if value is None:
        return "unknown"
    if offline and not value:
        return OFFLINE_TEXT
    return format_usd(value) or "$0"
