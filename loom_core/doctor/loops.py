"""Tool loops and error loops: the same call, with the same arguments, again and again.

A *tool loop* is one call (tool + equal arguments) requested 3+ times; an
*error loop* is a call whose failure was retried unchanged 2+ times (each retry
follows a failed attempt). An error loop is the more specific diagnosis, so its
group is not reported as a tool loop too. Results stay in the context, so the
repeated results are what heal may redact.
"""

from __future__ import annotations

from loom_core.doctor.calls import ToolUse, reads_as_error
from loom_core.doctor.facts import Facts
from loom_core.doctor.model import ERROR_LOOP, HIGH, TOOL_LOOP, WARN, Finding

LOOP_CALLS = 3
ERROR_RETRIES = 2
_SHOW_STEPS = 6
_SHOW_ARGS = 60


def loops(facts: Facts) -> list[Finding]:
    groups: dict[tuple[str, str], list[ToolUse]] = {}
    for use in facts.uses:
        groups.setdefault(use.signature, []).append(use)
    out = []
    for (name, args), uses in groups.items():
        if len(uses) < LOOP_CALLS:
            continue
        failed = [
            u.result is not None and reads_as_error(facts.result_value(u.result)) for u in uses
        ]
        retries = [u for k, u in enumerate(uses) if k > 0 and failed[k - 1]]
        call = _call_text(name, args)
        steps = facts.place.seqs([u.model for u in uses])
        if len(retries) >= ERROR_RETRIES:
            at = retries[ERROR_RETRIES - 1]
            targets = tuple(u.result for u, bad in zip(uses, failed, strict=True) if bad)
            out.append(
                _finding(
                    facts,
                    ERROR_LOOP,
                    HIGH,
                    at,
                    uses,
                    targets,
                    f"{call} failed and was retried unchanged {len(retries)} "
                    f"time(s) (steps {_steps(steps)})",
                )
            )
        else:
            targets = tuple(u.result for u in uses if u.result is not None)
            out.append(
                _finding(
                    facts,
                    TOOL_LOOP,
                    WARN,
                    uses[LOOP_CALLS - 1],
                    uses,
                    targets,
                    f"{call} called {len(uses)} times with the same arguments "
                    f"(steps {_steps(steps)})",
                )
            )
    return out


def _finding(
    facts: Facts,
    kind: str,
    severity: str,
    at: ToolUse,
    uses: list[ToolUse],
    targets: tuple[int | None, ...],
    message: str,
) -> Finding:
    """Placed at ``at``'s result (its model call when the result is missing)."""
    effect = at.result if at.result is not None else at.model
    present = tuple(t for t in targets if t is not None)
    tokens = sum(facts.tokens(t) for t in present)
    related = facts.place.seqs([u.model for u in uses])
    return facts.finding(kind, severity, effect, tokens, message, related=related, targets=present)


def _call_text(name: str, args: str) -> str:
    shown = args if len(args) <= _SHOW_ARGS else args[:_SHOW_ARGS] + "..."
    return f"{name}({shown})"


def _steps(steps: tuple[int, ...]) -> str:
    shown = ", ".join(map(str, steps[:_SHOW_STEPS]))
    return shown + (f", ... ({len(steps)} in all)" if len(steps) > _SHOW_STEPS else "")
