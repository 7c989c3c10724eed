"""Real loom-harness runs, recorded offline, as fixtures for the interop tests.

Why: hand-written JSON only proves we agree with ourselves. These factories
drive loom-harness's own agent loop with its offline ``ScriptedProvider`` and
let it write the files, so every test compares loom_core against what the
reference implementation really produces (and, through ``Run``, what it
believes about those files). Each factory returns the live ``Run`` and the
agents by name: the agents' system prompts and tool schemas are what a reader
needs to recompute harness model keys (they are not stored in a trace, §3.2).

Scenarios: tools (errors, int/dict results, unknown tool, clock), a sub-agent,
pause/resume (also inside a sub-agent), native Policy deny/confirm and dry-run,
budget and max_steps stops, a non-ASCII multi-episode conversation, a 5,001-effect
run, history compaction, a fork with an edit; journals: finished, paused,
crashed inside a tool, torn.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom import Agent, Policy, Run, Tool, tool
from loom.agent import ask_human
from loom.providers.base import ModelResponse, ToolCall
from loom.providers.scripted import ScriptedProvider


@dataclass
class Recorded:
    """One saved harness run: where it is, the Run that wrote it, its agents by name."""

    name: str
    path: Path
    run: Run
    agents: dict[str, Agent]


# -- tools -----------------------------------------------------------------


@tool
def read_file(path: str) -> str:
    """Read a file from the workspace."""
    if path == "missing.txt":
        raise FileNotFoundError(path)
    return f"contents of {path}"


@tool
def explode(reason: str) -> str:
    """A tool that always fails."""
    raise RuntimeError(reason)


@tool
def triple(n: int) -> int:
    """Multiply by three (an int result: str() of it goes into the key)."""
    return n * 3


@tool
def stats(name: str, deep: bool = False) -> dict:
    """A dict result: the harness hashes its Python repr."""
    return {"name": name, "deep": deep, "missing": None, "ratio": 0.5}


@tool
def drop_table(table: str) -> str:
    """Destructive; the policy denies it."""
    return f"dropped {table}"


@tool
def send_email(to: str, body: str) -> str:
    """Needs approval; the operator says no."""
    return f"sent to {to}"


@tool
def send_sms(to: str) -> str:
    """Needs approval; the operator says yes."""
    return f"sms to {to}"


@tool
def translate(text: str, lang: str) -> str:
    """Non-ASCII in, non-ASCII out."""
    return {"de": "Grüße, schön ✓", "ja": "こんにちは 🌸"}.get(lang, text)


@tool
def tick(i: int) -> str:
    """One step of a long tool loop."""
    return f"tick {i} ok"


class Crash(BaseException):
    """Escapes the harness's ``except Exception``: the process 'dies' inside a tool."""


@tool
def charge_card(amount: int) -> str:
    """Crashes the run mid-tool, leaving a trailing tool intent in the journal."""
    raise Crash(f"power loss while charging {amount}")


# -- helpers ---------------------------------------------------------------


def reply(
    text: str = "", calls: list[ToolCall] | None = None, t_in: int = 100, t_out: int = 10
) -> ModelResponse:
    """A scripted model response with usage; tool_use iff it calls tools."""
    return ModelResponse(
        text=text,
        tool_calls=list(calls or []),
        stop_reason="tool_use" if calls else "end_turn",
        usage={"input_tokens": t_in, "output_tokens": t_out},
    )


def call(cid: str, tool_name: str, **args: Any) -> ToolCall:
    """A tool call with an explicit id."""
    return ToolCall(cid, tool_name, dict(args))


def scripted(*responses: ModelResponse, model: str = "scripted") -> ScriptedProvider:
    """ScriptedProvider over ``responses`` under the given model id."""
    return ScriptedProvider(list(responses), model=model)


def _save(run: Run, out: Path, name: str, agents: list[Agent]) -> Recorded:
    path = out / f"{name}.loom.json"
    run.save(str(path))
    return Recorded(name, path, run, {a.name: a for a in agents})


# -- trace factories -------------------------------------------------------


def tools_run(out: Path) -> Recorded:
    """Tools with string/int/dict results, a raising tool, an unknown tool, the clock."""
    agent = Agent(
        name="worker",
        system="You are a careful worker.",
        clock=True,
        tools=[read_file, explode, triple, stats],
        provider=scripted(
            reply(
                "Let me look.",
                [
                    call("c1", "read_file", path="a.txt"),
                    call("c2", "explode", reason="boom"),
                    call("c3", "triple", n=9),
                    call("c4", "stats", name="x", deep=True),
                    call("c5", "nope", q=1),
                ],
                120,
                30,
            ),
            reply("", [call("c6", "read_file", path="missing.txt")], 300, 12),
            reply("All done.", [], 400, 20),
            model="claude-sonnet-4-5",
        ),
    )
    return _save(agent.run("Inspect a.txt"), out, "tools", [agent])


