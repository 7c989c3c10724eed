"""Claude Code transcripts for tests, built from the documented record types.

Claude Code has no producer library (nothing on PyPI writes its transcripts), so these
fixtures are written by hand from the entry types its community documentation describes
(sources listed in ``loom_core/formats/claude_records.py``): user / assistant entries
chained by ``uuid`` / ``parentUuid``, an assistant response split over one line per content
block sharing ``message.id`` (each line repeating ``usage``, the output count growing),
``tool_use`` / ``tool_result`` blocks with ``toolUseResult``, sub-agents both in the
session file (``isSidechain``) and in ``<session>/subagents/agent-<id>.jsonl``,
``summary`` and compaction entries, and metadata entries. :class:`Session` keeps the
facts the producer itself knows (calls, tool calls, usage it wrote) to check against.
"""

from __future__ import annotations

import json
import uuid as uuidlib
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SESSION_ID = "0b3f7c9e-5a7d-4c1e-9f2a-1d2e3f4a5b6c"
MODEL = "claude-sonnet-4-5-20250929"


@dataclass
class Session:
    """Writes a transcript entry by entry and counts what it wrote."""

    session_id: str = SESSION_ID
    lines: list[dict[str, Any]] = field(default_factory=list)
    parent: str | None = None
    model_calls: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    sidechain: bool = False
    agent_id: str = ""
    msg_prefix: str = ""
    _n: int = 0

    def _base(self, kind: str) -> dict[str, Any]:
        self._n += 1
        uid = str(uuidlib.UUID(int=self._n + (zlib.crc32(self.agent_id.encode()) & 0xFFFF) * 10**6))
        rec: dict[str, Any] = {
            "parentUuid": self.parent,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": "/home/dev/project",
            "sessionId": self.session_id,
            "version": "2.0.14",
            "gitBranch": "main",
            "type": kind,
            "uuid": uid,
            "timestamp": f"2026-11-30T10:{self._n // 60:02d}:{self._n % 60:02d}.000Z",
        }
        if self.agent_id:
            rec["agentId"] = self.agent_id
        self.parent = uid
        return rec

    def prompt(self, text: str, **extra: Any) -> dict[str, Any]:
        rec = self._base("user")
        rec["message"] = {"role": "user", "content": text}
        rec.update(extra)
        self.lines.append(rec)
        return rec

    def reply(
        self,
        blocks: list[dict[str, Any]],
        usage: tuple[int, int, int, int] = (10, 5, 0, 0),
        model: str = MODEL,
    ) -> list[dict[str, Any]]:
        """One response streamed as one line per block (same message.id, usage repeated)."""
        self.model_calls += 1
        msg_id = f"msg_{self.msg_prefix}{self.agent_id}{self.model_calls:04d}"
        inp, out, read, write = usage
        self.input_tokens += inp
        self.output_tokens += out
        self.cache_read += read
        self.cache_write += write
        written = []
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            rec = self._base("assistant")
            rec["requestId"] = f"req_{msg_id}"
            rec["message"] = {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [block],
                "stop_reason": None if not last else _stop(blocks),
                "stop_sequence": None,
                "usage": {
                    "input_tokens": inp,
                    "cache_creation_input_tokens": write,
                    "cache_read_input_tokens": read,
                    "output_tokens": out if last else 1,  # grows while streaming
                    "service_tier": "standard",
                },
            }
            if block.get("type") == "tool_use":
                self.tool_calls += 1
            written.append(rec)
            self.lines.append(rec)
        return written

    def result(
        self, tool_id: str, text: str, is_error: bool = False, tool_result: Any = None
    ) -> dict[str, Any]:
        rec = self._base("user")
        rec["message"] = {
            "role": "user",
            "content": [
                {
                    "tool_use_id": tool_id,
                    "type": "tool_result",
                    "content": text,
                    "is_error": is_error,
                }
            ],
        }
        rec["toolUseResult"] = tool_result if tool_result is not None else {"stdout": text}
        self.lines.append(rec)
        return rec

    def raw(self, rec: dict[str, Any]) -> dict[str, Any]:
        self.lines.append(rec)
        return rec

    def data(self) -> bytes:
        return b"".join(json.dumps(r).encode() + b"\n" for r in self.lines)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.data())
        return path


