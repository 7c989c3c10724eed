"""What ``proxy_overhead.py`` concludes from its rounds: medians, ratios, goals, the table.

Kept apart from the load and process code so each stays readable. Every ratio is
named by what it compares (``ours_vs_minimal_rps``: ours' requests/s over the bare
pass-through's in the same rounds; ``*_added_p50_ms``: a target's p50 latency minus
the direct p50, i.e. what sitting in between costs), and every goal of issue 24 is
printed with the figure it was judged on and ``met`` / ``NOT met``. The peers are
loom-harness's proxy and mitmproxy; the floor is the bare aiohttp pass-through
(``minimal``, "bare" in the table).
"""

from __future__ import annotations

import statistics
from typing import Any

MEDIAN_KEYS = ("rps", "p50_ms", "p99_ms", "max_ms", "ttfb_p50_ms", "ttfb_p99_ms")
NAMES = {
    "direct": "direct (the fake upstream itself)",
    "ours": "ours (loom_core proxy)",
    "loom": "loom-harness proxy",
    "mitm": "mitmproxy (mitmdump --mode reverse)",
    "minimal": "bare aiohttp pass-through",
    "ours_other_loop": "ours on the other loop",
}
SHORT = {
    "loom": "loom-harness",
    "mitm": "mitmproxy",
    "minimal": "bare",
    "ours_other_loop": "ours (other loop)",
}
PROXIES = ("ours", "loom", "mitm", "minimal", "ours_other_loop")
# issue 24: ours against the bare pass-through, in the same rounds
RPS_FLOOR = 0.95  # ours' req/s >= this x the bare pass-through's, concurrency 8
P50_FLOOR_MS = 0.05  # ours' p50 <= the bare pass-through's + this, JSON, concurrency 1
FIRST_BYTE_MS = 2.0  # ours' first streamed byte <= direct + this, paced, concurrency 8


def median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One target's scenario over the rounds: medians of the timings, sums of the counts."""
    out: dict[str, Any] = {}
    for key in MEDIAN_KEYS:
        values = [r[key] for r in rows if r.get(key) is not None and r[key] == r[key]]
        if key in rows[0]:
            out[key] = round(statistics.median(values), 3) if values else None
    out["n"] = sum(r["n"] for r in rows)
    out["errors"] = sum(r["errors"] for r in rows)
    out["truncated"] = any(r.get("truncated") for r in rows)
    out["rps_rounds"] = [r["rps"] for r in rows]
    errors = [r["first_error"] for r in rows if "first_error" in r]
    if errors:
        out["first_error"] = errors[0]
    return out


def _div(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def _minus(a: float | None, b: float | None) -> float | None:
    return round(a - b, 3) if a is not None and b is not None else None


def scenario_ratios(res: dict[str, Any], name: str) -> dict[str, Any]:
    """Ours against direct and every other target; what each target adds to direct."""
    d = res["direct"][name]
    o = res["ours"][name]
    out: dict[str, Any] = {"ours_vs_direct_rps": _div(o["rps"], d["rps"])}
    for other in PROXIES[1:]:
        if res.get(other):
            out[f"ours_vs_{other}_rps"] = _div(o["rps"], res[other][name]["rps"])
    for target in PROXIES:
        row = (res.get(target) or {}).get(name)
        if row is None:
            continue
        out[f"{target}_added_p50_ms"] = _minus(row["p50_ms"], d["p50_ms"])
        if "ttfb_p50_ms" in row:
            out[f"{target}_added_ttfb_p50_ms"] = _minus(row["ttfb_p50_ms"], d["ttfb_p50_ms"])
    return out


def goals(ratios: dict[str, Any]) -> dict[str, Any]:
    """Issue 24's proxy goals: {name: {what, value, goal, met}}; None when not measured."""
    out: dict[str, Any] = {}

    def add(name: str, what: str, value: float | None, goal: str, met: bool) -> None:
        out[name] = {"what": what, "value": value, "goal": goal, "met": value is not None and met}

    for kind in ("json", "stream"):
        v = ratios.get(f"{kind}_c8", {}).get("ours_vs_minimal_rps")
        add(
            f"rps_c8_{kind}>={RPS_FLOOR}x_bare",
            f"{kind}, concurrency 8: ours req/s / bare pass-through req/s",
            v,
            f">= {RPS_FLOOR}",
            (v or 0) >= RPS_FLOOR,
        )
    c1 = ratios.get("json_c1", {})
    v = _minus(c1.get("ours_added_p50_ms"), c1.get("minimal_added_p50_ms"))
    add(
        f"p50_c1_json<=bare+{P50_FLOOR_MS}ms",
        "json, concurrency 1: ours added p50 - bare pass-through added p50 (ms)",
        v,
        f"<= {P50_FLOOR_MS}",
        v is not None and v <= P50_FLOOR_MS,
    )
    v = ratios.get("paced_c8", {}).get("ours_added_ttfb_p50_ms")
    add(
        f"first_byte_paced_c8<=+{FIRST_BYTE_MS:g}ms",
        "paced stream, concurrency 8: ours first-byte p50 - direct first-byte p50 (ms)",
        v,
        f"<= {FIRST_BYTE_MS:g}",
        v is not None and v <= FIRST_BYTE_MS,
    )
    return out


def _f(v: Any) -> str:
    return "-" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v)


