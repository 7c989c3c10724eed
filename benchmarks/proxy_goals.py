"""What ``proxy_overhead.py`` concludes from its rounds: medians, ratios, goals, the table.

Kept apart from the load and process code so each stays readable. Every ratio is
named by what it compares (``ours_vs_loom_rps``: ours' requests/s over
loom-harness's in the same round set; ``*_added_p50_ms``: a proxy's p50 latency
minus the direct p50, i.e. what sitting in between costs), and every goal of
issue 14 is printed with the figure it was judged on and ``met`` / ``NOT met``.
"""

from __future__ import annotations

import statistics
from typing import Any

MEDIAN_KEYS = ("rps", "p50_ms", "p99_ms", "max_ms", "ttfb_p50_ms", "ttfb_p99_ms")
NAMES = {
    "direct": "direct (the fake upstream itself)",
    "ours": "ours (loom_core proxy)",
    "loom": "loom-harness proxy",
    "minimal": "minimal pass-through",
    "ours_other_loop": "ours on the other loop",
}
PROXIES = ("ours", "loom", "minimal", "ours_other_loop")


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
    """Ours against direct, loom-harness and the minimal pass-through; what each adds."""
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


def goals(ratios: dict[str, Any], first_byte: list[str], have_loom: bool) -> dict[str, Any]:
    """Issue 14's proxy goals: {name: {what, value, goal, met}}."""
    out: dict[str, Any] = {}

    def add(name: str, what: str, value: float | None, goal: str, met: bool) -> None:
        out[name] = {"what": what, "value": value, "goal": goal, "met": bool(met)}

    if have_loom:
        for kind in ("json", "stream"):
            v = ratios[f"{kind}_c8"].get("ours_vs_loom_rps")
            add(
                f"rps_c8_{kind}>=8x_loom",
                f"{kind}, concurrency 8: ours req/s / loom-harness req/s",
                v,
                ">= 8",
                (v or 0) >= 8,
            )
    v = ratios["json_c1"]["ours_added_p50_ms"]
    add(
        "added_p50_ms_c1_json<=0.3",
        "json, concurrency 1: ours p50 - direct p50 (ms)",
        v,
        "<= 0.3",
        v is not None and v <= 0.3,
    )
    for name in first_byte:
        v = ratios[name]["ours_added_ttfb_p50_ms"]
        add(
            f"first_byte_{name}<=+2ms",
            f"{name}: ours first-byte p50 - direct first-byte p50 (ms)",
            v,
            "<= 2",
            v is not None and v <= 2.0,
        )
    return out


def table(res: dict[str, Any]) -> str:
    """The human report (medians over the rounds)."""

    def f(v: Any) -> str:
        return "-" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v)

    cfg = res["config"]
    other = "asyncio" if cfg["loop"] == "uvloop" else "uvloop"
    lines = [
        f"proxy overhead: medians of {cfg['rounds']} interleaved round(s); our proxy and "
        f"the minimal pass-through on {cfg['loop']}"
        + (f", ours_other_loop on {other}" if res.get("ours_other_loop") else "")
        + f"; load average {cfg['load_before']} before, {cfg['load_after']} after; "
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
                f"{name:10s} {target:15s} {f(row['rps']):>9s} {f(row['p50_ms']):>8s} "
                f"{f(row['p99_ms']):>8s} {f(row.get('ttfb_p50_ms')):>8s} "
                f"{row['n']:>6d} {row['errors']:>4d}  {row['rps_rounds']}"
            )
        r = res["ratios"][name]
        parts = [
            f"ours/{NAMES[t]} throughput {f(r.get(f'ours_vs_{t}_rps'))}x"
            for t in ("direct",) + PROXIES[1:]
            if f"ours_vs_{t}_rps" in r
        ]
        lines.append("    " + "; ".join(parts))
        for what, key in (
            ("added p50 vs direct", "added_p50_ms"),
            ("added first byte vs direct", "added_ttfb_p50_ms"),
        ):
            got = [f"{t} {f(r[f'{t}_{key}'])} ms" for t in PROXIES if f"{t}_{key}" in r]
            if got:
                lines.append(f"    {what}: " + ", ".join(got))
    s, d = res["stall"], res["stall_direct"]
    lines.append(
        f"longest exchange of {s['n']} sequential (info): ours {f(s['max_ms'])} ms, "
        f"direct {f(d['max_ms'])} ms"
    )
    lines.append("goals:")
    for g in res["goals"].values():
        lines.append(
            f"  {'met    ' if g['met'] else 'NOT met'} {g['what']} = {f(g['value'])} "
            f"(goal {g['goal']})"
        )
    return "\n".join(lines)
