"""The parts of an SDK usage object billed at their own rates, kept in the reply's usage.

Why keep them: a branch's live calls are priced like any recorded step
(:mod:`loom_core.views.run_cost`), and cache reads, cache writes and reasoning tokens cost
differently from plain input and output. They ride beside loom's ``input_tokens`` /
``output_tokens`` (additive: loom-harness reads only those two), in the provider's own
names -- Anthropic's ``cache_*_input_tokens``, OpenAI's ``*_tokens_details`` (Chat's
``prompt``/``completion`` details stored under the Responses names, whose input
likewise includes the cached tokens). Zero counts are left out.
"""

from __future__ import annotations

from typing import Any


def _count(owner: Any, name: str) -> int:
    value = getattr(owner, name, None) if owner is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def anthropic_extras(usage: Any) -> dict[str, Any]:
    """``cache_creation_input_tokens`` / ``cache_read_input_tokens`` (+ the 1h split)."""
    out: dict[str, Any] = {}
    for name in ("cache_creation_input_tokens", "cache_read_input_tokens"):
        if _count(usage, name):
            out[name] = _count(usage, name)
    hour = _count(getattr(usage, "cache_creation", None), "ephemeral_1h_input_tokens")
    if hour:
        out["cache_creation"] = {"ephemeral_1h_input_tokens": hour}
    return out


def openai_extras(usage: Any, chat: bool) -> dict[str, Any]:
    """Cached (read and written) input and reasoning output, as ``input/output_tokens_details``."""
    inp = getattr(usage, "prompt_tokens_details" if chat else "input_tokens_details", None)
    out = getattr(usage, "completion_tokens_details" if chat else "output_tokens_details", None)
    extras: dict[str, Any] = {}
    cached = {k: _count(inp, k) for k in ("cached_tokens", "cache_write_tokens") if _count(inp, k)}
    if cached:
        extras["input_tokens_details"] = cached
    if _count(out, "reasoning_tokens"):
        extras["output_tokens_details"] = {"reasoning_tokens": _count(out, "reasoning_tokens")}
    return extras
