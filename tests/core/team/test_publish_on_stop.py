"""``--publish`` of the proxy and the OTLP receiver: a finished recording reaches the team.

Real processes, a real PostgreSQL library and S3 bucket: the proxy records one call of the
real ``anthropic`` client and the receiver one trace of the real OpenTelemetry SDK; at
SIGTERM each publishes its file, which another laptop then lists with its bucket URL. A
library that cannot be reached costs nothing recorded: the file stays and the line says
how to publish it later.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import anthropic

from tests.core.clis import ROOT
from tests.core.live.otlp_helpers import sdk_tracer
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import ANTHROPIC_KEY, running_upstream
from tests.core.proxy.procs import ProxyProcess, wait_for
from tests.core.team.test_team_library import Laptop


def _team(pg_url: str, bucket: str, tmp_path: Path) -> tuple[Laptop, Laptop]:
    a, b = Laptop("laptop-a", tmp_path, pg_url), Laptop("laptop-b", tmp_path, pg_url)
    a.run("store", f"{bucket}/team")
    return a, b


def test_the_proxy_publishes_its_trace_when_it_stops(
    pg_url: str, bucket: str, tmp_path: Path
) -> None:
    a, b = _team(pg_url, bucket, tmp_path)
    save = a.folder / "rec.loom.json"
    with running_upstream() as fake:
        fake.script(Reply(text="hello"))
        flags = ("--target", fake.url, "--save", str(save), "--publish")
        with ProxyProcess(tmp_path, *flags, env=a.env) as proxy:
            client = anthropic.Anthropic(base_url=proxy.url, api_key=ANTHROPIC_KEY, max_retries=0)
            reply = client.messages.create(
                model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
            )
            assert reply.content[0].text == "hello"
            assert proxy.stop() == 0
            err = proxy.err.read_text()
    assert f"{save}: published to s3://" in err, err
    [row] = [r for r in b.json("list") if r["host"] == "laptop-a"]
    assert row["path"] == str(save) and str(row["url"]).startswith(f"{bucket}/team/")
    assert row["steps"] >= 1 and save.exists()


def test_the_receiver_publishes_each_trace_and_a_down_library_loses_nothing(
    pg_url: str, bucket: str, tmp_path: Path
) -> None:
    a, b = _team(pg_url, bucket, tmp_path)
    down = {
        **a.env,
        "LOOM_LIBRARY_URL": "postgresql://loom@127.0.0.1:1/nothing",
        "LOOM_LIBRARY_RETRY_SECONDS": "2",  # how long it tries before it gives up
    }
    for env, name in ((a.env, "up"), (down, "down")):
        save = tmp_path / name
        out, err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
        with open(out, "wb") as o, open(err, "wb") as e:
            proc = subprocess.Popen(
                [sys.executable, "-m", "loom_core", "otlp-receive", "--port", "0",
                 "--save", str(save), "--publish"],
                cwd=ROOT, stdout=o, stderr=e, env=env,
            )  # fmt: skip
        try:
            found = wait_for(
                lambda o=out: re.search(r"listening on (http://127\.0\.0\.1:\d+)/", o.read_text()),
                what="the listening line",
            )
            with sdk_tracer(found.group(1)) as (tracer, memory):
                with tracer.start_as_current_span("chat fake-1") as span:
                    span.set_attribute("gen_ai.operation.name", "chat")
                    span.set_attribute("gen_ai.request.model", "fake-1")
                    span.set_attribute("gen_ai.usage.input_tokens", 11)
                    span.set_attribute("gen_ai.usage.output_tokens", 3)
            trace = f"{memory.get_finished_spans()[0].context.trace_id:032x}"
            line = f"trace {trace} -> "
            wait_for(lambda o=out, t=line: t in o.read_text(), what="the trace line")
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(120) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        path = save / f"{trace}.otlp.jsonl"
        assert path.exists()  # recorded, published or not
        said = err.read_text()
        if name == "up":
            assert f"otlp-receive: {path}: published to s3://" in said, said
        else:
            assert f"otlp-receive: {path}: not published (" in said, said
            assert f"runs publish {path}" in said
    rows = [r for r in b.json("list") if r["host"] == "laptop-a"]
    assert [(Path(str(r["path"])).parent.name, r["tokens_in"]) for r in rows] == [("up", 11)]
