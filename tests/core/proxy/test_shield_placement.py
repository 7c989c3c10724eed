"""Every operator decision sits on the step of the call it decided, in the saved trace.

The run (see :mod:`.decisions`) goes through the real proxy with the real SDK; the
trace it writes must pass loom-harness's checks, keep loom's event keys with our
additive ``edited_input``/``always_allow``/``reason``, and place each decision on its
own model call -- including an edited call (the response carries the edit) and the
same call approved on two steps.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from loom_core.formats.loader import load
from loom_core.views.shield_place import Placer
from loom_core.views.timeline import F_DENIED, F_SHIELD, K_MODEL, build_timeline
from tests.core.clis import core
from tests.core.proxy.decisions import EDITED, EXPECTED, SHIELD, STAGING, run_with_decisions
from tests.core.proxy.harness import Rig, loom_verifies, model_results, start_rig


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(tmp_path / "rt"))
    with start_rig(tmp_path, shield=SHIELD) as r:
        yield r


def test_each_decision_sits_on_its_calls_step_in_the_saved_trace(rig: Rig) -> None:
    with ThreadPoolExecutor(1, thread_name_prefix="agent") as pool:
        assert run_with_decisions(rig, pool).result(20) == "Done."
    trace = rig.stop()
    events = trace["shield_events"]
    assert [(e["action"], e["via"]) for e in events] == [
        ("approve", "operator"),
        ("approve", "operator"),
        ("deny", "operator"),
        ("approve", "operator"),
        ("deny", "timeout"),
    ]
    assert events[1]["always_allow"] and events[2]["reason"] == "dev is frozen"
    assert (events[3]["input"], events[3]["edited_input"]) == (EDITED, STAGING)
    edited_call = model_results(trace)[4]["tool_calls"][0]
    assert edited_call["input"] == STAGING  # what the agent got and ran
    loom_verifies(rig.save)

    tl = build_timeline(load(rig.save))
    models = [s for s in range(len(tl)) if tl.kind[s] == K_MODEL]
    assert len(models) == 8
    assert tl.shield_at == {models[k]: [i] for i, k in enumerate(EXPECTED)}
    assert [bool(tl.flags[s] & F_SHIELD) for s in models] == [False] + [True] * 5 + [False] * 2
    assert [bool(tl.flags[s] & F_DENIED) for s in models] == [False] * 3 + [True, False, True] + [
        False
    ] * 2

    first = tl.doc.shield_events[0]  # deploy(prod) is shown by model calls 1, 2 and 6
    assert Placer(tl).place([first] * 4, models) == [1, 2, 6, 6]  # each showing taken once
    lines = core("steps", rig.save).stdout.splitlines()  # the CLI's step list says the same
    [edited_line] = [line for line in lines if "✎ edited" in line]
    assert 'deploy({"env": "staging"}) ✎ edited via operator' in edited_line
    assert sum(line.count("  ★ approve ") + line.count("  ◆ deny ") for line in lines) == 5
    assert not any("★ deny" in line for line in lines)  # a denial's sign is ◆ only
