"""Dry run: what replays free, what runs live, what it should cost -- before any call."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loom_core.fork.edits import Edit
from loom_core.fork.plan import dry_run
from loom_core.formats.loader import load
from loom_core.formats.save import save_dict
from loom_core.providers.scripted import ScriptedProvider


class Keyless:
    name = "anthropic"

    def available(self) -> tuple[bool, str]:
        return False, "ANTHROPIC_API_KEY is not set"


def test_numbers_follow_the_parents_tail(parents: dict[str, Any]) -> None:
    parent = parents["weather"]
    doc = load(parent)
    plain = dry_run(doc, parent, 3, Edit(), 20)
    # the parent's calls from step 3 on: (200 in, 20 out) and (300 in, 30 out)
    assert (plain.replayed, plain.live_calls, plain.turn) == (3, 2, 1)
    assert (plain.input_tokens, plain.output_tokens, plain.total_tokens) == (500, 50, 550)
    note = Edit(inject="x" * 400)  # ~100 more tokens in every later request
    grown = dry_run(doc, parent, 3, note, 20)
    assert grown.context_tokens == plain.context_tokens + 100
    assert (grown.input_tokens, grown.output_tokens) == (700, 50)
    # claude-sonnet-4-5: $3 in / $15 out per million
    assert grown.cost_usd == pytest.approx((300 * 3 + 20 * 15 + 400 * 3 + 30 * 15) / 1e6)
    capped = dry_run(doc, parent, 3, note, 1)
    assert (capped.live_calls, capped.input_tokens, capped.output_tokens) == (1, 300, 20)
    assert capped.cost_usd == pytest.approx((300 * 3 + 20 * 15) / 1e6)
    assert plain.source == "frame" and grown.edit == "note injected"
    assert plain.provider is None and plain.available is None


def test_unpriced_models_and_providers(parents: dict[str, Any]) -> None:
    parent = parents["weather"]
    doc = load(parent)
    local = dry_run(doc, parent, 0, Edit(model="my-local-llama"), 20)
    assert local.cost_usd is None and local.model == "my-local-llama" and local.live_calls == 3
    ok = dry_run(doc, parent, 0, Edit(), 20, ScriptedProvider())
    assert (ok.provider, ok.available, ok.unavailable_reason) == ("scripted", True, "")
    missing = dry_run(doc, parent, 0, Edit(), 20, Keyless())  # type: ignore[arg-type]
    assert (missing.available, missing.unavailable_reason) == (
        False,
        "ANTHROPIC_API_KEY is not set",
    )
    assert json.loads(json.dumps(missing.to_dict()))["total_tokens"] == missing.total_tokens


def test_calls_without_recorded_usage_use_the_context_size(
    copy_parent: Callable[..., Path],
) -> None:
    path = copy_parent("weather")
    data = json.loads(path.read_text())
    data["log"][5]["result"]["usage"] = {}
    save_dict(data, path)
    plan = dry_run(load(path), path, 3, Edit(), 20)
    assert plan.input_tokens == 200 + plan.context_tokens and plan.output_tokens == 20


def test_a_proxy_plan_sizes_the_exact_request(parents: dict[str, Any]) -> None:
    parent = parents["anthropic"].path
    plan = dry_run(load(parent), parent, 2, Edit(), 5)
    assert (plan.source, plan.replayed, plan.live_calls) == ("request", 2, 2)
    assert (plan.input_tokens, plan.output_tokens) == (180 + 240, 12 + 20)
    assert plan.model == "claude-sonnet-4-6" and plan.cost_usd is not None


def test_a_bad_edit_fails_the_dry_run_too(parents: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="cannot redact step 3"):
        dry_run(load(parents["weather"]), parents["weather"], 3, Edit(redact=[3]), 20)
