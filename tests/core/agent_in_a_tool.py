"""A loom-harness agent that stays inside its tool: ``python -m tests.core.agent_in_a_tool
JOURNAL`` journals a run whose tool ``wait_for_go`` (step 1) returns only when a line arrives
on stdin, so its journal ends with that tool's intent while the process holds it open (see
:func:`tests.core.harness_runs.agent_inside_a_tool`)."""

from __future__ import annotations

import sys

from loom import Agent, tool

from tests.core.harness_runs import call, reply, scripted


@tool
def wait_for_go(why: str) -> str:
    """Blocks until a line arrives on stdin."""
    sys.stdin.readline()
    return "went"


def main(journal: str) -> None:
    script = [reply("", [call("w1", "wait_for_go", why="slow")]), reply("done")]
    agent = Agent(
        name="w",
        system="Wait.",
        journal=journal,
        tools=[wait_for_go],
        provider=scripted(*script),
    )
    agent.run("Wait for it")


if __name__ == "__main__":
    main(sys.argv[1])
