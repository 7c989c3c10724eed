"""Every OpenTelemetry file in the real-world folder reads with the facts it holds.

The expected figures are counted here by walking each file's JSON (OTLP JSON: resourceSpans
→ scopeSpans → spans → attributes), independently of the reader: model steps = LLM spans
(OpenInference ``LLM``, ``gen_ai.operation.name`` chat / text_completion /
generate_content, OpenLLMetry ``llm.request.type``), tokens from ``gen_ai.usage.*`` /
``llm.token_count.*`` (a numeric string counts: Spring AI writes every value so), output =
the last model span's completion text, or, in a run without one, what its root workflow
span says it returned (OpenLLMetry's ``traceloop.entity.output``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loom_core.formats.loader import load
from tests.core.clis import core
from tests.core.formats.real_world import real_file

OTLP = (
    "open-telemetry__opentelemetry-proto__trace.json",
    "langwatch__langwatch__otel.traces.test.ts--openInferenceOpenAIRequest.json",
    "langwatch__langwatch__otel.traces.test.ts--openllmetryOpenAIRequest.json",
    "langwatch__langwatch__otel.traces.test.ts--openllmetryLangChainRequest.json",
    "langwatch__langwatch__otel.traces.test.ts--springAITrace.json",
)
_MODEL_OPS = ("chat", "text_completion", "generate_content")
_IN = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
_OUT = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
)
_TEXT = ("llm.output_messages.0.message.content", "gen_ai.completion.0.content")


def _spans(path: Path) -> list[dict[str, Any]]:
    """Each span's attributes as plain values (the file's typed values unwrapped)."""
    out = []
    for rs in json.loads(path.read_text(encoding="utf-8"))["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                out.append({a["key"]: next(iter(a["value"].values())) for a in span["attributes"]})
    return out


def _is_model(attrs: dict[str, Any]) -> bool:
    return (
        attrs.get("openinference.span.kind") == "LLM"
        or attrs.get("gen_ai.operation.name") in _MODEL_OPS
        or "llm.request.type" in attrs
    )


def _tokens(attrs: dict[str, Any], keys: tuple[str, ...]) -> int:
    return next((int(attrs[k]) for k in keys if k in attrs), 0)


def _facts(path: Path) -> dict[str, Any]:
    models = [a for a in _spans(path) if _is_model(a)]
    text = next((m[k] for m in models[-1:] for k in _TEXT if k in m), "")
    if not models:
        roots = [a for a in _spans(path) if "traceloop.entity.output" in a]
        text = json.loads(roots[0]["traceloop.entity.output"])["outputs"] if roots else ""
    return {
        "effects": len(models),
        "input_tokens": sum(_tokens(m, _IN) for m in models),
        "output_tokens": sum(_tokens(m, _OUT) for m in models),
        "output": text,
    }


@pytest.mark.parametrize("name", OTLP)
def test_each_real_otlp_file_reads_with_its_facts(name: str) -> None:
    path = real_file("otlp", name)
    facts = _facts(path)
    done = core("summary", path, "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert {k: shown[k] for k in facts} == facts
    assert shown["kinds"] == ["model"] * facts["effects"]  # no tool span in any of them
    assert shown["warnings"] == []


def test_spring_ai_string_counts_are_its_tokens() -> None:
    """Micrometer writes ``gen_ai.usage.input_tokens = "11"``: 11 tokens, priced."""
    shown = json.loads(core("summary", real_file("otlp", OTLP[4]), "--json").stdout)
    assert (shown["input_tokens"], shown["output_tokens"]) == (11, 13)
    assert shown["cost_usd"] > 0


def test_a_count_that_is_no_number_is_shown_raw_with_a_warning(tmp_path: Path) -> None:
    text = real_file("otlp", OTLP[4]).read_text(encoding="utf-8")
    bad = tmp_path / "spring.otlp.json"
    bad.write_text(text.replace('{"stringValue":"11"}', '{"stringValue":"eleven"}'))
    doc = load(bad)
    assert doc.result(0)["usage"]["input_tokens"] == 0  # not counted ...
    assert doc.extra["records"][0]["attributes"]["gen_ai.usage.input_tokens"] == "eleven"
    assert any("gen_ai.usage.input_tokens = 'eleven' is not a number" in w for w in doc.warnings)
    printed = core("summary", bad)
    assert "is not a number" in printed.stdout + printed.stderr  # ... and said, not hidden
