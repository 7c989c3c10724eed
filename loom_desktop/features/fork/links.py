"""Parent ⟷ branch links: a branch's ``fork`` member, its title, and the branches beside a parent.

Why read only the end of a file: a branch writes its ``fork`` member last (before the
checksum), and a parent's directory may hold big traces; reading a bounded tail of
each candidate finds every branch without parsing whole runs. Qt-free, so the scan
runs in a worker and is tested without a window.

Steps are named by their seq, as everywhere: a branch "at step 14" forked at the
parent's step 14, and its own step 14 is the edit. :func:`row_of_seq` finds a step's
row in a loaded tab (user prompts are rows too).

A heal's winner is a branch too (its trace has a ``fork`` member and says ``healed_by``):
it is found in the heal's folder (``<stem>.heal``) and named as a heal, never with the
same words as a fork made by hand at the same step.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from glob import escape as glob_escape
from pathlib import Path
from typing import Any, TypeGuard

from loom_core.fork.edits import Edit
from loom_core.runs_dir import runs_dir, stem_of
from loom_core.views.steps import step_of_seq

TAIL_BYTES = 512 * 1024  # a branch's provenance (edit, request settings) fits in this
MAX_CANDIDATES = 200  # traces looked at beside one parent (newest first)
_HEALED_BY = re.compile(r'"healed_by"\s*:\s*"((?:[^"\\]|\\.)*)"')

STATUS_TEXT = {
    "running": "running",
    "done": "done",
    "needs_tool_result": "waiting for a tool result",
    "max_turns": "stopped: max turns reached",
    "budget": "stopped: token budget reached",
    "cancelled": "cancelled",
    "error": "stopped by a provider error",
    "stopped": "stopped here",
    "timeout": "stopped: the agent timed out",
}


@dataclass
class BranchInfo:
    """One branch of a parent, as listed in the parent's Branches menu."""

    path: str
    seq: int  # the fork step's seq in the parent's log
    status: str
    edit: str  # the edit in words
    mode: str  # "model" | "agent"
    created_at: str = ""
    healed_by: str = ""  # the repair that won, when the branch is a heal's winner


def same_file(a: str | Path, b: str | Path) -> bool:
    """Paths naming the same file (a branch stores its parent's absolute path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def is_provenance(value: Any) -> TypeGuard[dict[str, Any]]:
    parent = value.get("parent") if isinstance(value, dict) else None
    return isinstance(parent, dict) and isinstance(parent.get("path"), str)


def _tail(path: str | Path, tail: int = TAIL_BYTES) -> str | None:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - tail))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return None


def healed_by(path: str | Path) -> str:
    """The repair that won, if the trace at ``path`` is a heal's winner (else "")."""
    text = _tail(path, 4096) or ""  # written last, before the checksum
    found = _HEALED_BY.search(text)
    if found is None:
        return ""
    try:
        return str(json.loads(f'"{found.group(1)}"'))
    except ValueError:
        return found.group(1)


def fork_member(path: str | Path, tail: int = TAIL_BYTES) -> dict[str, Any] | None:
    """The ``fork`` member of the trace at ``path`` (read from its tail), or None."""
    text = _tail(path, tail)
    if text is None:
        return None
    decoder = json.JSONDecoder()
    end = len(text)
    while (at := text.rfind('"fork"', 0, end)) >= 0:
        end = at
        if at and text[at - 1] == "\\":
            continue  # inside a string
        brace = text.find("{", at)
        colon = text.find(":", at)
        if (
            brace < 0
            or colon < 0
            or text[at + 6 : colon].strip()
            or text[colon + 1 : brace].strip()
        ):
            continue
        try:
            value, _ = decoder.raw_decode(text, brace)
        except ValueError:
            continue
        if is_provenance(value):
            return value
    return None


def edit_text(prov: dict[str, Any]) -> str:
    """The branch's edit in words (``Edit.describe``), tolerant of odd provenance."""
    try:
        return Edit.from_dict(dict(prov.get("edit") or {})).describe()
    except (TypeError, ValueError):
        return "edited"


def status_text(status: str) -> str:
    """A branch status in words (an unknown one as it is)."""
    return STATUS_TEXT.get(status, status or "unknown")


def branch_title(parent: str | Path, seq: int, edit: str = "", healed: str = "") -> str:
    """The tab title of a branch forked at the parent's step ``seq``: a heal's winner names
    its repair, a fork its edit, so two branches of one step never read the same."""
    if healed:
        return f"heal of {Path(parent).name} at step {seq} · {healed}"
    return f"fork of {Path(parent).name} at step {seq}" + (f" · {edit}" if edit else "")


def _candidates(parent: str | Path) -> list[tuple[Path, bool]]:
    """(trace, found in a heal's folder) beside ``parent`` and in the runs folder."""
    stem = stem_of(parent)  # the heal's folder is named as heal names it
    out: list[tuple[Path, bool]] = []
    for folder in dict.fromkeys((Path(parent).resolve().parent, runs_dir().resolve())):
        try:
            out += [(p, False) for p in folder.glob("*.loom.json") if not same_file(p, parent)]
            out += [(p, True) for p in folder.glob(f"{glob_escape(stem)}.heal*/*.loom.json")]
        except OSError:
            continue
    return out


def find_branches(parent: str | Path, limit: int = MAX_CANDIDATES) -> list[BranchInfo]:
    """Traces whose ``fork.parent.path`` is ``parent``, newest first: beside it and in the
    per-user runs folder (where the app and the CLI put branches unless told otherwise),
    and the winners of its heals (a heal's other attempts are not kept as branches)."""
    candidates = _candidates(parent)
    candidates.sort(key=lambda c: _mtime(c[0]), reverse=True)
    found = []
    for path, in_heal in candidates[:limit]:
        won = healed_by(path)
        if in_heal and not won:
            continue
        prov = fork_member(path)
        if prov is None or not same_file(prov["parent"]["path"], parent):
            continue
        seq = prov.get("step")
        found.append(
            BranchInfo(
                str(path),
                seq if isinstance(seq, int) else -1,
                str(prov.get("status") or ""),
                edit_text(prov),
                str(prov.get("mode") or "model"),
                str(prov.get("created_at") or ""),
                won,
            )
        )
    return found


def row_of_seq(view: Any, seq: int) -> int:
    """The row of step ``seq`` in a loaded view (0 when it has no such step)."""
    tl = view.session.timeline
    row = step_of_seq(tl, seq) if tl is not None else None
    return 0 if row is None else row


def edit_row(view: Any, prov: dict[str, Any]) -> int:
    """The row of a loaded branch's edit (the prefix is the parent's, so the edit effect
    sits where the parent's fork step was); the fork step's row when it has none."""
    tl = view.session.timeline
    at = prov.get("prefix") if prov.get("mode", "model") == "model" else prov.get("edit_seq")
    if tl is not None and isinstance(at, int) and 0 <= at < len(tl.step_of_effect):
        return int(tl.step_of_effect[at])
    return row_of_seq(view, int(prov.get("step") or 0))


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
