"""Live model access for fork and heal: pick a provider by name.

Why lazy imports: ``loom_core.providers.base`` is imported by code that never
calls a model (the fork edit types, the GUI's picker), and importing the
``anthropic``/``openai`` SDKs costs noticeable start-up time; a provider's module
is loaded only when :func:`make_provider` builds one.
"""

from __future__ import annotations

from typing import Any, Callable

from loom_core.providers.base import Provider

# name -> one-line label, in the order the app's picker lists them
PROVIDERS: dict[str, str] = {
    "anthropic": "Anthropic Messages API (ANTHROPIC_API_KEY)",
    "openai": "OpenAI Chat Completions, or any OpenAI-compatible server (vLLM, Ollama, LM Studio)",
    "openai-responses": "OpenAI Responses API (OPENAI_API_KEY)",
    "scripted": "Scripted, offline: canned replies, no key, no network",
}

DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-sonnet-4-6",  # 4-5 reaches end-of-life on 2026-11-30 (SDK data)
    "openai": "gpt-4.1-mini",
    "openai-responses": "gpt-4.1-mini",
    "scripted": "scripted",
}


def default_model(name: str) -> str:
    """The model a provider uses when neither the user nor the request names one."""
    if name not in DEFAULT_MODELS:
        raise ValueError(f"unknown provider {name!r} (known: {', '.join(PROVIDERS)})")
    return DEFAULT_MODELS[name]


def make_provider(name: str, model: str = "", base_url: str | None = None,
                  **opts: Any) -> Provider:
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


__all__ = ["PROVIDERS", "DEFAULT_MODELS", "default_model", "make_provider"]


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
