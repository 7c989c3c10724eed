"""``python -m loom_core record -- python script.py``, end to end, as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.core.clis import ROOT
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import KEYS, grep_keys, loom_accepts
from tests.core.proxy.test_persistence import upstream  # noqa: F401  (fixture)

SCRIPT = textwrap.dedent("""
    import os, sys
    import anthropic, openai
    # no base_url, no key given: the SDKs read ANTHROPIC_BASE_URL / OPENAI_BASE_URL (set
    # by record) and ANTHROPIC_API_KEY / OPENAI_API_KEY (set by the test)
    a = anthropic.Anthropic(max_retries=0, timeout=10)
    o = openai.OpenAI(max_retries=0, timeout=10)
    m = a.messages.create(model="claude-test", max_tokens=9,
                          messages=[{"role": "user", "content": "Plan the trip"}])
    c = o.chat.completions.create(model="gpt-test",
                                  messages=[{"role": "user", "content": "Pack the bags"}])
    print(m.content[0].text, "|", c.choices[0].message.content, "|", os.environ["no_proxy"])
    sys.exit(3)
""")


def test_record_runs_the_command_and_finalizes(tmp_path: Path, upstream: FakeUpstream) -> None:  # noqa: F811
    script = tmp_path / "agent.py"
    script.write_text(SCRIPT)
    save = tmp_path / "rec.loom.json"
    upstream.script(Reply(text="planned"), Reply(text="packed"))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "loom_core",
            "record",
            "--target",
            upstream.url,
            "--save",
            str(save),
            "--",
            sys.executable,
            str(script),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ANTHROPIC_API_KEY": KEYS[0], "OPENAI_API_KEY": KEYS[1]},
    )
    assert done.returncode == 3, done.stderr  # the command's exit code
    answer, _, no_proxy = done.stdout.strip().partition(" | packed | ")
    assert answer == "planned" and "127.0.0.1" in no_proxy.split(",")
    assert "loom proxy on http://127.0.0.1:" in done.stderr
    assert f"recorded 2 step(s), 36 tokens -> {save}" in done.stderr
    trace = json.loads(save.read_text())
    assert trace["episodes"] == ["Plan the trip", "Pack the bags"] and trace["output"] == "packed"
    ws = trace["workspace"]
    assert list(trace)[-2:] == ["workspace", "checksum"]
    assert ws["argv"] == [sys.executable, str(script)] and ws["dialect"] == "anthropic"
    assert ws["cwd"] == str(ROOT) and ws["recorded_at"].endswith("+00:00")
    assert set(ws) >= {"cwd", "os", "python", "recorded_at", "argv", "dialect"}
    loom_accepts(save)
    assert grep_keys(tmp_path) == []  # headers (the keys) are never written anywhere
