"""One agent run through a confirm shield with every kind of operator decision.

Shared by the placement tests of the saved trace (core) and of the live tab (desktop):
the real ``anthropic`` SDK runs a tool loop through the proxy on the rig, the fake
model asks for one ``deploy`` per turn, and the operator answers each held call in
turn -- approve, approve with "always allow", deny with a reason, edit then approve,
and a timeout (expired through the registry, so no test waits on the clock).
``EXPECTED[i]`` is the model call (0-based, in order) that decision ``i`` belongs to.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from loom_core.proxy.config import ShieldFlags
from loom_core.proxy.control_client import ControlClient
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import NEVER_S, Rig
from tests.core.proxy.procs import wait_for

SHIELD = ShieldFlags(confirm=["deploy*"], confirm_timeout=NEVER_S)
TOOLS = [
    {"name": name, "description": name, "input_schema": {"type": "object"}}
    for name in ("deploy", "read_notes")
]
PROD, EDITED, STAGING = {"env": "prod"}, {"env": "production"}, {"env": "staging"}
ALWAYS = 'deploy({"env": "prod"})'
SCRIPT = [
    Reply(text="Reading first.", calls=[("r0", "read_notes", {})]),
    Reply(text="Deploying.", calls=[("d1", "deploy", PROD)]),
    Reply(text="Again.", calls=[("d2", "deploy", PROD)]),  # the same call: its own step
    Reply(
        text="Dev too.", calls=[("r3", "read_notes", {"x": 1}), ("d3", "deploy", {"env": "dev"})]
    ),
    Reply(text="Production.", calls=[("d4", "deploy", EDITED)]),
    Reply(text="QA.", calls=[("d5", "deploy", {"env": "qa"}), ("r5", "read_notes", {})]),
    Reply(text="Prod once more.", calls=[("d6", "deploy", PROD)]),  # always allowed: no event
    Reply(text="Done."),
]
EXPECTED = [1, 2, 3, 4, 5]  # decision i sits on model call EXPECTED[i]
KINDS = ["approve", "always-allow", "deny with reason", "edit", "timeout"]


def agent(rig: Rig) -> str:
    """The tool loop; returns the final text."""
    client = rig.anthropic()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "release"}]
    for _ in range(len(SCRIPT)):
        reply = client.messages.create(
            model="fake-1", max_tokens=64, tools=TOOLS, messages=messages
        )
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            return "".join(b.text for b in reply.content if b.type == "text")
        messages += [
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in reply.content],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": u.id,
                        "content": f"ran {json.dumps(u.input)}",
                    }
                    for u in uses
                ],
            },
        ]
    raise AssertionError("the agent did not finish")


def _decisions(rig: Rig) -> list[Callable[[ControlClient, str], None]]:
    def expire(_client: ControlClient, call_id: str) -> None:
        assert rig.proxy.server.screen.approvals.expire(call_id)

    return [
        lambda c, i: c.decide(i, True, by="alice"),
        lambda c, i: c.decide(i, True, by="alice", always_allow=ALWAYS),
        lambda c, i: c.decide(i, False, by="bob", reason="dev is frozen"),
        lambda c, i: c.decide(i, True, by="carol", edited_input=STAGING),
        expire,
    ]


def run_with_decisions(rig: Rig, pool: ThreadPoolExecutor) -> Future[str]:
    """Start the agent and answer its five held calls in order; returns its final text."""
    rig.upstream.script(*SCRIPT)
    answer = pool.submit(agent, rig)
    client, seen = ControlClient(rig.proxy.port), set()
    for decide in _decisions(rig):
        call = wait_for(
            lambda: [c for c in client.pending() if c.id not in seen], 15, "the next held call"
        )[0]
        seen.add(call.id)
        decide(client, call.id)
    return answer