def subagent_run(out: Path) -> Recorded:
    """A delegation (depth 1), then a parent tool call in the same turn (§13.15)."""
    child = Agent(
        name="researcher",
        system="You research things.",
        tools=[read_file],
        provider=scripted(
            reply("", [call("r1", "read_file", path="notes.md")], 50, 5),
            reply("The notes say 42.", [], 70, 8),
        ),
    )
    lead = Agent(
        name="lead",
        system="You lead a team.",
        tools=[read_file, child.as_tool()],
        provider=scripted(
            reply(
                "Delegating.",
                [
                    call("p1", "read_file", path="plan.md"),
                    call("p2", "researcher", task="find the answer"),
                    call("p3", "read_file", path="after.md"),
                ],
                100,
                10,
            ),
            reply("The answer is 42.", [], 200, 20),
        ),
    )
    return _save(lead.run("What is the answer?"), out, "subagent", [lead, child])


def paused_runs(out: Path) -> tuple[Recorded, Recorded]:
    """``ask_human`` with no handler pauses the run; ``resume("yes")`` finishes it."""
    agent = Agent(
        name="deployer",
        system="You deploy.",
        tools=[ask_human(), read_file],
        provider=scripted(
            reply("", [call("h1", "ask_human", question="Deploy to prod? ✓")], 80, 8),
            reply("", [call("t1", "read_file", path="deploy.log")], 120, 9),
            reply("Deployed.", [], 150, 4),
        ),
    )
    paused = agent.run("Ship it")
    assert paused.paused, "the scripted run must pause at ask_human"
    first = _save(paused, out, "paused", [agent])
    return first, _save(paused.resume("yes"), out, "resumed", [agent])


def paused_child_runs(out: Path) -> tuple[Recorded, Recorded]:
    """A sub-agent asks the human: the pause happens at depth 1 (``pending_depth``)."""
    child = Agent(
        name="asker",
        system="You ask first.",
        tools=[ask_human()],
        provider=scripted(
            reply("", [call("q1", "ask_human", question="Which region?")], 40, 4),
            reply("eu-west", [], 60, 3),
        ),
    )
    lead = Agent(
        name="boss",
        system="You delegate.",
        tools=[child.as_tool()],
        provider=scripted(
            reply("", [call("d1", "asker", task="pick a region")], 90, 9),
            reply("Region chosen.", [], 110, 5),
        ),
    )
    paused = lead.run("Set up the cluster")
    assert paused.paused and paused.pending_depth == 1
    first = _save(paused, out, "paused_child", [lead, child])
    return first, _save(paused.resume("eu-west"), out, "resumed_child", [lead, child])


def policy_run(out: Path) -> Recorded:
    """Native Policy: deny, confirm rejected, confirm approved (``BLOCKED:`` results)."""
    answers: Callable[[str], str] = lambda q: "yes" if "send_sms" in q else "no"  # noqa: E731
    agent = Agent(
        name="ops",
        system="You operate.",
        on_human=answers,
        tools=[drop_table, send_email, send_sms, read_file],
        policy=Policy(deny=["drop_*"], confirm=["send_*"]),
        provider=scripted(
            reply(
                "",
                [
                    call("a", "drop_table", table="users"),
                    call("b", "send_email", to="ceo@example.com", body="hi"),
                    call("c", "send_sms", to="+4912345"),
                    call("d", "read_file", path="x"),
                ],
                100,
                10,
            ),
            reply("Done, some calls were blocked.", [], 150, 15),
        ),
    )
    return _save(agent.run("Clean up"), out, "policy", [agent])


def dry_run_run(out: Path) -> Recorded:
    """``Policy(dry_run=True)``: non-allowlisted tools are stubbed with ``DRY-RUN:``."""
    agent = Agent(
        name="planner",
        system="You plan.",
        tools=[read_file, drop_table],
        policy=Policy(allow=["read_*"], dry_run=True),
        provider=scripted(
            reply(
                "",
                [call("a", "read_file", path="db.cfg"), call("b", "drop_table", table="t")],
                60,
                6,
            ),
            reply("Plan ready.", [], 80, 8),
        ),
    )
    return _save(agent.run("Plan the cleanup"), out, "dry_run", [agent])


