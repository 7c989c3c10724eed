"""Real Inspect AI logs for the tests: inspect-ai runs small tasks and writes them.

Run as a script (``python tests/inspect_producer.py LOG_DIR``) in a subprocess, so the
eval's event loop, logging and imports stay out of the test process. The model is
inspect's own mock (``mockllm/model``) answering from the conversation so far; the
tools are real ``@tool`` functions run by inspect; no sandbox, no network. What the
tools task does, per sample: ``add`` (approved by an approver), ``lookup`` (raises a
ToolError), a sub-agent run as a tool (``helper``, its own ``add`` and an unknown
tool), then ``submit``; sample 7 also calls ``secret``, which the approver rejects.
It is written twice: as an ``.eval`` log and with ``log_format="json"`` (what
``inspect eval --log-format json`` writes). The graded task answers three questions
and is scored by ``model_graded_fact()``, whose grader is the same mock model (one call
per sample inside the ``scorers`` span; it grades the third answer wrong).

:func:`eval_log`, :func:`json_log` and :func:`graded_log` run it once per test process
and return a log's path; beside each, ``<log>.facts.json`` holds :func:`facts`.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TOKENS = {"cache_read": 50, "cache_write": 20, "reasoning": 3}


def _task() -> Any:
    from inspect_ai import Task
    from inspect_ai.agent import agent, as_tool, react
    from inspect_ai.approval import ApprovalPolicy, approver, auto_approver
    from inspect_ai.approval._approval import Approval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.scorer import match
    from inspect_ai.tool import ToolError, tool

    @tool
    def add() -> Any:
        async def execute(x: int, y: int) -> int:
            """Add two numbers.

            Args:
                x: the first
                y: the second
            """
            return x + y

        return execute

    @tool
    def lookup() -> Any:
        async def execute(name: str) -> str:
            """Look a name up.

            Args:
                name: who
            """
            raise ToolError(f"no entry for {name}")

        return execute

    @tool
    def secret() -> Any:
        async def execute() -> str:
            """Read the secret."""
            return "hunter2"

        return execute

    @approver
    def gate() -> Any:
        async def approve(message: Any, call: Any, view: Any, history: Any) -> Approval:
            if call.function == "secret":
                return Approval(decision="reject", explanation="secrets stay secret")
            return Approval(decision="approve", explanation="arithmetic is fine")

        return approve

    @agent
    def helper() -> Any:
        return react(name="helper", description="A helper agent", tools=[add()], submit=False)

    return Task(
        dataset=[
            Sample(input="What is 2+3?", target="5", id="a"),
            Sample(input=[ChatMessageUser(content="And 1+1? Try the secret.")], target="2", id=7),
        ],
        solver=react(tools=[add(), lookup(), secret(), as_tool(helper())]),
        scorer=match(),
        epochs=2,
        message_limit=60,  # a mistake in the script below ends the sample, not the test run
        approval=[ApprovalPolicy(gate(), ["add", "secret"]), ApprovalPolicy(auto_approver(), "*")],
    )


def _outputs(input: list[Any], tools: list[Any], _choice: Any, _config: Any) -> Any:
    """The mock model's answer, from the conversation so far (so every run is the same)."""
    from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage

    names = {t.name for t in tools}
    done = [m.function for m in input if isinstance(m, ChatMessageTool)]
    wants_secret = "secret" in str(input[1].content if len(input) > 1 else "")
    model = "mockllm/model"
    if "add" not in done:
        out = ModelOutput.for_tool_call(model, "add", {"x": 2, "y": 3}, content="adding first")
    elif "lookup" not in done:
        out = ModelOutput.for_tool_call(model, "lookup", {"name": "bob"})
    elif "helper" in names and "helper" not in done:
        out = ModelOutput.for_tool_call(model, "helper", {"input": "sub question"})
    elif wants_secret and "secret" in names and "secret" not in done:
        out = ModelOutput.for_tool_call(model, "secret", {})
    elif "submit" in names:
        out = ModelOutput.for_tool_call(model, "submit", {"answer": "5"})
    else:
        out = ModelOutput.from_content(model, "the helper says 5")
    n = len(input)
    out.usage = ModelUsage(
        input_tokens=100 + 10 * n,
        output_tokens=7 + n,
        # as inspect's providers count it: input_tokens excludes the cached tokens, the
        # total includes them (ModelUsage's docstring)
        total_tokens=107 + 11 * n + TOKENS["cache_read"] + TOKENS["cache_write"],
        input_tokens_cache_read=TOKENS["cache_read"],
        input_tokens_cache_write=TOKENS["cache_write"],
        reasoning_tokens=TOKENS["reasoning"],
    )
    return out


def _graded_task() -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import model_graded_fact
    from inspect_ai.solver import generate

    questions = [("What is 2+3?", "5"), ("Capital of France?", "Paris"), ("What is 10-4?", "6")]
    return Task(
        dataset=[Sample(input=q, target=t, id=i) for i, (q, t) in enumerate(questions, 1)],
        solver=generate(),
        scorer=model_graded_fact(),
        name="graded",
    )


GRADED_ANSWERS = {"2+3": "5", "France": "Paris", "10-4": "7"}  # the third is wrong


def _graded_outputs(input: list[Any], _tools: list[Any], _choice: Any, _config: Any) -> Any:
    """The solver's answer, or -- asked to grade -- the grader's verdict with its reasoning."""
    from inspect_ai.model import ModelOutput, ModelUsage

    prompt = str(input[-1].content)
    if "GRADE" in prompt:
        wrong = "10-4" in prompt
        text = "The answer is compared with the criterion. " + ("GRADE: I" if wrong else "GRADE: C")
    else:
        text = next((a for q, a in GRADED_ANSWERS.items() if q in prompt), "I do not know")
    out = ModelOutput.from_content("mockllm/model", text)
    out.usage = ModelUsage(
        input_tokens=len(prompt), output_tokens=len(text), total_tokens=len(prompt) + len(text)
    )
    return out


