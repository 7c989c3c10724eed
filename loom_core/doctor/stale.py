"""Stale results: an older tool result the model still sees after a newer one replaced it.

Why it matters: a model that reads ``config.yaml`` twice has both versions in
its context; if the file changed in between, the old one contradicts the new
one and wastes tokens either way. "Same resource" means the same tool and equal
resource arguments (``path``, ``url``, ``query``, … when the call has any; else
all its arguments), and the content changed: an identical re-read is not stale but a
repeat (the duplicate and tool-loop findings cover it), so it is not reported twice.
"Still sees" is decided on the reconstructed context
(:mod:`loom_core.views.context`): a model call of the same agent, after the newer
result, whose context list still holds the older one.
"""

from __future__ import annotations

from bisect import bisect_right

from loom_core.doctor.calls import ToolUse, canonical_args
from loom_core.doctor.facts import Facts
from loom_core.doctor.model import STALE, WARN, Finding

RESOURCE_ARGS = (
    "path",
    "file",
    "file_path",
    "filepath",
    "filename",
    "url",
    "uri",
    "query",
    "q",
    "key",
    "resource",
    "table",
    "id",
)


def resource_key(use: ToolUse) -> tuple[str, str]:
    """(tool, what it was about): the resource arguments when present, else all arguments."""
    args = use.args if isinstance(use.args, dict) else {}
    picked = {a: args[a] for a in RESOURCE_ARGS if a in args}
    return use.name, canonical_args(picked if picked else args)


def _describe(use: ToolUse) -> str:
    args = use.args if isinstance(use.args, dict) else {}
    picked = [f"{a}={canonical_args(args[a])}" for a in RESOURCE_ARGS if a in args]
    text = ", ".join(picked) if picked else "the same arguments"
    return text if len(text) <= 80 else text[:80] + "..."


def stale(facts: Facts) -> list[Finding]:
    found: dict[int, Finding] = {}
    for cid, ctx in enumerate(facts.index.contexts):
        lens, models = facts.place.frames(cid)
        latest: dict[tuple[str, str], int] = {}
        for pos, item in enumerate(ctx.items):
            if item[0] != "tool":
                continue
            use = facts.use_of_result.get(item[1])
            if use is None:
                continue
            key = resource_key(use)
            old = latest.get(key)
            latest[key] = item[1]
            if old is None or old in found:
                continue
            k = bisect_right(lens, pos)  # first call of this agent that saw the newer result
            if k < len(models) and facts.text(old) != facts.text(item[1]):
                found[old] = _finding(facts, old, item[1], models[k], use)
    return list(found.values())


def _finding(facts: Facts, old: int, new: int, model: int, use: ToolUse) -> Finding:
    seq = facts.place.seq
    kind = facts.doc.effects[old].kind or ""
    return facts.finding(
        STALE,
        WARN,
        old,
        facts.tokens(old),
        f"{kind} result for {_describe(use)} superseded at step {seq(new)} "
        f"(changed) but still in context at step {seq(model)}",
        related=(seq(new), seq(model)),
        targets=(old,),
    )