def budget_run(out: Path) -> Recorded:
    """``Policy(budget_tokens=500)`` stops after the call that crosses it."""
    loop = [reply(f"step {i}", [call(f"b{i}", "triple", n=i)], 200, 50) for i in range(5)]
    agent = Agent(
        name="spender",
        system="You spend.",
        tools=[triple],
        policy=Policy(budget_tokens=500),
        provider=scripted(*loop),
    )
    run = agent.run("Spend tokens")
    assert run.stop_reason == "budget"
    return _save(run, out, "budget", [agent])


def max_steps_run(out: Path) -> Recorded:
    """The loop runs out of ``max_steps`` while the model keeps calling tools."""
    loop = [reply(f"try {i}", [call(f"m{i}", "triple", n=i)], 30, 3) for i in range(6)]
    agent = Agent(
        name="looper", system="You loop.", tools=[triple], max_steps=3, provider=scripted(*loop)
    )
    run = agent.run("Loop forever")
    assert run.stop_reason == "max_steps"
    return _save(run, out, "max_steps", [agent])


def unicode_run(out: Path) -> Recorded:
    """A three-episode conversation in German, Japanese, emoji; the last via ``ask``."""
    agent = Agent(
        name="polyglot",
        system="Du bist höflich. 丁寧に。",
        clock=True,
        tools=[translate],
        provider=scripted(
            reply("Gern ✓", [call("u1", "translate", text="Grüße", lang="de")], 90, 9),
            reply("Grüße, schön ✓ — fertig 😀", [], 120, 12),
            reply("你好！我很好。", [], 130, 6),
            reply("", [call("u2", "translate", text="hi", lang="ja")], 140, 7),
            reply("こんにちは 🌸 (ja) — naïve café", [], 160, 9),
        ),
    )
    first = agent.run(["Grüß dich, wie geht's? ü ✓ 😀", "你好，你好吗？"])
    return _save(first.ask("Und auf Japanisch? 🇯🇵"), out, "unicode", [agent])


def big_run(out: Path, turns: int = 50, per_turn: int = 99) -> Recorded:
    """``turns`` model calls of ``per_turn`` tool calls each: 5,001 effects by default."""
    script = [
        reply(
            f"batch {t}",
            [call(f"k{t}_{j}", "tick", i=t * per_turn + j) for j in range(per_turn)],
            1000 + t,
            10,
        )
        for t in range(turns)
    ]
    script.append(reply("finished", [], 9000, 5))
    agent = Agent(
        name="grinder",
        system="You grind.",
        tools=[tick],
        max_steps=turns + 5,
        provider=scripted(*script),
    )
    return _save(agent.run("Grind"), out, "big", [agent])


