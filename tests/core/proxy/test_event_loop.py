"""The proxy process's event loop (``--event-loop``): uvloop where installed, else asyncio.

Decided: ``auto`` (the default) runs on uvloop when it can be imported and on the
standard loop otherwise; either loop records every exchange and enforces
``--upstream-timeout``; asking for uvloop where it is missing is exit 2 with one
line naming the cause. The ready file says which loop runs.
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anthropic
import pytest

from tests.core.clis import ROOT
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import ANTHROPIC_KEY, CLIENT_S, running_upstream
from tests.core.proxy.procs import ProxyProcess

HI = [{"role": "user", "content": "hi"}]
HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream() as fake:
        yield fake


@pytest.mark.parametrize("choice", ["auto", "asyncio", "uvloop"])
def test_each_loop_records_and_times_out(
    tmp_path: Path, upstream: FakeUpstream, choice: str
) -> None:
    if choice == "uvloop" and not HAVE_UVLOOP:
        pytest.skip("uvloop is not installed here")
    expected = "asyncio" if choice == "asyncio" or not HAVE_UVLOOP else "uvloop"
    save = tmp_path / "run.loom.json"
    flags = (
        "--target",
        upstream.url,
        "--save",
        str(save),
        "--event-loop",
        choice,
        "--upstream-timeout",
        "2",  # far above what "one" and "two" need on a loaded machine
    )
    upstream.script(Reply(text="one"), Reply(text="late", stall=math.inf), Reply(text="two"))
    with ProxyProcess(tmp_path, *flags) as proxy:
        assert proxy.ready["event_loop"] == expected
        client = anthropic.Anthropic(
            base_url=proxy.url, api_key=ANTHROPIC_KEY, max_retries=0, timeout=CLIENT_S
        )
        client.messages.create(model="m", max_tokens=5, messages=HI)
        with pytest.raises(anthropic.APIStatusError) as err:
            client.messages.create(model="m", max_tokens=5, messages=HI)
        assert err.value.status_code == 504
        with client.messages.stream(model="m", max_tokens=5, messages=HI) as s:
            assert s.get_final_text() == "two"
        assert proxy.stop() == 0
    trace = json.loads(save.read_text())
    assert len(trace["wire"]) == 2 and trace["output"] == "two"  # the 504 is not recorded


def test_uvloop_asked_for_but_missing_is_exit_2(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['uvloop'] = None\n"  # makes `import uvloop` fail
        "from loom_core.cli.entry import main\n"
        "sys.exit(main(sys.argv[1:]))"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "proxy",
            "--port",
            "0",
            "--event-loop",
            "uvloop",
            "--save",
            str(tmp_path / "run.loom.json"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "error: --event-loop uvloop: uvloop is not installed (import of uvloop halted; "
        "None in sys.modules)"
    ]
    assert not (tmp_path / "run.loom.json").exists()
