"""One task, two producers: the travel agent of tests/core/formats/otlp_agents.py recorded
by OpenTelemetry (OpenInference around the real ``openai`` client, fake upstream) and as a
Claude Code transcript of the same conversation.

Claude Code has no producer library, so its side is written with the documented record
types (tests/core/formats/claude_fixtures.py) from the same script the fake upstream
answered with: the same tool calls and results, the same usage per call. What is the
producers' own: the ids (``toolu_…`` against ``call_…``) and the tool names, since Claude
Code reaches the travel tools through an MCP server and names them
``mcp__travel__<tool>``.
"""

from __future__ import annotations

from pathlib import Path

from tests.core.formats.claude_fixtures import Session, text, tool_use
from tests.core.formats.otlp_agents import PROMPT, RESULTS, SCRIPT, Recorded, run_agent
from tests.core.formats.otlp_producers import write_jsonl


def otel_run(folder: Path) -> tuple[Path, Recorded]:
    """The agent recorded by OpenInference, as the OTLP file exporter writes it."""
    rec = run_agent("openinference-openai")
    return write_jsonl(folder / "travel.otlp.jsonl", [[s] for s in rec.spans]), rec


def claude_run(folder: Path, hotel: str = "Storchen") -> Path:
    """The same task in a Claude Code session; ``hotel``: what it books (another hotel than
    the OTel run's Storchen makes the runs diverge from the second model call on)."""
    session = Session()
    session.prompt(PROMPT)
    ids: dict[str, str] = {}
    for reply in SCRIPT:
        if not reply.calls:
            session.reply([text(reply.text.replace("Storchen", hotel))], usage=(*reply.usage, 0, 0))
            continue
        blocks = []
        for call_id, name, args in reply.calls:
            ids[call_id] = f"toolu_{call_id[-1]}{len(ids):02d}"
            if name == "book":
                args = {"hotel": hotel}
            blocks.append(tool_use(ids[call_id], f"mcp__travel__{name}", **args))
        session.reply(blocks, usage=(*reply.usage, 0, 0))
        for call_id, _name, _args in reply.calls:
            result = RESULTS[call_id].replace("#42", "#42" if hotel == "Storchen" else "#43")
            session.result(ids[call_id], result)
    return session.write(folder / "claude" / f"{session.session_id}.jsonl")
