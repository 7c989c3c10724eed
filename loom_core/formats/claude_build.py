"""Claude Code records → loom effects (facts and their sources: :mod:`.claude_records`).

How a transcript becomes a run:

* Every assistant response is ONE model call, however many lines it was written as: lines
  sharing ``message.id`` are merged ([turns]) at the place of the first, blocks in order,
  usage counted once (:func:`~.claude_records.merged_usage`).
* Each ``tool_result`` block of a user entry is one tool effect, where the result arrived;
  its name comes from the ``tool_use`` block with the same id (``is_error`` results read
  ``ERROR: …``, loom's convention for a failed tool).
* Human prompts become episodes: the texts typed since the previous model call, joined,
  when that call ended its turn (a message typed while the agent works is kept with the
  next call's source records instead, so episodes stay aligned with turns).
* Sub-agents are depth 1: entries with ``isSidechain`` in the session file (older versions)
  where they were written; a sub-agent's own file (newer versions, [subagents]) where the
  result of the Task/Agent call that names its ``agentId`` arrived. Like loom-harness's own
  sub-agents, such a call then has no tool effect: its sub-agent's steps stand for it.
* Compaction is a ``compact`` step at its ``compact_boundary`` entry, with the summary
  and the usage of the call that made it (:mod:`.claude_compact`). The summary entry
  after it and anything else that is not a step travel with the next effect's source
  records; ``summary`` entries title the session; unknown entry types are kept raw.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from loom_core.formats.claude_compact import Compaction, is_boundary, summary_entries
from loom_core.formats.claude_records import (
    CONVERSATION,
    KNOWN_TYPES,
    block_text,
    blocks,
    d,
    merged_usage,
    prompt_text,
    s,
)
from loom_core.formats.foreign import RunBuilder

_AGENT_ID = re.compile(r"agent_?[iI]d:\s*([\w@.\-]+)")
SUBAGENT_TOOLS = ("Task", "Agent")  # [subagents] the tool that starts a sub-agent


class Unresumable(Exception):
    """A session file's later lines change a step an earlier :meth:`Builder.add_file` of
    the same file already made (a response continued after the fold stopped): the fold
    must start again from the file's first line (:mod:`.claude_resume`)."""


