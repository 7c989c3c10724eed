"""Structural diff of two JSON values: tool-call arguments, structured results.

Each change names a JSONPath-like location (``$.args.path``, ``$.items[2]``,
``$["odd key"]``) with the old and new value, so a view can list "what changed"
without showing two blobs side by side. Equality is Python's on decoded JSON
(``1 == 1.0``), the rule loom-harness's diff uses. Lists are aligned on their
items' JSON (an inserted item is one ``added``, not a cascade of ``changed``; an item changed
in place is diffed inside). The number of changes reported is capped: a view needs the first few hundred.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from loom_core.diff.align import align, intern_tokens

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_CHANGES = 500


@dataclass(frozen=True)
class Change:
    """``changed`` (old -> new), ``added`` (new only) or ``removed`` (old only) at ``path``."""

    path: str
    op: str
    old: Any = None
    new: Any = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "op": self.op}
        if self.op != "added":
            out["old"] = self.old
        if self.op != "removed":
            out["new"] = self.new
        return out


def key_path(path: str, key: str) -> str:
    """``path.key`` for identifier-like keys, ``path["key"]`` otherwise."""
    return (
        f"{path}.{key}" if _IDENT.match(key) else f"{path}[{json.dumps(key, ensure_ascii=False)}]"
    )


def struct_diff(old: Any, new: Any, path: str = "$", limit: int = MAX_CHANGES) -> list[Change]:
    """The changes turning ``old`` into ``new`` (at most ``limit``)."""
    out: list[Change] = []
    _walk(old, new, path, out, limit)
    return out


def _same(a: Any, b: Any) -> bool:
    """Python equality, except that a container never equals a scalar of another shape."""
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return type(a) is type(b) and bool(a == b)
    return bool(a == b)  # JSON values: == is already a bool


def _walk(old: Any, new: Any, path: str, out: list[Change], limit: int) -> None:
    if len(out) >= limit or _same(old, new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k, v in old.items():
            if len(out) >= limit:
                return
            sub = key_path(path, str(k))
            if k in new:
                _walk(v, new[k], sub, out, limit)
            else:
                out.append(Change(sub, "removed", old=v))
        out.extend(
            Change(key_path(path, str(k)), "added", new=v) for k, v in new.items() if k not in old
        )
        del out[limit:]
    elif isinstance(old, list) and isinstance(new, list):
        _lists(old, new, path, out, limit)
    else:
        out.append(Change(path, "changed", old, new))


def _fingerprint(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _lists(old: list[Any], new: list[Any], path: str, out: list[Change], limit: int) -> None:
    """Items aligned on their JSON: pairs recurse, the rest are added / removed."""
    fa, fb = intern_tokens(map(_fingerprint, old), map(_fingerprint, new))
    for i, j in align(fa, fb):
        if len(out) >= limit:
            del out[limit:]
            return
        if i is None:
            assert j is not None  # align never pairs two gaps
            out.append(Change(f"{path}[{j}]", "added", new=new[j]))
        elif j is None:
            out.append(Change(f"{path}[{i}]", "removed", old=old[i]))
        elif fa[i] != fb[j]:
            _walk(old[i], new[j], f"{path}[{j}]", out, limit)
    del out[limit:]
