"""``benchmarks/proxy_overhead.py --json`` runs and prints the documented shape.

Only the shape is checked: timings depend on the machine (no timed assertions). So the
run is as small as a shape needs: a few dozen requests per scenario and target, one
round. (With ``--quick``'s 200 requests, 500 stall exchanges and a 20 s cap per
scenario, six scenarios on four targets took two minutes on a loaded two-core machine.)
Most of what is left is starting a fresh process of every target for every scenario, as
the benchmark does, so the time limit is a bound far above what a loaded machine needs.
loom-harness's proxy and mitmproxy are skipped (``--no-loom --no-mitm``: mitmproxy is not
in the test lock). It runs with our proxy on each event loop (``--loop``), as the
measurements report both.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = {"json_c1", "json_c8", "stream_c1", "stream_c8", "paced_c1", "paced_c8"}


BOUND_S = 840  # a bound, not an expectation: two minutes on a loaded machine


@pytest.mark.long
@pytest.mark.timeout(BOUND_S + 60)
def test_quick_json_shape() -> None:
    """On uvloop with ``--both-loops``: ours runs on both loops in the same rounds, so one
    run covers each loop of ours (the bare pass-through on asyncio is run by
    :func:`test_cpu_benchmark_runs_on_the_loop_asked_for`)."""
    pytest.importorskip("uvloop")
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "proxy_overhead.py"),
            *("--rounds", "1", "--requests", "24", "--paced-requests", "8"),
            *("--stall-requests", "40", "--scenario-seconds", "60"),
            "--json",
            "--no-loom",
            "--no-mitm",
            *("--loop", "uvloop", "--both-loops"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=BOUND_S,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stdout
    res = json.loads(lines[0])
    assert {
        "direct",
        "ours",
        "loom",
        "ratios",
        "stall_ms_max",
        "stall",
        "targets",
        "config",
    } <= set(res)
    assert res["loom"] is None and res["mitm"] is None and res["config"]["mitmdump"] is None
    assert res["ours_other_loop"] is not None  # --both-loops: ours on asyncio too
    for target in ("direct", "ours", "minimal", "ours_other_loop"):
        assert set(res[target]) == SCENARIOS
        for name, row in res[target].items():
            assert {"n", "errors", "rps", "p50_ms", "p99_ms", "max_ms"} <= set(row)
            assert row["errors"] == 0, (target, name, row)
            assert row["n"] > 0 and row["rps"] > 0 and row["rps_rounds"] == [row["rps"]]
            assert ("ttfb_p50_ms" in row) == (not name.startswith("json"))
    assert set(res["ratios"]) == SCENARIOS
    for name, ratio in res["ratios"].items():
        assert isinstance(ratio["ours_vs_direct_rps"], float)
        assert isinstance(ratio["ours_added_p50_ms"], float)
        assert ("ours_added_ttfb_p50_ms" in ratio) == (not name.startswith("json"))
        assert isinstance(ratio["ours_vs_minimal_rps"], float)
        assert isinstance(ratio["minimal_added_p50_ms"], float)
        assert "ours_vs_ours_other_loop_rps" in ratio
    assert set(res["goals"]) == {
        "rps_c8_json>=0.95x_bare",
        "rps_c8_stream>=0.95x_bare",
        "p50_c1_json<=bare+0.05ms",
        "first_byte_paced_c8<=+2ms",
    }
    for name, goal in res["goals"].items():
        assert {"what", "value", "goal", "met"} <= set(goal)
        assert isinstance(goal["value"], float), (name, goal)
        assert res["targets"][name] is goal["met"]
    assert res["config"]["loop"] == "uvloop" and res["config"]["rounds"] == 1
    assert res["config"]["load_before"] and res["config"]["load_after"]
    assert isinstance(res["stall_ms_max"], float) and res["stall"]["n"] > 0
    assert all(isinstance(v, bool) for v in res["targets"].values())
    assert res["config"]["request_bytes"] > 8000


def test_cpu_benchmark_runs_on_the_loop_asked_for() -> None:
    """``proxy_cpu.py`` (CPU ms per exchange) on the standard loop, with the minimal floor."""
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "proxy_cpu.py"),
            "--rounds",
            "1",
            "--requests",
            "20",
            "--paced-requests",
            "16",
            "--loop",
            "asyncio",
            "--minimal",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    assert res["loop"] == "asyncio" and "loom" not in res
    for target in ("ours", "minimal"):
        assert set(res[target]) == {"json", "stream", "paced"}
        for row in res[target].values():
            assert row["errors"] == 0 and row["cpu_ms_per_request"] >= 0
