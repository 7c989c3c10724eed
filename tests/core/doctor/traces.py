"""Hand-built traces for the checkup tests.

Why hand-built: the findings are about exact thresholds (200 tokens, 25%,
9/10 Jaccard, 4,000 input tokens, 3 repeats) and about where results sit in
the context; building the log effect by effect states each case plainly.
The files are stamped and saved like any harness trace, so loom-harness's own
``Run.load`` reads them without a warning and can serve as the oracle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loom_core.formats.save import save_dict
from loom_core.formats.structs import PROXY_ORDER


class Trace:
    """A harness-style (or, with ``proxy=True``, proxy-style) trace built step by step."""

    def __init__(self, *episodes: str, proxy: bool = False) -> None:
        self.episodes = list(episodes) or ["go"]
        self.proxy = proxy
        self.log: list[dict[str, Any]] = []
        self._ids = 0

    @property
    def next_seq(self) -> int:
        return len(self.log)

    def effect(
        self, kind: str, result: Any, depth: int = 0, meta: dict[str, Any] | None = None
    ) -> int:
        entry: dict[str, Any] = {
            "seq": len(self.log),
            "kind": kind,
            "key": "0" * 12,
            "result": result,
            "depth": depth,
        }
        if meta:
            entry["meta"] = meta
        self.log.append(entry)
        return entry["seq"]

    def call(self, name: str, **args: Any) -> dict[str, Any]:
        self._ids += 1
        return {"id": f"call_{self._ids}", "name": name, "input": args}

    def model(
        self,
        text: str = "",
        calls: list[dict[str, Any]] | tuple = (),
        t_in: int = 0,
        t_out: int = 0,
        depth: int = 0,
    ) -> int:
        usage = {"input_tokens": t_in, "output_tokens": t_out} if t_in or t_out else {}
        meta = {"sys_hash": "s" * 12, "msgs": 1} if self.proxy else {"agent": "a"}
        return self.effect(
            "model",
            {
                "text": text,
                "tool_calls": list(calls),
                "stop_reason": "tool_use" if calls else "end_turn",
                "usage": usage,
            },
            depth,
            meta,
        )

    def result(self, call: dict[str, Any], value: Any, depth: int = 0) -> int:
        """The result of ``call`` (pairs by id in proxy traces, by name in harness ones)."""
        meta = {"tuid": call["id"]} if self.proxy else {"agent": "a"}
        return self.effect(f"tool:{call['name']}", value, depth, meta)

    def use(self, name: str, value: Any, text: str = "", t_in: int = 0, **args: Any) -> int:
        """A model call making one tool call, then its result; returns the result's seq."""
        c = self.call(name, **args)
        self.model(text, [c], t_in=t_in)
        return self.result(c, value)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"version": 2}
        if self.proxy:
            data["recorded_via"] = "proxy"
        data.update(
            {
                "model": "m",
                "system": "",
                "prompt": self.episodes[0],
                "episodes": self.episodes,
                "output": "",
                "truncated": False,
                "paused": False,
                "pending": None,
                "pending_depth": 0,
                "stop_reason": "",
                "log": self.log,
            }
        )
        if self.proxy:
            data.update({"systems": {}, "wire": [], "shield_events": []})
            order = [k for k in PROXY_ORDER if k in data]
            data = {k: data[k] for k in order}
        return data

    def save(self, path: Path) -> Path:
        save_dict(self.to_dict(), path)
        return path


WORDS = [f"word{chr(97 + i)}{chr(97 + j)}" for i in range(26) for j in range(26)]  # 676 distinct
