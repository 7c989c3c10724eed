"""The cost of each model step of a run: which model, which tokens, which price.

Why one object for it: the step list, the status bar, ``summary``, the timeline,
Compare and ``diff`` must show the same number for the same step, so they all ask
:class:`RunPricer` (which asks :func:`loom_core.views.pricing.call_cost`).

Where the tokens come from: a model effect's ``usage`` as recorded. Harness traces
keep what their provider returned, which may carry Anthropic's
``cache_creation_input_tokens`` / ``cache_read_input_tokens`` or OpenAI's
``*_tokens_details``. Proxy traces map usage onto ``input_tokens`` /
``output_tokens`` and drop the rest, exactly as loom-harness does (§1.4; our
effects stay identical to its recorder's), but their ``wire`` keeps each
response's full usage: model effect *k* of a proxy log is exchange *k* (§6.3), so
its cache and reasoning counts are read from ``wire[k]`` -- after checking that
the response's mapped counts are the effect's, so a misaligned wire is never used.
A live proxy journal has no ``wire``; its exchange sidecar beside it
(``<base>.exchanges.jsonl``, written before the journal line) holds the same
responses and is read as it grows, so a live tab and the saved trace agree.

Offline steps cost nothing: a model named as an offline one (:data:`OFFLINE_MODELS`),
and the live tail of a branch re-run on the scripted provider (its ``fork`` member
says ``provider: scripted``; the calls carry the parent's model name).
"""

from __future__ import annotations

import math
from array import array
from pathlib import Path
from typing import Any

import msgspec

from loom_core.formats.document import Document
from loom_core.views.billed import bills_beside_model, meta_usage
from loom_core.views.pricing import (
    Rates,
    TokenUsage,
    call_cost,
    is_offline,
    rate_at,
    rates_of,
)

_LIMIT = 10**12  # one call's count is clamped (hand-edited files)
READ: Any = object()  # "decode the recorded usage from the effect" (the caller has not)
_PLAIN = frozenset({"input_tokens", "output_tokens"})


class _UsageOnly(msgspec.Struct):
    usage: Any = None


_usage_decoder = msgspec.json.Decoder(_UsageOnly)


class _Exchange(msgspec.Struct):
    type: Any = None
    n: Any = None
    response: _UsageOnly | None = None


_exchange_decoder = msgspec.json.Decoder(_Exchange)


class _SidecarUsage:
    """Response usage by exchange index from a growing sidecar (new bytes read on demand)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset = path, 0
        self.usage: dict[int, Any] = {}

    def get(self, n: int) -> Any:
        if n not in self.usage:
            self._read()
        return self.usage.get(n)

    def _read(self) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1  # a torn last line waits for its newline
        for line in data[:end].splitlines():
            try:
                x = _exchange_decoder.decode(line)
            except (msgspec.ValidationError, msgspec.DecodeError):
                continue
            if x.type == "exchange" and type(x.n) is int and x.response is not None:
                self.usage[x.n] = x.response.usage
        self.offset += end


def _sidecar_of(doc: Document) -> _SidecarUsage | None:
    """The exchange sidecar beside a proxy's live journal, if there is one."""
    if doc.format != "journal" or not str(doc.path).endswith(".journal.jsonl"):
        return None
    side = Path(str(doc.path)[: -len(".journal.jsonl")] + ".exchanges.jsonl")
    return _SidecarUsage(side) if side.is_file() else None


def _n(value: Any) -> int:
    if type(value) is int and 0 <= value <= _LIMIT:  # the usual case, first
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and not math.isfinite(value):  # (a huge int is clamped below)
        return 0
    return max(0, min(int(value), _LIMIT))


def _part(usage: dict[str, Any], member: str, key: str) -> int:
    inner = usage.get(member)
    return _n(inner.get(key)) if isinstance(inner, dict) else 0


