"""The Claude Code sessions on this machine: where they are, newest first.

Where: ``<config dir>/projects/<project>/<session id>.jsonl`` ([hooks], see
:mod:`.claude_records`), the config dir being ``$CLAUDE_CONFIG_DIR`` when set (Claude
Code's settings documentation: the variable moves its configuration and data folder)
and ``~/.claude`` otherwise. Sub-agent files (``<session>/subagents/*.jsonl``) are part of
their session, not sessions of their own, so only files directly in a project folder count.

Why only the first bytes of each file are read: a machine can hold thousands of sessions
of many megabytes; the list needs the first prompt and the project's folder, which are
near the top. The caller runs this off the GUI thread and may cancel it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from loom_core.formats.claude_records import parse_lines, prompt_text, s

HEAD_BYTES = 256 * 1024  # read this much of each file for its first prompt


@dataclass(frozen=True)
class SessionInfo:
    """One session file, for a list to show."""

    path: str
    project: str  # the session's working directory, else its project folder's name
    first_prompt: str
    modified: float  # epoch seconds
    size: int


def claude_config_dir() -> Path:
    """Claude Code's configuration folder (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``)."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def list_sessions(
    root: Path | None = None, cancelled: Callable[[], bool] = lambda: False
) -> list[SessionInfo]:
    """Every session transcript under ``root`` (default: the config folder), newest first."""
    projects = (root or claude_config_dir()) / "projects"
    found: list[tuple[float, Path, int]] = []
    try:
        folders = [e for e in os.scandir(projects) if e.is_dir()]
    except OSError:
        return []
    for folder in folders:
        try:
            for entry in os.scandir(folder.path):
                if entry.name.endswith(".jsonl") and entry.is_file():
                    st = entry.stat()
                    found.append((st.st_mtime, Path(entry.path), st.st_size))
        except OSError:
            continue
    found.sort(key=lambda item: item[0], reverse=True)
    out = []
    for mtime, path, size in found:
        if cancelled():
            break
        project, prompt = _head_facts(path)
        out.append(SessionInfo(str(path), project, prompt, mtime, size))
    return out


def _head_facts(path: Path) -> tuple[str, str]:
    """(working directory or project folder name, first human prompt) from the file's head:
    16 KiB first, twice as much each time neither is found yet, up to :data:`HEAD_BYTES`."""
    cwd, prompt, size = "", "", 16 * 1024
    try:
        with open(path, "rb") as fh:
            while True:
                fh.seek(0)
                head = fh.read(size)
                cwd, prompt = _facts_in(head)
                if (cwd and prompt) or len(head) < size or size >= HEAD_BYTES:
                    break
                size *= 2
    except OSError:
        pass
    return cwd or path.parent.name, " ".join(prompt.split())[:200]


def _facts_in(head: bytes) -> tuple[str, str]:
    cwd, prompt = "", ""
    for _n, rec in parse_lines(head[: head.rfind(b"\n") + 1]).records:
        cwd = cwd or s(rec.get("cwd"))
        if not prompt and rec.get("type") == "user" and rec.get("isSidechain") is not True:
            prompt = prompt_text(rec)
        if cwd and prompt:
            break
    return cwd, prompt
