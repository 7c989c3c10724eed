"""Context bloat: input tokens growing far faster than the work (§10.5's burn pattern).

The rule is loom-harness's cost analysis: at least 3 model calls with a
non-zero input count, the last more than twice the first and above 4,000.
The finding is placed at the call whose input grew most over the previous
one, and names the largest item that entered the context there, which is
what heal would try redacting.
"""

from __future__ import annotations

from loom_core.doctor.facts import Facts
from loom_core.doctor.model import CONTEXT_BLOAT, WARN, Finding
from loom_core.views.frames import frame_at

MIN_CALLS = 3
GROWTH = 2
MIN_LAST = 4000


def bloat(facts: Facts) -> list[Finding]:
    tin = facts.index.tokens_in
    calls = [m for m in facts.items.model_values if tin[m] > 0]
    if len(calls) < MIN_CALLS:
        return []
    first, last = tin[calls[0]], tin[calls[-1]]
    if not (last > GROWTH * first and last > MIN_LAST):
        return []
    model, jump = _largest_step(facts, calls)
    biggest = _biggest_new_item(facts, model)
    seq = facts.place.seq
    where = f"; largest new item: step {seq(biggest)}" if biggest is not None else ""
    message = (
        f"input tokens grew {last / first:.1f}x over {len(calls)} model calls "
        f"({first:,} -> {last:,}); step {seq(model)} added the most "
        f"(+{max(jump, 0):,}){where}"
    )
    related = (seq(calls[0]), seq(calls[-1])) + ((seq(biggest),) if biggest is not None else ())
    return [
        facts.finding(
            CONTEXT_BLOAT,
            WARN,
            model,
            max(jump, 0),
            message,
            share=max(jump, 0) / last,
            snippet_of=biggest,
            related=related,
            targets=(biggest,) if biggest is not None else (),
        )
    ]


def _largest_step(facts: Facts, calls: list[int]) -> tuple[int, int]:
    """(call, input growth) of the call that grew most over the same agent's previous
    call; the previous call overall for a call that is its agent's first."""
    tin, prev_model = facts.index.tokens_in, facts.index.prev_model
    best, best_jump = calls[1], None
    for j in range(1, len(calls)):
        m = calls[j]
        prev = prev_model[m] if prev_model[m] >= 0 and tin[prev_model[m]] > 0 else calls[j - 1]
        jump = tin[m] - tin[prev]
        if best_jump is None or jump > best_jump:
            best, best_jump = m, jump
    return best, int(best_jump or 0)


def _biggest_new_item(facts: Facts, model: int) -> int | None:
    """The effect of the largest non-assistant item new in ``model``'s context."""
    frame = frame_at(facts.index, model)
    if frame is None:
        return None
    best, best_len = None, -1
    for k in range(frame.new_from, len(frame)):
        item = frame.ctx.items[k]
        if item[0] in ("tool", "memory") and len(facts.text(item[1])) > best_len:
            best, best_len = item[1], len(facts.text(item[1]))
    return best