class SummarizingProvider(ScriptedProvider):
    """Scripted, but answers the harness's own compaction prompt (not a recorded model call)."""

    def complete(
        self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> ModelResponse:
        if system.startswith("You compress"):
            return ModelResponse(text=f"summary of {len(messages[0]['content'])} chars ✓")
        return super().complete(system, messages, tools)


def compaction_run(out: Path) -> Recorded:
    """History compaction (default ``compact_keep=4``) fires again and again; summaries pile up."""
    loop = [
        reply(f"step {i} " + "x" * 200, [call(f"c{i}", "tick", i=i)], 100, 10) for i in range(6)
    ]
    agent = Agent(
        name="compactor",
        system="You compact.",
        tools=[tick],
        compact_after=150,
        provider=SummarizingProvider([*loop, reply("done", [], 100, 10)]),
    )
    return _save(agent.run("Go " + "y" * 300), out, "compaction", [agent])


def fork_run(out: Path) -> Recorded:
    """``run.fork(2, edit=...)``: the branch records an ``edit`` snapshot, then goes live."""
    agent = Agent(
        name="forker",
        system="You fork.",
        tools=[triple],
        clock=True,
        provider=scripted(
            reply("a", [call("x1", "triple", n=1)], 10, 1),
            reply("b", [call("x2", "triple", n=2)], 11, 1),
            reply("c", [], 12, 1),  # the original run ends here
            reply("d", [call("x3", "triple", n=3)], 13, 1),
            reply("e ✓", [], 14, 1),
        ),
    )
    branch = agent.run("fork me").fork(2, edit=lambda ctx: ctx.add_user("Be brief. ✓"))
    return _save(branch, out, "fork", [agent])


def all_traces(out: Path) -> dict[str, Recorded]:
    """Record every trace scenario once into ``out``, keyed by scenario name."""
    runs = {
        r.name: r
        for r in (
            tools_run(out),
            subagent_run(out),
            policy_run(out),
            dry_run_run(out),
            budget_run(out),
            max_steps_run(out),
            unicode_run(out),
            big_run(out),
            compaction_run(out),
            fork_run(out),
        )
    }
    for pair in (paused_runs(out), paused_child_runs(out)):
        runs.update({r.name: r for r in pair})
    return runs


# -- journal factories -----------------------------------------------------


def journal_complete(out: Path) -> tuple[Path, Run]:
    """A finished two-episode journaled run: no unfinished intent, nothing torn."""
    path = out / "complete.jsonl"
    agent = Agent(
        name="jw",
        system="Journaled ✓",
        journal=str(path),
        clock=True,
        tools=[read_file, explode],
        provider=scripted(
            reply(
                "", [call("j1", "read_file", path="a"), call("j2", "explode", reason="x")], 50, 5
            ),
            reply("ok ü", [], 60, 6),
            reply("second answer ✓", [], 70, 7),
        ),
    )
    return path, agent.run(["first", "second ✓"])


def paused_journal_agent(
    path: Path, on_human: Callable[[str], str] | None = None, skip: int = 0
) -> Agent:
    """An agent that asks the human first; without ``on_human`` its run pauses.

    ``skip`` drops scripted responses a recovered run replays from the journal.
    """
    script = [reply("", [call("q", "ask_human", question="Go?")], 40, 4), reply("went", [], 50, 5)]
    return Agent(
        name="jp",
        system="Ask first.",
        journal=str(path),
        tools=[ask_human()],
        on_human=on_human,
        provider=scripted(*script[skip:]),
    )


def journal_paused(out: Path) -> Path:
    """A journaled run paused on ``ask_human``: a trailing ``human`` intent."""
    path = out / "paused.jsonl"
    assert paused_journal_agent(path).run("Go somewhere").paused
    return path


def crashing_agent(path: Path, crash: bool = True, skip: int = 0) -> Agent:
    """A billing agent whose ``charge_card`` crashes the process (or, if not, succeeds).

    ``skip`` drops scripted responses a recovered run replays from the journal.
    """
    card = (
        charge_card
        if crash
        else Tool(
            charge_card.name,
            charge_card.description,
            lambda amount: f"charged {amount}",
            charge_card.input_schema,
        )
    )
    script = [
        reply(
            "", [call("r", "read_file", path="cart"), call("c", "charge_card", amount=42)], 70, 7
        ),
        reply("charged", [], 80, 8),
    ]
    return Agent(
        name="jc",
        system="You bill.",
        journal=str(path),
        tools=[read_file, card],
        provider=scripted(*script[skip:]),
    )


def journal_crashed(out: Path) -> Path:
    """A run that 'dies' inside a tool: a trailing ``tool:charge_card`` intent."""
    path = out / "crashed.jsonl"
    try:
        crashing_agent(path).run("Bill the customer")
    except Crash:
        return path
    raise AssertionError("charge_card should have crashed the run")  # pragma: no cover


def journal_torn(source: Path, path: Path) -> Path:
    """``source`` cut right after its last tool intent, plus a torn half line."""
    lines = source.read_bytes().splitlines(keepends=True)
    last_intent = max(
        i for i, line in enumerate(lines) if b'"type": "intent"' in line and b'"tool:' in line
    )
    path.write_bytes(b"".join(lines[: last_intent + 1]) + b'{"type": "effect", "seq": 9, "ki')
    return path


@contextmanager
def agent_inside_a_tool(path: Path, wait_s: float = 60.0) -> Iterator[subprocess.Popen[bytes]]:
    """A loom-harness agent in a process of its own, inside its slow tool ``wait_for_go``
    (step 1; :mod:`tests.core.agent_in_a_tool`): its journal at ``path`` ends with that
    tool's intent, and the process holds it open. A line on its stdin lets the tool
    return; the caller may kill it instead. Killed on exit if it still runs."""
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.core.agent_in_a_tool", str(path)],
        stdin=subprocess.PIPE,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    try:
        deadline = time.monotonic() + wait_s
        while b'"tool:wait_for_go"' not in (path.read_bytes() if path.exists() else b""):
            assert proc.poll() is None and time.monotonic() < deadline, "no tool intent"
            time.sleep(0.05)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)
        if proc.stdin is not None:
            proc.stdin.close()