def token_usage(usage: Any) -> TokenUsage:
    """A recorded or provider ``usage`` object in genai-prices' terms (any JSON reads).

    Anthropic's ``input_tokens`` excludes the cached tokens, OpenAI's
    ``prompt_tokens`` / Responses ``input_tokens`` include them.
    """
    if not isinstance(usage, dict):
        return TokenUsage()
    if usage.keys() <= _PLAIN:  # the usual {input_tokens, output_tokens}: nothing more to read
        return TokenUsage(_n(usage.get("input_tokens")), _n(usage.get("output_tokens")))
    if "prompt_tokens" in usage and "input_tokens" not in usage:  # OpenAI Chat, as sent
        inp, out = _n(usage.get("prompt_tokens")), _n(usage.get("completion_tokens"))
        read, write = (
            _part(usage, "prompt_tokens_details", "cached_tokens"),
            _part(usage, "prompt_tokens_details", "cache_write_tokens"),
        )
        hour, reasoning = 0, _part(usage, "completion_tokens_details", "reasoning_tokens")
    else:
        inp, out = _n(usage.get("input_tokens")), _n(usage.get("output_tokens"))
        write = _n(usage.get("cache_creation_input_tokens"))
        read = _n(usage.get("cache_read_input_tokens"))
        if write or read:  # Anthropic: cache tokens come on top of input_tokens
            inp += write + read
            hour = _part(usage, "cache_creation", "ephemeral_1h_input_tokens")
        else:  # OpenAI Responses (or no cache at all)
            read = _part(usage, "input_tokens_details", "cached_tokens")
            write, hour = _part(usage, "input_tokens_details", "cache_write_tokens"), 0
        reasoning = _part(usage, "output_tokens_details", "reasoning_tokens")
    read = min(read, inp)
    write = min(write, inp - read)
    return TokenUsage(inp, out, read, write, min(hour, write), min(reasoning, out))


def recorded_pair(usage: Any) -> tuple[int, int]:
    """(input, output) as a proxy maps a response's usage into its effect (§6.3)."""
    if not isinstance(usage, dict):
        return 0, 0
    if "prompt_tokens" in usage and "input_tokens" not in usage:
        return _n(usage.get("prompt_tokens")), _n(usage.get("completion_tokens"))
    return _n(usage.get("input_tokens")), _n(usage.get("output_tokens"))


def _decoded_usage(raw: Any) -> Any:
    if raw is None:
        return None
    try:
        return _usage_decoder.decode(raw).usage
    except (msgspec.ValidationError, msgspec.DecodeError):  # not an object (§1.4 tolerance)
        return None


def _flat(model: str) -> Rates | None:
    """The rates of a model priced by :class:`Rates` and online; ``None`` when its
    calls need the full path (offline and unpriced ones are decided there)."""
    if is_offline(model) or not model.strip():
        return None
    rates = rates_of(model)
    return rates if isinstance(rates, Rates) else None


def _offline_tail(doc: Document) -> int | None:
    """First effect of a scripted branch's live tail (its prefix was recorded live)."""
    fork = (getattr(doc.header, "model_extra", None) or {}).get("fork")
    if isinstance(fork, dict) and fork.get("provider") == "scripted":
        prefix = fork.get("prefix")
        return prefix if isinstance(prefix, int) and prefix >= 0 else 0
    return None


def _plain_usd(rates: Rates, n_in: int, n_out: int) -> float:
    """:meth:`Rates.cost` of a plain usage, term by term (no tuple built)."""
    return (
        rates.per_request + rate_at(rates.input, n_in) * n_in + rate_at(rates.output, n_in) * n_out
    )


