"""``summary``/``checksum``/``convert`` load only what they use: a big trace's
``summary --json`` is timed against a bare ``json.load`` process (issue 14)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"
_PROBE = """
import contextlib, io, json, sys
from loom_core.cli.entry import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
heavy = ("loom_core.proxy.commands", "loom_core.cli.diff", "loom_core.cli.watch", "aiohttp")
print(json.dumps({"code": code, "out": out.getvalue(), "loaded": [m for m in heavy if m in sys.modules]}))
"""


def _run(*argv: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_summary_json_does_not_import_the_other_commands() -> None:
    result = _run("summary", "--json", str(SAMPLE))
    assert result["code"] == 0 and json.loads(result["out"])["checksum"] == "valid"
    assert result["loaded"] == []


def test_other_commands_still_parse_with_the_whole_parser() -> None:
    result = _run("steps", str(SAMPLE))
    assert result["code"] == 0 and "loom_core.cli.diff" in result["loaded"]


_FORK_PROBE = """
import contextlib, io, json, os, sys
from loom_core.formats import checksum_plan, fastcheck
fastcheck.MIN_PARALLEL_BYTES, checksum_plan.CHUNK_BYTES = 0, 1
real, seen = os.fork, []
def fork():
    seen.append(sorted(m for m in ("pydantic", "loom_core.formats.document") if m in sys.modules))
    return real()
os.fork = fork
from loom_core.cli.entry import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "heavy_at_fork": seen}))
"""


def test_summary_json_forks_its_checksum_child_before_the_heavy_imports() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _FORK_PROBE, "summary", "--json", str(SAMPLE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == 0 and json.loads(result["out"])["checksum"] == "valid"
    assert result["heavy_at_fork"] == [[]]  # forked once, with neither the schema nor pydantic
