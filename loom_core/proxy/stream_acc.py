"""The three dialects' stream accumulators: decoded events in, the final object out.

Split from :mod:`.reconstruct` (which documents what each dialect's stream holds).
Each ``feed`` takes one decoded event object -- a fresh decode the accumulator may
keep as is, nothing else holds it -- and returns True for the terminal event;
``feed_all`` takes a batch of decoded events (:data:`.sse_bulk.DONE` for ``[DONE]``,
None for what is not JSON) and returns the index of the terminal one, or -1;
``finished`` says whether what was seen is a complete response worth recording.

Why text is kept as lists of pieces: a long answer arrives as thousands of small
deltas, and appending each to a growing string copies the whole text every time.
The pieces are joined once, in ``result``; members a delta creates are added in the
order their first delta came, so the object is the same as appending as they come.
"""

from __future__ import annotations

import json
from typing import Any

from loom_core.proxy.sse_bulk import DONE


class AnthropicStream:
    def __init__(self) -> None:
        self.envelope: dict[str, Any] = {}
        self.usage: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.pieces: dict[int, dict[str, list[Any]]] = {}  # block -> member -> deltas
        self.partial: dict[int, list[str]] = {}  # block -> tool input JSON pieces
        self.finished = False

    def feed_all(self, events: list[Any], start: int = 0) -> int:
        """Text deltas, most of a stream, are folded here without a call each."""
        blocks, pieces = self.blocks, self.pieces
        for i in range(start, len(events)):
            ev = events[i]
            if not isinstance(ev, dict):
                continue
            if ev.get("type") == "content_block_delta" and ev.get("index") in blocks:
                delta = ev.get("delta") or {}
                if delta.get("type") == "text_delta":
                    text, members = delta.get("text") or "", pieces[ev["index"]]
                    if "text" in members:
                        members["text"].append(text)
                    else:
                        members["text"] = [text]
                else:
                    self._delta(ev["index"], delta)
            elif self.feed(ev):
                return i
        return -1

    def feed(self, ev: dict[str, Any]) -> bool:
        kind = ev.get("type")
        if kind == "content_block_delta" and ev.get("index") in self.blocks:
            self._delta(ev["index"], ev.get("delta") or {})  # the common case first
        elif kind == "message_start":
            message = ev.get("message") or {}
            self.envelope = {k: v for k, v in message.items() if k not in ("content", "usage")}
            self.usage.update(message.get("usage") or {})
        elif kind == "content_block_start" and isinstance(ev.get("index"), int):
            self.blocks[ev["index"]] = ev.get("content_block") or {}
            self.pieces[ev["index"]], self.partial[ev["index"]] = {}, []
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
        kind = delta.get("type")
        if kind == "text_delta":
            self._add(index, "text", delta.get("text") or "")
        elif kind == "input_json_delta":
            self.partial[index].append(delta.get("partial_json") or "")
        elif kind == "thinking_delta":
            self._add(index, "thinking", delta.get("thinking") or "")
        elif kind == "signature_delta":
            self._add(index, "signature", delta.get("signature") or "")
        elif kind == "citations_delta" and delta.get("citation") is not None:
            self._add(index, "citations", delta["citation"])

    def _add(self, index: int, member: str, piece: Any) -> None:
        pieces = self.pieces[index].get(member)
        if pieces is None:
            self.pieces[index][member] = [piece]
        else:
            pieces.append(piece)

    def _merge(self, index: int) -> dict[str, Any]:
        """The block with its deltas applied (once: the pieces are used up)."""
        block = self.blocks[index]
        for member, pieces in self.pieces.get(index, {}).items():
            if member == "citations":
                block.setdefault("citations", []).extend(pieces)
            else:
                block[member] = block.get(member, "") + "".join(pieces)
        self.pieces[index] = {}
        partial = "".join(self.partial.get(index, ()))
        if partial:
            try:
                block["input"] = json.loads(partial)
            except ValueError:
                block["input"] = {}
        return block

    def result(self) -> dict[str, Any]:
        content = [self._merge(i) for i in sorted(self.blocks)]
        return {
            **self.envelope,
            "content": content,
            "stop_reason": self.envelope.get("stop_reason"),
            "usage": self.usage,
        }


