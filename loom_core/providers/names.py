"""Which providers exist, their default models, and which one speaks like a parent run.

A leaf with no SDK in it: the SDK providers read their default model here, the
package's :func:`~loom_core.providers.make_provider` lists the names, and the fork
and heal commands and the app pick a provider for a parent with :func:`guess_provider`.
"""

from __future__ import annotations

from typing import Protocol

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

_BY_DIALECT = {"anthropic": "anthropic", "openai": "openai", "responses": "openai-responses"}


class SpeaksLike(Protocol):
    """What provider selection reads of a fork context: the recorded dialect and model."""

    @property
    def dialect(self) -> str | None: ...

    @property
    def model(self) -> str | None: ...


def default_model(name: str) -> str:
    """The model a provider uses when neither the user nor the request names one."""
    if name not in DEFAULT_MODELS:
        raise ValueError(f"unknown provider {name!r} (known: {', '.join(PROVIDERS)})")
    return DEFAULT_MODELS[name]


def guess_provider(ctx: SpeaksLike) -> str:
    """The provider that speaks like the parent: its recorded dialect, else its model id."""
    if ctx.dialect in _BY_DIALECT:
        return _BY_DIALECT[ctx.dialect]
    model = (ctx.model or "").lower()
    if model == "scripted":
        return "scripted"
    if model.startswith(("gpt", "o1", "o3", "o4", "chatgpt")):
        return "openai"
    return "anthropic"