def _stop(blocks: list[dict[str, Any]]) -> str:
    return "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def thinking(t: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": t, "signature": "sig"}


def tool_use(tool_id: str, name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": inp}


def full_session(root: Path) -> tuple[Path, Session, Session]:
    """A session with everything the reader must handle; returns (path, main, sub-agent).

    Two prompts; a streamed turn (thinking + text + two tool_use lines); a failed tool; an
    in-file sidechain sub-agent (older versions) under a Task call; a sub-agent in its own
    file (newer versions) under an Agent call; compaction; summary; metadata and an
    unknown entry type.
    """
    project = root / "-home-dev-project"
    main = Session()
    main.raw({"type": "permission-mode", "permissionMode": "default", "sessionId": SESSION_ID})
    main.prompt("List the files and read the README")
    main.reply(
        [
            thinking("I should look around."),
            text("Let me look."),
            tool_use("toolu_01", "Bash", command="ls"),
            tool_use("toolu_02", "Read", file_path="/home/dev/project/README.md"),
        ],
        usage=(120, 40, 1000, 200),
    )
    main.result("toolu_01", "README.md\nsrc")
    main.result("toolu_02", "no such file", is_error=True)
    main.reply([text("The README is missing.")], usage=(150, 12, 1100, 0))
    main.prompt("Explore src with a sub-agent")
    main.reply([tool_use("toolu_03", "Task", subagent_type="Explore", prompt="map src")])
    side = Session(
        parent=None, sidechain=True, msg_prefix="side"
    )  # older versions: in the same file
    side._n = 500
    side.prompt("map src")
    side.reply([tool_use("toolu_s1", "Glob", pattern="src/**")], usage=(30, 8, 0, 0))
    side.result("toolu_s1", "src/a.py")
    side.reply([text("src has a.py")], usage=(40, 6, 0, 0))
    main.lines.extend(side.lines)
    main.result("toolu_03", "src has a.py")
    main.reply([tool_use("toolu_04", "Agent", subagent_type="general-purpose", prompt="test")])
    sub = Session(sidechain=True, agent_id="a1b2c3d")  # newer versions: its own file
    sub.prompt("test")
    sub.reply([tool_use("toolu_x1", "Bash", command="pytest")], usage=(50, 9, 0, 0))
    sub.result("toolu_x1", "3 passed")
    sub.reply([text("All 3 tests pass.")], usage=(60, 7, 0, 0))
    sub.write(project / SESSION_ID / "subagents" / "agent-a1b2c3d.jsonl")
    main.result(
        "toolu_04",
        "All 3 tests pass.\nagentId: a1b2c3d",
        tool_result={"status": "completed", "agentId": "a1b2c3d", "totalTokens": 132},
    )
    main.reply([text("Tests pass.")], usage=(200, 4, 0, 0))
    boundary = main._base("system")
    boundary.update(
        subtype="compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "manual", "preTokens": 5000},
        parentUuid=None,
        logicalParentUuid=main.lines[-1]["uuid"],
    )
    main.raw(boundary)
    main.prompt(
        "This session is being continued from a previous conversation…", isCompactSummary=True
    )
    main.prompt("Thanks, summarise")
    main.reply([text("Summary: all good.")], usage=(80, 6, 0, 0))
    main.raw({"type": "summary", "summary": "Explore the project", "leafUuid": main.parent})
    main.raw({"type": "marble-origami-commit", "sessionId": SESSION_ID, "payload": [1, 2]})
    path = main.write(project / f"{SESSION_ID}.jsonl")
    return path, main, sub
