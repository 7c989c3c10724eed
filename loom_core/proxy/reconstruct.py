"""Rebuild the final response object from a streamed (SSE) response (loom-format.md §6.5).

Why: a trace's ``wire`` holds one response object per exchange, whatever the
transport; a stream is folded, event by event as it is relayed, into the object the
same call would have returned without streaming. One accumulator per dialect:

* Anthropic Messages: ``message_start`` envelope + usage, ``content_block_*`` (text,
  tool input JSON, thinking + signature, citations), ``message_delta`` stop reason +
  usage; ``ping`` ignored; ends with ``message_stop`` (``error`` = failed).
* OpenAI Chat Completions: chunks merged per choice index, ``tool_calls`` assembled
  by index, last ``finish_reason``, the usage chunk; ends with ``data: [DONE]``.
* OpenAI Responses: ``response.output_item.added/done``, ``content_part.added``,
  ``output_text.delta``, ``function_call_arguments.delta``; ends with
  ``response.completed`` / ``response.incomplete`` (whose ``response`` is taken as the
  final object, its ``output`` filled from the items when omitted), or
  ``response.failed`` / ``error`` (failed, not recorded).

Each accumulator's ``feed`` returns True for the terminal event; ``finished`` says
whether what was seen is a complete response worth recording.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from .sse import SSEEvent, SSEParser

ANTHROPIC_EVENTS = frozenset(("message_start", "content_block_start", "content_block_delta",
                              "content_block_stop", "message_delta", "message_stop", "ping"))


class AnthropicStream:
    def __init__(self) -> None:
        self.envelope: dict[str, Any] = {}
        self.usage: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.partial: dict[int, str] = {}
        self.finished = False

    def feed(self, ev: dict[str, Any]) -> bool:
        kind = ev.get("type")
        if kind == "message_start":
            message = ev.get("message") or {}
            self.envelope = {k: v for k, v in message.items() if k not in ("content", "usage")}
            self.usage.update(message.get("usage") or {})
        elif kind == "content_block_start" and isinstance(ev.get("index"), int):
            self.blocks[ev["index"]] = copy.deepcopy(ev.get("content_block") or {})
            self.partial[ev["index"]] = ""
        elif kind == "content_block_delta" and ev.get("index") in self.blocks:
            self._delta(ev["index"], ev.get("delta") or {})
        elif kind == "message_delta":
            delta = ev.get("delta") or {}
            for member in ("stop_reason", "stop_sequence"):
                if member in delta:
                    self.envelope[member] = delta[member]
            self.finished = self.finished or bool(delta.get("stop_reason"))
            self.usage.update(ev.get("usage") or {})
        elif kind == "message_stop":
            self.finished = True
            return True
        return kind == "error"

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block, kind = self.blocks[index], delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + (delta.get("text") or "")
        elif kind == "input_json_delta":
            self.partial[index] += delta.get("partial_json") or ""
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + (delta.get("thinking") or "")
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + (delta.get("signature") or "")
        elif kind == "citations_delta" and delta.get("citation") is not None:
            block.setdefault("citations", []).append(delta["citation"])

    def result(self) -> dict[str, Any]:
        content = []
        for i in sorted(self.blocks):
            block = self.blocks[i]
            if self.partial.get(i):
                try:
                    block["input"] = json.loads(self.partial[i])
                except ValueError:
                    block["input"] = {}
            content.append(block)
        return {**self.envelope, "content": content,
                "stop_reason": self.envelope.get("stop_reason"), "usage": self.usage}


class ChatStream:
    def __init__(self) -> None:
        self.head: dict[str, Any] = {}
        self.choices: dict[int, dict[str, Any]] = {}
        self.calls: dict[int, dict[int, dict[str, Any]]] = {}
        self.usage: dict[str, Any] = {}
        self.finished = False

    def feed_done(self) -> bool:
        self.finished = True
        return True

    def feed(self, ev: dict[str, Any]) -> bool:
        for member in ("id", "created", "model", "system_fingerprint", "service_tier"):
            if ev.get(member) is not None:
                self.head[member] = ev[member]
        if ev.get("usage"):
            self.usage = ev["usage"]
        for choice in ev.get("choices") or []:
            if isinstance(choice, dict):
                self._choice(choice)
        return False

    def _choice(self, choice: dict[str, Any]) -> None:
        index = choice.get("index", 0) if isinstance(choice.get("index"), int) else 0
        slot = self.choices.setdefault(index, {"content": "", "refusal": "", "finish": None})
        slot["finish"] = choice.get("finish_reason") or slot["finish"]
        if choice.get("finish_reason"):
            self.finished = True  # a server that omits [DONE] still ended this choice
        delta = choice.get("delta") or {}
        slot["content"] += delta.get("content") or ""
        slot["refusal"] += delta.get("refusal") or ""
        calls = self.calls.setdefault(index, {})
        for tc in delta.get("tool_calls") or []:
            if not isinstance(tc, dict):
                continue
            call = calls.setdefault(tc.get("index", 0), {
                "id": "", "type": "function", "function": {"name": "", "arguments": ""}})
            call["id"] = tc.get("id") or call["id"]
            fn = tc.get("function") or {}
            call["function"]["name"] = fn.get("name") or call["function"]["name"]
            call["function"]["arguments"] += fn.get("arguments") or ""

    def result(self) -> dict[str, Any]:
        choices = []
        for index in sorted(self.choices) or [0]:
            slot = self.choices.get(index) or {"content": "", "refusal": "", "finish": None}
            message: dict[str, Any] = {"role": "assistant", "content": slot["content"] or None}
            if slot["refusal"]:
                message["refusal"] = slot["refusal"]
            calls = self.calls.get(index) or {}
            if calls:
                message["tool_calls"] = [calls[i] for i in sorted(calls)]
            choices.append({"index": index, "message": message,
                            "finish_reason": slot["finish"] or "stop"})
        head = {k: self.head[k] for k in ("id",) if k in self.head}
        head["object"] = "chat.completion"
        head.update((k, self.head[k]) for k in ("created", "model") if k in self.head)
        head.setdefault("model", "")
        return {**head, "choices": choices, "usage": self.usage}


class ResponsesStream:
    def __init__(self) -> None:
        self.snapshot: dict[str, Any] = {}
        self.items: dict[int, dict[str, Any]] = {}
        self.final: dict[str, Any] | None = None
        self.finished = False

    def feed(self, ev: dict[str, Any]) -> bool:
        kind, index = str(ev.get("type") or ""), ev.get("output_index")
        if kind in ("response.created", "response.in_progress", "response.queued"):
            self.snapshot = copy.deepcopy(ev.get("response") or {})
        elif kind == "response.output_item.added" and isinstance(index, int):
            self.items[index] = copy.deepcopy(ev.get("item") or {})
        elif kind == "response.output_item.done" and isinstance(index, int):
            self.items[index] = copy.deepcopy(ev.get("item") or {})
        elif kind == "response.content_part.added" and index in self.items:
            self.items[index].setdefault("content", []).append(copy.deepcopy(ev.get("part") or {}))
        elif kind == "response.output_text.delta" and index in self.items:
            parts = self.items[index].get("content") or []
            j = ev.get("content_index", 0)
            if isinstance(j, int) and 0 <= j < len(parts):
                parts[j]["text"] = (parts[j].get("text") or "") + (ev.get("delta") or "")
        elif kind == "response.function_call_arguments.delta" and index in self.items:
            item = self.items[index]
            item["arguments"] = (item.get("arguments") or "") + (ev.get("delta") or "")
        elif kind in ("response.completed", "response.incomplete"):
            self.final = copy.deepcopy(ev.get("response") or {})
            self.finished = True
            return True
        return kind in ("response.failed", "error")

    def result(self) -> dict[str, Any]:
        out = self.final if self.final is not None else dict(self.snapshot)
        if not isinstance(out.get("output"), list) or (not out["output"] and self.items):
            out["output"] = [self.items[i] for i in sorted(self.items)]
        return out


def sniff_dialect(path: str, data: Any) -> str:
    """The stream's dialect from its first JSON event, else from the request path."""
    if isinstance(data, dict):
        kind = str(data.get("type") or "")
        if kind.startswith("response."):
            return "responses"
        if kind in ANTHROPIC_EVENTS:
            return "anthropic"
        if "choices" in data or data.get("object") == "chat.completion.chunk":
            return "openai"
    return path_dialect(path)