@dataclass
class _Group:
    """The lines of one assistant response (one model call)."""

    fragments: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Builder:
    """Folds one transcript's records (and its sub-agents' files) into a :class:`RunBuilder`."""

    run: RunBuilder = field(default_factory=RunBuilder)
    subagents: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # agentId -> records
    compactions: dict[str, Compaction] = field(default_factory=dict)  # boundary uuid -> call
    records: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    summaries: list[dict[str, Any]] = field(default_factory=list)
    unknown: list[dict[str, Any]] = field(default_factory=list)
    other: list[dict[str, Any]] = field(default_factory=list)
    _names: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    _notes: list[dict[str, Any]] = field(default_factory=list)  # source records of the next step
    _prompts: list[str] = field(default_factory=list)
    _ended: bool | None = None  # did the last depth-0 model call end its turn?
    _used: set[str] = field(default_factory=set)  # sub-agent files placed
    _issued: dict[str, int] = field(default_factory=dict)  # tool call id -> its model call
    _last_deep: int = -1  # the last sub-agent effect
    _task_prompts: dict[str, str] = field(default_factory=dict)  # Task prompt -> agent type
    _chains: dict[str, str] = field(default_factory=dict)  # sidechain entry uuid -> agent
    _summary_at: dict[str, str] = field(default_factory=dict)  # boundary uuid -> summary
    _seen: set[str] = field(default_factory=set)  # the session file's entry uuids folded
    _responses: set[str] = field(default_factory=set)  # its responses' keys (see _events)

    def copy(self) -> Builder:
        """A builder that goes on from this one's state without changing it (a live tab
        folds a session's last lines on a copy; :mod:`.claude_resume`). Containers are
        copied, not the records in them: nothing folded is changed in place."""
        run = dataclasses.replace(
            self.run, episodes=list(self.run.episodes), log=list(self.run.log),
            extra=dict(self.run.extra),
        )  # fmt: skip
        copied: dict[str, Any] = {
            f.name: type(value)(value)
            for f in dataclasses.fields(self)
            if isinstance(value := getattr(self, f.name), list | dict | set)
        }
        return dataclasses.replace(self, run=run, **copied)

    def add_file(self, recs: list[dict[str, Any]], depth: int = 0, agent: str = "") -> None:
        """Emit one file's records, in order; ``depth`` 1 for a sub-agent's own file."""
        if depth == 0 and "started" not in self.run.extra:  # the Runs page's "When"
            stamps = (r.get("timestamp") for r in recs)
            self.run.extra["started"] = next((t for t in stamps if isinstance(t, str)), None)
        if depth == 0:
            self._summary_at.update(summary_entries(recs))
        for event in _events(recs, self, depth == 0):
            kind, rec = event[0], event[1]
            level, who = depth, agent
            if rec.get("isSidechain") is True and depth == 0:  # older versions: in this file
                level, who = 1, self._sidechain_agent(rec, event)
            if kind == "model":
                self._model(event[2], level, who)
            elif kind == "tool":
                self._tool(rec, event[2], level, who)
            elif kind == "prompt" and level == 0:
                self._prompts.append(event[2])
                self._notes.append(rec)
            elif level == 0 and is_boundary(rec):
                self._compact(rec)
            else:
                self._notes.append(rec)

    def _sidechain_agent(self, rec: dict[str, Any], event: tuple[Any, ...]) -> str:
        """Who an in-file sidechain entry belongs to: the Task call whose prompt started its
        chain (its ``subagent_type``), inherited along ``parentUuid``."""
        parent = self._chains.get(s(rec.get("parentUuid")))
        if parent is None and event[0] == "prompt":
            parent = self._task_prompts.get(event[2], "sub-agent")
        label = parent or "sub-agent"
        if s(rec.get("uuid")):
            self._chains[s(rec.get("uuid"))] = label
        if event[0] == "model":  # the response's later lines hang off its first line
            for frag in event[2].fragments:
                self._chains[s(frag.get("uuid"))] = label
        return label

    def finish(self) -> None:
        """Sub-agent files no Task result named yet (still running), then trailing notes."""
        for agent_id, recs in self.subagents.items():
            if agent_id not in self._used:
                self._used.add(agent_id)
                self.add_file(recs, 1, f"agent {agent_id}")
        if self._prompts and self._ended is not False:
            self.run.episodes.append("\n\n".join(self._prompts))
        self._prompts = []
        self.other.extend(self._notes)
        if self._notes and self.records:  # written after the last step: shown with it
            self.records[max(self.records)] = self.records[max(self.records)] + self._notes
        self._notes = []

    # -- steps -----------------------------------------------------------------------------

    def _model(self, group: _Group, depth: int, agent: str) -> None:
        frags = group.fragments
        message = d(frags[0].get("message"))
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        stop = ""
        for rec in frags:
            stop = s(d(rec.get("message")).get("stop_reason")) or stop
            for block in blocks(rec.get("message")):
                kind = block.get("type")
                if kind == "text" and s(block.get("text")):
                    texts.append(s(block.get("text")))
                elif kind == "tool_use" and all(c["id"] != s(block.get("id")) for c in calls):
                    calls.append(self._call(block))
        if depth == 0:
            self._take_prompts()
        model = s(message.get("model"))
        if model and not self.run.model and depth == 0 and not model.startswith("<"):
            self.run.model = model  # "<synthetic>": Claude Code's own error messages
        meta: dict[str, Any] = {"model": model} if model else {}
        if agent:
            meta["agent"] = agent
        stop = stop if stop and not (calls and stop == "end_turn") else ""
        seq = self.run.add_model(
            "\n".join(texts), calls, merged_usage(frags), depth=depth, stop_reason=stop, meta=meta
        )
        self._keep(seq, frags)
        self._issued.update((c["id"], seq) for c in calls)
        if depth == 0:
            self._ended = not calls
        else:
            self._last_deep = seq

    def _compact(self, boundary: dict[str, Any]) -> None:
        """A compaction, where Claude Code replaced the context: the summary it continued
        from, and the call that wrote it when its file is there (its usage counted)."""
        uid = s(boundary.get("uuid"))
        call = self.compactions.get(uid)
        summary = (
            call.summary if call is not None and call.summary else self._summary_at.get(uid, "")
        )
        meta = {"model": call.model} if call is not None and call.model else {}
        usage = call.usage if call is not None and call.usage else None
        seq = self.run.add_call_step("compact", {"uuid": uid}, summary, usage, meta=meta)
        self._keep(seq, [boundary, *(call.records if call is not None else [])])

    def _call(self, block: dict[str, Any]) -> dict[str, Any]:
        """A ``tool_use`` block as a loom tool call; its name is remembered for the result,
        and a Task/Agent call's prompt for the sidechain it starts."""
        call_id, name, args = s(block.get("id")), s(block.get("name")), d(block.get("input"))
        self._names[call_id] = (name, args)
        if name in SUBAGENT_TOOLS:
            self._task_prompts[s(args.get("prompt"))] = s(args.get("subagent_type")) or "sub-agent"
        return {"id": call_id, "name": name, "input": args}

    def _take_prompts(self) -> None:
        if self._prompts and self._ended is not False:
            self.run.episodes.append("\n\n".join(self._prompts))
        self._prompts = []

    def _tool(self, rec: dict[str, Any], block: dict[str, Any], depth: int, agent: str) -> None:
        call_id = s(block.get("tool_use_id"))
        name, call_input = self._names.get(call_id, ("", {}))
        if name in SUBAGENT_TOOLS and depth == 0:
            self._place_subagent(rec, block, call_input)
            if self._last_deep > self._issued.get(call_id, len(self.run.log)):
                # a delegation whose sub-agent steps were read: they stand for the call, as
                # loom-harness records a sub-agent (no tool effect; the child's last answer
                # is the call's result); the result entry goes with the next step's records
                self._notes.append(rec)
                return
        text = block_text(block.get("content"))
        result = f"ERROR: {text}" if block.get("is_error") is True else text
        meta: dict[str, Any] = {"tuid": call_id} if call_id else {}
        if agent:
            meta["agent"] = agent
        seq = self.run.add_tool(name or "tool", call_id, result, depth=depth, meta=meta)
        self._keep(seq, [rec])
        if depth:
            self._last_deep = seq

    def _place_subagent(
        self, rec: dict[str, Any], block: dict[str, Any], call_input: dict[str, Any]
    ) -> None:
        """The sub-agent's own file goes just before its Task call's result."""
        result = d(rec.get("toolUseResult"))
        agent_id = s(result.get("agentId"))
        if not agent_id:
            found = _AGENT_ID.search(block_text(block.get("content")))
            agent_id = found.group(1) if found else ""
        if agent_id in self.subagents and agent_id not in self._used:
            self._used.add(agent_id)
            label = s(call_input.get("subagent_type")) or s(call_input.get("description"))
            self.add_file(self.subagents[agent_id], 1, label or f"agent {agent_id}")

    def _keep(self, seq: int, recs: list[dict[str, Any]]) -> None:
        self.records[seq] = self._notes + recs
        self._notes = []