class ChatStream:
    def __init__(self) -> None:
        self.head: dict[str, Any] = {}
        self.choices: dict[int, dict[str, Any]] = {}  # index -> content/refusal pieces, finish
        self.calls: dict[int, dict[int, dict[str, Any]]] = {}  # id, name, argument pieces
        self.usage: dict[str, Any] = {}
        self.finished = False

    def feed_done(self) -> bool:
        self.finished = True
        return True

    def feed_all(self, events: list[Any], start: int = 0) -> int:
        for i in range(start, len(events)):
            ev = events[i]
            if ev is DONE:
                self.feed_done()
                return i
            if isinstance(ev, dict):
                self.feed(ev)
        return -1

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
        slot = self.choices.setdefault(index, {"content": [], "refusal": [], "finish": None})
        slot["finish"] = choice.get("finish_reason") or slot["finish"]
        if choice.get("finish_reason"):
            self.finished = True  # a server that omits [DONE] still ended this choice
        delta = choice.get("delta") or {}
        slot["content"].append(delta.get("content") or "")
        slot["refusal"].append(delta.get("refusal") or "")
        calls = self.calls.setdefault(index, {})
        for tc in delta.get("tool_calls") or []:
            if not isinstance(tc, dict):
                continue
            call = calls.setdefault(tc.get("index", 0), {"id": "", "name": "", "args": []})
            call["id"] = tc.get("id") or call["id"]
            fn = tc.get("function") or {}
            call["name"] = fn.get("name") or call["name"]
            call["args"].append(fn.get("arguments") or "")

    def result(self) -> dict[str, Any]:
        choices = []
        for index in sorted(self.choices) or [0]:
            slot = self.choices.get(index) or {"content": [], "refusal": [], "finish": None}
            content, refusal = "".join(slot["content"]), "".join(slot["refusal"])
            message: dict[str, Any] = {"role": "assistant", "content": content or None}
            if refusal:
                message["refusal"] = refusal
            calls = self.calls.get(index) or {}
            if calls:
                message["tool_calls"] = [
                    {
                        "id": calls[i]["id"],
                        "type": "function",
                        "function": {
                            "name": calls[i]["name"],
                            "arguments": "".join(calls[i]["args"]),
                        },
                    }
                    for i in sorted(calls)
                ]
            choices.append(
                {"index": index, "message": message, "finish_reason": slot["finish"] or "stop"}
            )
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

    def feed_all(self, events: list[Any], start: int = 0) -> int:
        for i in range(start, len(events)):
            if isinstance(events[i], dict) and self.feed(events[i]):
                return i
        return -1

    def feed(self, ev: dict[str, Any]) -> bool:
        kind, index = str(ev.get("type") or ""), ev.get("output_index")
        if kind in ("response.created", "response.in_progress", "response.queued"):
            self.snapshot = ev.get("response") or {}
        elif kind in ("response.output_item.added", "response.output_item.done") and isinstance(
            index, int
        ):
            self.items[index] = ev.get("item") or {}
        elif kind == "response.content_part.added" and index in self.items:
            self.items[index].setdefault("content", []).append(ev.get("part") or {})
        elif kind == "response.output_text.delta" and index in self.items:
            parts = self.items[index].get("content") or []
            j = ev.get("content_index", 0)
            if isinstance(j, int) and 0 <= j < len(parts):
                parts[j]["text"] = (parts[j].get("text") or "") + (ev.get("delta") or "")
        elif kind == "response.function_call_arguments.delta" and index in self.items:
            item = self.items[index]
            item["arguments"] = (item.get("arguments") or "") + (ev.get("delta") or "")
        elif kind in ("response.completed", "response.incomplete"):
            self.final = ev.get("response") or {}
            self.finished = True
            return True
        return kind in ("response.failed", "error")

    def result(self) -> dict[str, Any]:
        out = self.final if self.final is not None else dict(self.snapshot)
        if not isinstance(out.get("output"), list) or (not out["output"] and self.items):
            out["output"] = [self.items[i] for i in sorted(self.items)]
        return out