def path_dialect(path: str) -> str:
    """loom-harness decides by path (§6.2); we add ``/responses``."""
    p = path.split("?", 1)[0].lower()
    if p.endswith("/responses") or "/responses/" in p:
        return "responses"
    return "openai" if "chat/completions" in p else "anthropic"


class StreamReconstructor:
    """Parser + the dialect's accumulator, fed with raw chunks as they are relayed."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.parser = SSEParser()
        self.acc: AnthropicStream | ChatStream | ResponsesStream | None = None
        self.dialect = path_dialect(path)
        self.terminal_at: int | None = None  # stream offset where the final event began

    def feed(self, chunk: bytes) -> int | None:
        """Consume a chunk; returns the terminal event's start offset once it completes."""
        for event in self.parser.feed(chunk):
            self._event(event)
        return self.terminal_at

    def close(self) -> None:
        """End of stream (an event may lack its blank line)."""
        for event in self.parser.close():
            self._event(event)

    def _event(self, event: SSEEvent) -> None:
        if self.terminal_at is not None:
            return
        data = event.json()
        if self.acc is None:
            if data is None and event.data != "[DONE]":
                return
            self.dialect = sniff_dialect(self.path, data)
            self.acc = {"anthropic": AnthropicStream, "openai": ChatStream,
                        "responses": ResponsesStream}[self.dialect]()
        if event.data == "[DONE]" and isinstance(self.acc, ChatStream):
            terminal = self.acc.feed_done()
        elif isinstance(data, dict):
            terminal = self.acc.feed(data)
        else:
            terminal = False
        if terminal:
            self.terminal_at = event.start

    @property
    def finished(self) -> bool:
        """A complete response was seen (its final event, or a finish indicator)."""
        return self.acc is not None and self.acc.finished

    def result(self) -> dict[str, Any]:
        if self.acc is None:
            raise ValueError("no event in the stream")
        return self.acc.result()


def reconstruct(path: str, raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """A whole buffered stream -> (final object or None when incomplete, dialect)."""
    rec = StreamReconstructor(path)
    rec.feed(raw)
    rec.close()
    return (rec.result() if rec.finished else None), rec.dialect