class RunPricer:
    """Prices the model effects of one document (which may still grow: a live journal)."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.default = doc.header.model if isinstance(doc.header.model, str) else ""
        self.offline_from = _offline_tail(doc)
        self._ordinal = array("i")  # effect -> its model ordinal (proxy wire index)
        self._models = 0
        self._offline_model: dict[str, bool] = {}
        self._sidecar = _sidecar_of(doc) if not doc.wire else None
        self._flat_rates: dict[str, Rates | None] = {}

    def model(self, i: int) -> str:
        meta = self.doc.effects[i].meta
        model = meta.model if meta is not None else None
        return model if isinstance(model, str) and model else self.default

    def offline(self, i: int) -> bool:
        """Step ``i`` was answered without a provider (and so cost nothing)."""
        if self.offline_from is not None and i >= self.offline_from:
            return True
        return self.offline_model(self.model(i))

    def offline_model(self, model: str) -> bool:
        """``model`` answers without a provider (looked up once per name)."""
        known = self._offline_model.get(model)
        if known is None:
            known = self._offline_model[model] = is_offline(model)
        return known

    def usage(self, i: int, recorded: Any = READ) -> TokenUsage:
        """Effect ``i``'s tokens, cache and reasoning counts from the wire when only it has them.

        ``recorded``: the effect's ``usage`` member when the caller decoded it already.
        """
        effect = self.doc.effects[i]
        if recorded is READ:
            recorded = (
                _decoded_usage(effect.result) if effect.kind == "model" else meta_usage(effect.meta)
            )
        usage = token_usage(recorded)
        if usage.detailed or not (self.doc.wire or self._sidecar) or effect.kind != "model":
            return usage
        full = self._exchange_usage(self._wire_index(i))
        if full is not None and recorded_pair(full) == recorded_pair(recorded):
            return token_usage(full)
        return usage

    def _exchange_usage(self, k: int) -> Any:
        """The full provider usage of exchange ``k`` (the wire, or a live sidecar)."""
        wire = self.doc.wire
        if wire:
            return _decoded_usage(wire[k]) if 0 <= k < len(wire) else None
        return self._sidecar.get(k) if self._sidecar is not None else None

    def cost(self, i: int, recorded: Any = READ) -> float | None:
        """USD of effect ``i`` (0 for anything but a model call or a step that carries a
        call's usage, :mod:`loom_core.views.billed`; ``None``: unpriced); ``recorded`` as
        for :meth:`usage`."""
        effect = self.doc.effects[i]
        if (effect.kind != "model" and not bills_beside_model(effect)) or self.offline(i):
            return 0.0
        return call_cost(self.model(i), self.usage(i, recorded))

    @property
    def needs_wire(self) -> bool:
        """Model calls are priced with their exchange's full usage (a proxy's wire or a
        live sidecar), one call at a time: the timeline cannot price them in bulk
        (:func:`loom_core.views.columns.prices`)."""
        return bool(self.doc.wire) or self._sidecar is not None

    def plain_rates(self, model: str) -> Rates | None:
        """The rates a plain call on ``model`` is priced with in bulk (by
        :func:`loom_core.views.columns.prices`, with :meth:`Rates.cost`'s arithmetic);
        ``None``: its calls go through :meth:`cost`."""
        flat = self._flat_rates
        return flat[model] if model in flat else flat.setdefault(model, _flat(model))

    def model_name(self, recorded: Any) -> str:
        """The model a call used, from its meta's ``model`` member (else the run's)."""
        return recorded if isinstance(recorded, str) and recorded else self.default

    def model_cost(self, i: int, recorded: Any) -> float | None:
        """:meth:`cost` of model effect ``i`` whose result's ``usage`` member is ``recorded``.

        The usual call (plain input and output counts, an online model priced by
        :class:`Rates`, no wire to consult) is priced inline, as the timeline prices it:
        ``summary --json`` prices every model call of a big run this way.
        """
        if (
            type(recorded) is dict
            and recorded.keys() <= _PLAIN
            and not (self.doc.wire or self._sidecar is not None)
            and (self.offline_from is None or i < self.offline_from)
        ):
            model, flat = self.model(i), self._flat_rates
            rates = flat[model] if model in flat else flat.setdefault(model, _flat(model))
            if rates is not None:
                n_in, n_out = _n(recorded.get("input_tokens")), _n(recorded.get("output_tokens"))
                return _plain_usd(rates, n_in, n_out)
        return self.cost(i, recorded)

    def _wire_index(self, i: int) -> int:
        effects, ordinal = self.doc.effects, self._ordinal
        for j in range(len(ordinal), i + 1):
            ordinal.append(self._models)
            if effects[j].kind == "model":
                self._models += 1
        return ordinal[i]
