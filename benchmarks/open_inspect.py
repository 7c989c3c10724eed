"""Benchmark: open one sample of ~N events from an Inspect AI log; print one JSON line.

    python benchmarks/open_inspect.py --events 100000 --json
    python benchmarks/open_inspect.py --events 10000 --samples 50 --log-format json --json

With ``--log-format json`` the log is one JSON object (``inspect eval --log-format json``)
holding ``--samples`` copies of the sample, and the figures are those of opening its first
sample (``load_s``) against ``json.loads`` of the whole file (``json_loads_s``: what a
reader that parses the log whole pays before it can show anything) and of that one
sample's JSON alone (``sample_loads_s``: the least any reader must do).

The log is written by inspect-ai itself (its dev-extra install): a one-sample eval on its
mock model, whose sample is then given N events (per turn: a model call sent a window of
the conversation, a tool span, the tool call, the span's end) and written again with
``write_eval_log``, so the member is condensed (message pool, attachments) and
Zstandard-compressed as real logs are. That happens in a child process: inspect
monkey-patches ``zipfile`` on import, and the reader must be timed without it.

Figures (medians of 3): ``unzip_s`` decompressing the sample member alone,
``json_loads_s`` a plain ``json.loads`` of the decompressed member (what any reader must
at least do), ``load_s`` our :func:`load_sample` from the file's bytes (unzip, decode, the
loom trace and its checksum; inputs and source records stay lazy), ``timeline_s`` the
derived views on top, ``inspect_read_s`` inspect's own ``read_eval_log_sample`` (timed in
the child), ``ratio`` load / json_loads.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.open_trace import _median  # noqa: E402 - after the path is set

WINDOW = 20  # messages of the conversation each model call is sent (besides system + user)


def make_log(
    events: int, folder: str, samples: int = 1, log_format: str = "eval"
) -> dict[str, object]:
    """(In the child) write the log; return its path and inspect's own read time."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.event import ModelEvent, SpanBeginEvent, SpanEndEvent, ToolEvent
    from inspect_ai.log import read_eval_log_sample, write_eval_log
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
        GenerateConfig,
        ModelOutput,
        ModelUsage,
    )
    from inspect_ai.solver import generate
    from inspect_ai.tool import ToolCall, ToolInfo

    (log,) = eval(
        Task(dataset=[Sample(input="start", id=1)], solver=generate()),
        model="mockllm/model",
        log_dir=folder,
        display="none",
    )
    assert log.samples
    head = [
        ChatMessageSystem(content="You are a careful agent. " * 8),
        ChatMessageUser(content="go"),
    ]
    history: list[object] = []
    tool = ToolInfo(name="bash", description="Run a shell command")
    out: list[object] = []
    for t in range(events // 4):
        call = ToolCall(id=f"c{t}", function="bash", arguments={"cmd": f"ls -la /data/{t}"})
        output = ModelOutput.for_tool_call(
            "mockllm/model", "bash", call.arguments, tool_call_id=call.id
        )
        output.usage = ModelUsage(input_tokens=900 + t % 100, output_tokens=40, total_tokens=940)
        out.append(
            ModelEvent(
                model="mockllm/model",
                input=[*head, *history[-WINDOW:]],
                tools=[tool],
                tool_choice="auto",
                config=GenerateConfig(),
                output=output,
            )
        )
        result = f"total {t}\n" + "-rw-r--r-- 1 user user 4096 file.txt\n" * 6
        out += [
            SpanBeginEvent(id=f"s{t}", name="bash", type="tool"),
            ToolEvent(id=call.id, function="bash", arguments=call.arguments, result=result),
            SpanEndEvent(id=f"s{t}"),
        ]
        history += [
            ChatMessageAssistant(content=f"step {t}", tool_calls=[call]),
            ChatMessageTool(content=result, tool_call_id=call.id, function="bash"),
        ]
    log.samples[0].events = out  # type: ignore[assignment]
    log.samples = [log.samples[0].model_copy(update={"id": i}) for i in range(1, samples + 1)]
    path = str(Path(folder) / f"big.{log_format}")
    write_eval_log(log, path, format=log_format)  # type: ignore[arg-type]
    started = time.perf_counter()
    read_eval_log_sample(path, id=1, epoch=1)
    return {"path": path, "inspect_read_s": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--samples", type=int, default=1, help="copies of the sample")
    parser.add_argument("--log-format", choices=("eval", "json"), default="eval")
    parser.add_argument("--keep", metavar="PATH", help="also copy the log written to PATH")
    parser.add_argument("--make", help=argparse.SUPPRESS)  # the child: write the log here
    args = parser.parse_args()
    if args.make:
        print(json.dumps(make_log(args.events, args.make, args.samples, args.log_format)))
        return
    with tempfile.TemporaryDirectory(prefix="loom-inspect-bench-") as folder:
        more = ["--samples", str(args.samples), "--log-format", args.log_format]
        child = subprocess.run(
            [sys.executable, __file__, "--events", str(args.events), *more, "--make", folder],
            capture_output=True,
            text=True,
            check=True,
        )
        made = json.loads(child.stdout.strip().splitlines()[-1])
        if args.keep:
            import shutil

            shutil.copy(made["path"], args.keep)
        show = report_json if args.log_format == "json" else report
        show(Path(made["path"]), float(made["inspect_read_s"]), args.json)


def report(path: Path, inspect_read_s: float, as_json: bool) -> None:
    from loom_core.formats.inspect_eval import load_sample
    from loom_core.formats.zipread import read_member
    from loom_core.views.timeline import build_timeline

    data = path.read_bytes()
    with zipfile.ZipFile(path) as zf:
        unzip_s = _median(lambda: read_member(zf, "samples/1_epoch_1.json", data, str(path)))
        member = read_member(zf, "samples/1_epoch_1.json", data, str(path))
    json_s = _median(lambda: json.loads(member))
    load_s = _median(lambda: load_sample(data, str(path), "1", 1))
    doc = load_sample(data, str(path), "1", 1)
    timeline_s = _median(lambda: build_timeline(doc))
    facts = {
        "events": len(json.loads(member)["events"]),
        "effects": len(doc.effects),
        "file_mb": round(len(data) / 2**20, 1),
        "member_mb": round(len(member) / 2**20, 1),
        "unzip_s": round(unzip_s, 3),
        "json_loads_s": round(json_s, 3),
        "load_s": round(load_s, 3),
        "timeline_s": round(timeline_s, 3),
        "inspect_read_s": round(inspect_read_s, 3),
        "ratio": round(load_s / json_s, 2),
    }
    _print(facts, as_json)


def report_json(path: Path, inspect_read_s: float, as_json: bool) -> None:
    from loom_core.formats.inspect_eval import load_sample

    data = path.read_bytes()
    whole_s = _median(lambda: json.loads(data))
    samples = json.loads(data)["samples"]
    first = json.dumps(samples[0]).encode()
    sample_s = _median(lambda: json.loads(first))
    load_s = _median(lambda: load_sample(data, str(path), "1", 1))
    facts = {
        "samples": len(samples),
        "file_mb": round(len(data) / 2**20, 1),
        "json_loads_s": round(whole_s, 3),
        "sample_loads_s": round(sample_s, 3),
        "load_s": round(load_s, 3),
        "inspect_read_s": round(inspect_read_s, 3),
        "ratio_to_whole": round(load_s / whole_s, 2),
    }
    _print(facts, as_json)


def _print(facts: dict[str, object], as_json: bool) -> None:
    print(json.dumps(facts) if as_json else "\n".join(f"{k}: {v}" for k, v in facts.items()))


if __name__ == "__main__":
    main()
