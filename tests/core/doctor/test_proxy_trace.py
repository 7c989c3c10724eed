"""The checkup of a trace our recording proxy wrote from a real ``anthropic`` client.

Why: proxy traces pair results with calls by ``tool_use_id`` (``meta.tuid``) and
group agents by system prompt, unlike harness traces; loops and staleness must
work on them too, and the harness findings must still match ``loom doctor``.
"""

from __future__ import annotations

from loom_core.doctor import ERROR_LOOP, STALE, checkup_path
from tests.core.doctor.test_loom_doctor import assert_same_as_loom_doctor
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import Rig, anthropic_agent

TOOLS = [
    {
        "name": n,
        "description": d,
        "input_schema": {"type": "object", "properties": {a: {"type": "string"}}},
    }
    for n, d, a in (("read_file", "Read a file.", "path"), ("deploy", "Deploy.", "env"))
]
RESULTS = {
    "t1": "replicas: 2",
    "t2": "ERROR: QuotaError: no capacity",
    "t3": "ERROR: QuotaError: no capacity",
    "t4": "ERROR: QuotaError: no capacity",
    "t5": "replicas: 3",
}


def run_agent(rig: Rig) -> None:
    """A tool loop with the real client: read, deploy failing three times, read again."""
    rig.upstream.script(
        Reply(calls=[("t1", "read_file", {"path": "app.yaml"})], usage=(100, 5)),
        *[
            Reply(calls=[(f"t{n}", "deploy", {"env": "prod"})], usage=(150 + n, 5))
            for n in (2, 3, 4)
        ],
        Reply(calls=[("t5", "read_file", {"path": "app.yaml"})], usage=(300, 5)),
        Reply(text="Deploy keeps failing on quota.", usage=(400, 9)),
    )
    anthropic_agent(
        rig.anthropic(),
        [{"role": "user", "content": "Deploy the app."}],
        RESULTS,
        8,
        model="claude-test",
        max_tokens=128,
        system="Ops.",
        tools=TOOLS,
    )


def test_loops_and_staleness_in_a_proxy_recording(rig: Rig) -> None:
    run_agent(rig)
    rig.stop()
    report = checkup_path(rig.save)
    (loop,) = report.of_kind(ERROR_LOOP)
    assert loop.message.startswith(
        'deploy({"env": "prod"}) failed and was retried unchanged 2 time(s)'
    )
    assert len(loop.redact_targets) == 3
    stale = {f.snippet: f for f in report.of_kind(STALE)}
    assert "(changed)" in stale["replicas: 2"].message  # read_file(app.yaml), read again
    assert len(report.of_kind(STALE)) == 1  # the identical failed deploys are the error loop
    assert_same_as_loom_doctor(rig.save)