def main(log_dir: str) -> None:
    from inspect_ai import eval
    from inspect_ai.model import get_model

    written = {}
    runs = [
        ("eval", _task, _outputs, "eval"),
        ("json", _task, _outputs, "json"),
        ("graded", _graded_task, _graded_outputs, "eval"),
    ]
    for name, task, outputs, log_format in runs:
        model = get_model("mockllm/model", custom_outputs=outputs)
        (log,) = eval(
            task(),
            model=model,
            log_dir=f"{log_dir}/{name}",
            log_format=log_format,
            display="none",
            max_samples=1,
        )
        if log.status != "success":
            raise SystemExit(f"the {name} eval did not succeed: {log.status} {log.error}")
        Path(log.location + ".facts.json").write_text(json.dumps(facts(log.location)))
        written[name] = log.location
    print(json.dumps(written))


def facts(location: str) -> dict[str, Any]:
    """What inspect itself reads back from its log, per sample ``id:epoch`` (its own reader,
    ``read_eval_log``: pool references and attachments resolved by inspect)."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(location, resolve_attachments=True)
    out: dict[str, Any] = {
        "order": [f"{s.id}:{s.epoch}" for s in log.samples or []],
        "stats": {k: [v.input_tokens, v.output_tokens] for k, v in log.stats.model_usage.items()},
    }
    for sample in log.samples or []:
        out[f"{sample.id}:{sample.epoch}"] = _sample_facts(sample)
    return out


def _sample_facts(sample: Any) -> dict[str, Any]:
    spans = {e.id: e for e in sample.events if e.event == "span_begin"}
    models = [e for e in sample.events if e.event == "model"]
    tools = [e for e in sample.events if e.event == "tool"]
    usage = [e.output.usage for e in models if e.output.usage is not None]
    graded = _scorers_calls(sample.events, spans)
    return {
        "model_calls": len(models),
        "helper_calls": sum(_span_name(spans, e.span_id) == "helper" for e in models),
        "tool_calls": [e.function for e in tools],
        "tool_errors": [e.error.message for e in tools if e.error is not None],
        "approvals": [
            e.decision for e in sample.events if e.event == "approval" and e.approver != "auto"
        ],
        "input_tokens": sum(u.input_tokens for u in usage),
        "output_tokens": sum(u.output_tokens for u in usage),
        "cache_read": sum(u.input_tokens_cache_read or 0 for u in usage),
        "cache_write": sum(u.input_tokens_cache_write or 0 for u in usage),
        "reasoning": sum(u.reasoning_tokens or 0 for u in usage),
        "inputs": [[[m.role, m.text] for m in e.input] for e in models],
        "texts": [e.output.message.text for e in models],
        "model_usage": {k: v.input_tokens for k, v in sample.model_usage.items()},
        "scorer_calls": [e.output.message.text for e in models if id(e) in graded],
        "output": sample.output.completion,
        "scores": {k: v.value for k, v in (sample.scores or {}).items()},
        "depths": _depths(models + tools, spans),
    }


def _depths(events: list[Any], spans: dict[str, Any]) -> list[int]:
    """How deep each model and tool event sits: the ``agent`` spans around it, less those
    around the first model call (the task's own agent is depth 0)."""

    def agents(span: Any) -> int:
        n = 0
        while span in spans:
            n += spans[span].type == "agent"
            span = spans[span].parent_id
        return n

    counts = [agents(e.span_id) for e in events]
    return sorted({c - (counts[0] if counts else 0) for c in counts})


def _span_name(spans: dict[str, Any], span_id: Any) -> Any:
    return spans[span_id].name if span_id in spans else None


def _scorers_calls(events: list[Any], spans: dict[str, Any]) -> set[int]:
    """The model events a scorer made: inside a span of type ``scorer`` (newer logs), or
    between a scorer's ``step`` begin and end events (older ones)."""
    found, open_steps = set(), 0
    for e in events:
        if e.event == "step" and e.type == "scorer":
            open_steps += 1 if e.action == "begin" else -1
        elif e.event == "model":
            span, inside = e.span_id, open_steps > 0
            while span in spans and not inside:
                inside = spans[span].type == "scorer"
                span = spans[span].parent_id
            if inside:
                found.add(id(e))
    return found


@functools.cache
def _logs() -> dict[str, str]:
    """Run the producer once per test process: every log it wrote, by name."""
    folder = Path(tempfile.mkdtemp(prefix="loom-inspect-"))
    atexit.register(shutil.rmtree, folder, True)
    env = dict(os.environ, XDG_DATA_HOME=str(folder / "data"), XDG_CACHE_HOME=str(folder / "cache"))
    env.pop("INSPECT_LOG_DIR", None)
    done = subprocess.run(
        [sys.executable, __file__, str(folder / "logs")],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    written: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return written


def eval_log() -> Path:
    """The tools task's ``.eval`` log (and beside it ``<log>.facts.json``: :func:`facts`)."""
    return Path(_logs()["eval"])


def json_log() -> Path:
    """The same task written with ``log_format="json"``."""
    return Path(_logs()["json"])


def graded_log() -> Path:
    """The task scored by ``model_graded_fact()``."""
    return Path(_logs()["graded"])


if __name__ == "__main__":
    if sys.argv[1] == "--facts":  # inspect's own reading of logs others wrote
        print(json.dumps({path: facts(path) for path in sys.argv[2:]}))
    else:
        main(sys.argv[1])