def _ratio_line(name: str, r: dict[str, Any]) -> str:
    """Ours' throughput over every other target's, each with its goal (issue 24)."""
    parts = []
    for t in ("minimal", "loom", "mitm", "ours_other_loop", "direct"):
        v = r.get(f"ours_vs_{t}_rps")
        if v is None and t != "minimal":
            continue
        goal = "no goal"
        if t == "minimal" and name in ("json_c8", "stream_c8"):
            goal = f"goal >= {RPS_FLOOR}: {'met' if (v or 0) >= RPS_FLOOR else 'NOT met'}"
        parts.append(f"ours/{SHORT.get(t, t)} {_f(v)}x ({goal})")
    return "    req/s: " + "; ".join(parts)


def table(res: dict[str, Any]) -> str:
    """The human report (medians over the rounds)."""
    cfg = res["config"]
    lines = [
        f"proxy overhead: medians of {cfg['rounds']} interleaved round(s) of {cfg['requests']} "
        f"requests ({cfg['paced_requests']} paced); ours and the bare pass-through on "
        f"{cfg['loop']}; load average {cfg['load_before']} before, {cfg['load_after']} after; "
        f"{cfg['cpus']} CPUs",
        f"{'scenario':10s} {'target':15s} {'req/s':>9s} {'p50 ms':>8s} {'p99 ms':>8s} "
        f"{'ttfb50':>8s} {'n':>6s} {'err':>4s}  req/s per round",
    ]
    for name in res["ratios"]:
        for target in ("direct",) + PROXIES:
            row = (res.get(target) or {}).get(name)
            if row is None:
                continue
            lines.append(
                f"{name:10s} {target:15s} {_f(row['rps']):>9s} {_f(row['p50_ms']):>8s} "
                f"{_f(row['p99_ms']):>8s} {_f(row.get('ttfb_p50_ms')):>8s} "
                f"{row['n']:>6d} {row['errors']:>4d}  {row['rps_rounds']}"
            )
        r = res["ratios"][name]
        lines.append(_ratio_line(name, r))
        for what, key in (("added p50", "added_p50_ms"), ("added first byte", "added_ttfb_p50_ms")):
            got = [f"{SHORT.get(t, t)} {_f(r[f'{t}_{key}'])}" for t in PROXIES if f"{t}_{key}" in r]
            if got:
                lines.append(f"    {what} vs direct (ms): " + ", ".join(got))
    s, d = res["stall"], res["stall_direct"]
    lines.append(
        f"longest exchange of {s['n']} sequential (info): ours {_f(s['max_ms'])} ms, "
        f"direct {_f(d['max_ms'])} ms"
    )
    lines.append("goals (issue 24):")
    for g in res["goals"].values():
        lines.append(
            f"  {'met    ' if g['met'] else 'NOT met'} {g['what']} = {_f(g['value'])} "
            f"(goal {g['goal']})"
        )
    return "\n".join(lines)
