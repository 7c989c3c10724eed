"""``python -m loom_core otlp-receive``: a real process, the real SDK exporter, SIGTERM."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.clis import ROOT, core
from tests.core.live.otlp_helpers import sdk_tracer, stored_spans
from tests.core.proxy.procs import wait_for


def test_receives_prints_each_trace_and_stops_on_sigterm(tmp_path: Path) -> None:
    out, err = tmp_path / "out", tmp_path / "err"
    save = tmp_path / "saved"
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(
            [sys.executable, "-m", "loom_core", "otlp-receive", "--port", "0", "--save", str(save)],
            cwd=ROOT,
            stdout=o,
            stderr=e,
        )
    try:
        found = wait_for(
            lambda: re.search(r"listening on (http://127\.0\.0\.1:\d+)/v1/traces", out.read_text()),
            what="the listening line",
        )
        endpoint = found.group(1)
        assert f"OTEL_EXPORTER_OTLP_ENDPOINT={endpoint}" in out.read_text()
        with sdk_tracer(endpoint) as (tracer, memory):
            with tracer.start_as_current_span("agent"):
                with tracer.start_as_current_span("chat fake-1"):
                    pass
        trace_id = f"{memory.get_finished_spans()[0].context.trace_id:032x}"
        wait_for(lambda: f"trace {trace_id} -> " in out.read_text(), what="the new-trace line")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert "stopped; 1 trace(s) in 1 file(s), 2 span(s) in 2 request(s)" in err.read_text()
    assert [s["name"] for s in stored_spans(save / f"{trace_id}.otlp.jsonl")] == [
        "chat fake-1",
        "agent",
    ]


@pytest.mark.parametrize(
    "args, cause",
    [
        (["--host", "0.0.0.0"], "not a loopback address"),
        (["--port", "70000"], "--port: must be 0-65535"),
        (["--port", "abc"], "--port: not a number"),
        (["--max-body-mb", "-1"], "--max-body-mb"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: list[str], cause: str) -> None:
    result = core("otlp-receive", *args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and cause in result.stderr
    assert "Traceback" not in result.stderr


def test_a_taken_port_or_a_file_as_folder_exit_2(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = core("otlp-receive", "--port", str(port), "--save", tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert f"127.0.0.1:{port}" in result.stderr
    blocker = tmp_path / "file"
    blocker.write_text("mine")
    result = core("otlp-receive", "--port", "0", "--save", blocker / "sub")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert str(blocker) in result.stderr and blocker.read_text() == "mine"
