"""Tab titles that tell files apart: ``run.loom.json · a`` and ``run.loom.json · b``.

Like editors do, a file's tab shows its name, plus as much of its folder path as
it takes to differ from the other open files of the same name; the tooltip is
the full path. Only titles this module gave are changed: a tab another feature
renamed (a branch being run) keeps its title, and a prefix such as a live dot is
kept.

A file named by an id nobody reads (a Claude Code session's UUID, an OpenTelemetry
trace id from the receiver) is titled by its run instead, once it has loaded: its
producer and first prompt (``Claude Code: fix the login bug``). The live dot ("● ")
stays while the run goes on and goes when it has ended.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import PurePath
from typing import Any

SEP = " · "
LIVE_DOT = "● "
_PROPERTY = "loom_file_title"  # the title this module last gave the tab's view
_RUN_TITLE = "loom_run_title"  # a title from the run itself, for a file named by an id
_OPAQUE = re.compile(  # a UUID, or a hex id of 16 or more digits (trace ids), maybe "-2"
    r"(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,})(?:-\d+)?",
    re.IGNORECASE,
)
_TAG = re.compile(r"</?[A-Za-z][\w-]*>")
_PRODUCERS = {"claude-code": "Claude Code", "otlp": "OTel", "inspect": "Inspect"}
PROMPT_CHARS = 32  # of the first prompt, in a run's title


def distinct_names(paths: list[str]) -> list[str]:
    """A title per path: the file name, plus the shortest parent-folder tail that differs
    from every other path of the same name (the same file twice gets (2), (3)…)."""
    parts = [PurePath(os.path.abspath(p)).parts for p in paths]
    names = [p[-1] if p else "" for p in parts]
    groups: dict[str, list[int]] = defaultdict(list)
    for i, name in enumerate(names):
        groups[name].append(i)
    titles = list(names)
    for members in groups.values():
        distinct = {parts[i] for i in members}
        depth = 0
        while len(distinct) > 1 and len({d[-2 - depth : -1] for d in distinct}) < len(distinct):
            depth += 1
        seen: dict[str, int] = defaultdict(int)
        for i in members:
            folders = "/".join(parts[i][-2 - depth : -1]).replace("//", "/")
            title = f"{names[i]}{SEP}{folders}" if len(distinct) > 1 else names[i]
            seen[title] += 1
            titles[i] = title if seen[title] == 1 else f"{title} ({seen[title]})"
    return titles


def retitle(tabs: Any, views: list[Any]) -> None:
    """Give each view's tab its distinct title and its full path as tooltip."""
    for view, title in zip(views, distinct_names([v.path for v in views]), strict=True):
        index = tabs.indexOf(view)
        if index < 0:
            continue
        title = view.property(_RUN_TITLE) or title
        text, old = tabs.tabText(index), view.property(_PROPERTY)
        if old is None:  # a new tab: its title is the file name
            old = os.path.basename(view.path)
        if text.endswith(old):
            tabs.setTabText(index, text[: len(text) - len(old)] + title)
            view.setProperty(_PROPERTY, title)
        tabs.setTabToolTip(index, os.path.abspath(view.path))


def is_opaque(path: str) -> bool:
    """A file named by an id rather than by words: ``1af7fc5e-….jsonl``, ``4bf92f….otlp.jsonl``."""
    stem = os.path.basename(path).split(".", 1)[0]
    return _OPAQUE.fullmatch(stem) is not None


def run_title(path: str, doc: object) -> str | None:
    """A title from the run for a file named by an id (None: the file name says enough)."""
    if not is_opaque(path):
        return None
    fmt = str(getattr(doc, "format", ""))
    producer = _PRODUCERS.get(fmt, fmt or "run")
    episodes = getattr(doc, "episodes", None) or []
    # markup a producer wraps a prompt in (Claude Code's <command-message>…) is no words
    first = " ".join(_TAG.sub(" ", str(episodes[0])).split()) if episodes else ""
    if not first:
        return f"{producer} {os.path.basename(path).split('.', 1)[0][:8]}…"
    return (
        f"{producer}: {first[: PROMPT_CHARS - 1]}…"
        if len(first) > PROMPT_CHARS
        else (f"{producer}: {first}")
    )


def name_run(tabs: Any, view: Any) -> None:
    """Title ``view``'s tab by its run when its file is named by an id (once loaded)."""
    if view.property(_RUN_TITLE) or view.doc is None:
        return
    title = run_title(view.path, view.doc)
    if title is not None:
        view.setProperty(_RUN_TITLE, title)
        retitle(tabs, [view])


def show_live(tabs: Any, view: Any, live: bool) -> None:
    """The live dot before the title while the run goes on; none once it has ended."""
    index = tabs.indexOf(view)
    if index < 0:
        return
    text = tabs.tabText(index)
    bare = text.removeprefix(LIVE_DOT)
    wanted = LIVE_DOT + bare if live else bare
    if wanted != text:
        tabs.setTabText(index, wanted)
