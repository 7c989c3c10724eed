"""Live model access for fork and heal: pick a provider by name.

Why lazy imports: ``loom_core.providers.base`` is imported by code that never
calls a model (the fork edit types, the GUI's picker), and importing the
``anthropic``/``openai`` SDKs costs noticeable start-up time; a provider's module
is loaded only when :func:`make_provider` builds one (these are the only
lazy imports here: heavy optional SDKs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loom_core.providers.base import Provider
from loom_core.providers.names import DEFAULT_MODELS, PROVIDERS, default_model, guess_provider


def make_provider(name: str, model: str = "", base_url: str | None = None, **opts: Any) -> Provider:
    """A provider by its :data:`PROVIDERS` name. ``opts`` go to the constructor
    (SDK providers: ``api_key``, ``stream``, ``max_retries``, ``backoff``,
    ``max_backoff``, ``timeout``; ``openai`` also ``token_param``)."""
    if name == "anthropic":
        from loom_core.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider(model, base_url, **opts)
    if name == "openai":
        from loom_core.providers.openai_provider import OpenAIChatProvider

        return OpenAIChatProvider(model, base_url, **opts)
    if name == "openai-responses":
        from loom_core.providers.openai_provider import OpenAIResponsesProvider

        return OpenAIResponsesProvider(model, base_url, **opts)
    if name == "scripted":
        from loom_core.providers.scripted import ScriptedProvider

        return ScriptedProvider()
    raise ValueError(f"unknown provider {name!r} (known: {', '.join(PROVIDERS)})")


__all__ = ["PROVIDERS", "DEFAULT_MODELS", "default_model", "guess_provider", "make_provider"]


def checked_factory(make: Callable[[], Provider], name: str) -> Callable[[], Provider]:
    """``make`` (one provider per concurrent run), after checking once that it is usable.

    Why up front: an unusable provider (no key, no base URL) must be reported before
    any run starts -- ValueError naming the provider and the reason.
    """
    probe = make()
    try:
        ok, why = probe.available()
    finally:
        getattr(probe, "close", lambda: None)()  # SDK providers pool connections
    if not ok:
        raise ValueError(f"provider {name} is not usable: {why}")
    return make
