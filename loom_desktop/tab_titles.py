"""Tab titles that tell files apart: ``run.loom.json · a`` and ``run.loom.json · b``.

Like editors do, a file's tab shows its name, plus as much of its folder path as
it takes to differ from the other open files of the same name; the tooltip is
the full path. Only titles this module gave are changed: a tab another feature
renamed (a branch being run) keeps its title, and a prefix such as a live dot is
kept.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import PurePath
from typing import Any

SEP = " · "
_PROPERTY = "loom_file_title"  # the title this module last gave the tab's view


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
        text, old = tabs.tabText(index), view.property(_PROPERTY)
        if old is None:  # a new tab: its title is the file name
            old = os.path.basename(view.path)
        if text.endswith(old):
            tabs.setTabText(index, text[: len(text) - len(old)] + title)
            view.setProperty(_PROPERTY, title)
        tabs.setTabToolTip(index, os.path.abspath(view.path))