def _events(recs: list[dict[str, Any]], out: Builder, session: bool) -> list[tuple[Any, ...]]:
    """(kind, record, payload) in file order; an assistant response's later lines join
    the group of its first line. The ``session`` file may be folded in parts (a live
    tab's appended lines): its entries seen and responses met are kept in ``out``, and a
    line continuing a response an earlier part made raises :class:`Unresumable`."""
    events: list[tuple[Any, ...]] = []
    groups: dict[str, _Group] = {}
    seen: set[str] = out._seen if session else set()
    earlier: set[str] = out._responses if session else set()
    for rec in recs:
        uid, kind = s(rec.get("uuid")), rec.get("type")
        if uid and uid in seen:
            continue  # the same entry twice (a resumed session's copy): once is enough
        seen.add(uid) if uid else None
        if kind == "assistant":
            key = response_key(rec)
            group = groups.get(key)
            if group is None:
                if key in earlier:
                    raise Unresumable(key)
                group = groups[key] = _Group()
                events.append(("model", rec, group))
            group.fragments.append(rec)
        elif kind == "user":
            events.extend(_user_events(rec))
        elif kind == "summary":
            out.summaries.append(rec)
        elif kind in KNOWN_TYPES and kind not in CONVERSATION:
            events.append(("note", rec))
        else:  # kept raw, and shown: it travels with the next step's source records
            out.unknown.append(rec)
            events.append(("note", rec))
    earlier.update(groups) if session else None
    return events


def response_key(rec: dict[str, Any]) -> str:
    """Which response an assistant line is part of: one per ``message.id`` within one
    agent (the main chain, or a sub-agent)."""
    msg_id = s(d(rec.get("message")).get("id")) or s(rec.get("uuid")) or str(id(rec))
    return f"{rec.get('isSidechain') is True}/{s(rec.get('agentId'))}/{msg_id}"


def _user_events(rec: dict[str, Any]) -> list[tuple[Any, ...]]:
    results = [b for b in blocks(rec.get("message")) if b.get("type") == "tool_result"]
    if results:
        return [("tool", rec, b) for b in results]
    text = prompt_text(rec)
    return [("prompt", rec, text)] if text else [("note", rec)]
