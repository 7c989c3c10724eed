"""The README stays a user's page: short, and every command it shows works as written.

Why: a README that grows back into a report stops being read, and a command that no longer
parses (a renamed flag, a removed subcommand) is the first thing a newcomer trips on.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from loom_core.cli.entry import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
SAMPLE = ROOT / "resources" / "sample.loom.json"
MAX_LINES = 250
_COMMAND = re.compile(r"python -m loom_core (\w[\w-]*)")
_SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.DOTALL)
# Commands that finish on their own and need no network: the README's are run in order.
RUNNABLE = {"summary", "steps", "convert", "checksum", "export-html", "fork", "diff"}
RUNNABLE |= {"doctor", "heal", "runs"}
EXIT_OK = {"diff": {0, 1}, "doctor": {0, 1}}  # 1 = "different" / "findings", as documented


def shell_lines(text: str) -> list[str]:
    """Each command line of the page's ``sh`` blocks, its trailing comment removed."""
    lines = []
    for block in _SH_BLOCK.findall(text):
        for line in block.splitlines():
            command = re.sub(r"\s+#\s.*$", "", line).strip()
            if command and not command.startswith("#"):
                lines.append(command)
    return lines


def readme_lines() -> list[str]:
    return shell_lines(README.read_text(encoding="utf-8"))


def loom_core_args(line: str, where: Path) -> list[str] | None:
    """The arguments after ``python -m loom_core`` with the placeholders made real, the
    optional parts (``[--json]``) given, or None for a line that is not such a command."""
    if not line.startswith("python -m loom_core "):
        return None
    words = shlex.split(line.replace("[", "").replace("]", ""))[3:]
    run = str(where / "run" / SAMPLE.name)
    real = {"RUN": run, "ID": "1", "JOURNAL": str(where / "run.journal.jsonl")}
    real["~/agent-runs"] = str(where / "run")
    return [real.get(word, word) for word in words]


def test_readme_stays_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, (
        f"README.md has {lines} lines (at most {MAX_LINES}): it is for users; measurements "
        "go to docs/PERFORMANCE.md, testing to docs/TESTING.md, details to docs/GUIDE.md"
    )


def test_readme_says_where_the_commands_run_before_the_first_one() -> None:
    text = README.read_text(encoding="utf-8")
    first = min(m.start() for m in _SH_BLOCK.finditer(text) if "python -m loom_core" in m.group(1))
    before = text[:first]
    assert ". .venv/bin/activate" in before and ".venv/bin/python -m loom_core" in before


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_named_exists(page: Path) -> None:
    named = set(_COMMAND.findall(page.read_text(encoding="utf-8")))
    parser = build_parser()
    known = next(a for a in parser._actions if a.dest == "command").choices  # type: ignore[union-attr]
    assert named <= set(known), named - set(known)


@pytest.mark.parametrize("line", readme_lines())
def test_every_readme_command_line_parses(line: str, tmp_path: Path) -> None:
    """Each line, with its optional parts, is accepted by the command's own parser."""
    words = shlex.split(line.replace("[", "").replace("]", ""))
    if words[0] == "make":
        targets = re.findall(r"^([\w.-]+):", (ROOT / "Makefile").read_text(), re.MULTILINE)
        assert words[1] in targets, f"the Makefile has no target {words[1]!r}"
        return
    if words[0] == "loom-desktop":
        from loom_desktop.__main__ import parse_args

        parse_args(words[1:])
        return
    args = loom_core_args(line, tmp_path)
    assert args is not None, f"the README shows a command the test does not know: {line}"
    try:
        build_parser().parse_args(args)
    except SystemExit as stop:
        pytest.fail(f"{line!r} does not parse (exit {stop.code})")


def test_the_venv_example_runs_through_the_venv_python() -> None:
    """The example that says how to run a command without activating the venv."""
    text = README.read_text(encoding="utf-8")
    example = re.search(r"`(\.venv/bin/python -m loom_core summary [^`]+)`", text)
    assert example is not None
    args = example.group(1).split()[3:]  # what follows "python -m loom_core"
    done = subprocess.run(
        [sys.executable, "-m", "loom_core", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_the_readme_commands_run_in_order_as_a_user_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every command that ends by itself, run in the README's order in a folder of its own
    (the sample copied there as RUN; the runs folder and library are the test's own),
    exits as the README says. A fork or heal that names no provider is given the offline
    scripted one: no test may reach a model API. In-process: the commands' own entry."""
    (tmp_path / "run").mkdir()
    shutil.copy(SAMPLE, tmp_path / "run" / SAMPLE.name)
    monkeypatch.chdir(tmp_path)
    ran = []
    for line in readme_lines():
        args = loom_core_args(line, tmp_path)
        if args is None or args[0] not in RUNNABLE:
            continue
        if args[0] in ("fork", "heal") and "--dry-run" not in args and "--provider" not in args:
            args += ["--provider", "scripted"]
        code = main(args)
        assert code in EXIT_OK.get(args[0], {0}), f"{line}: {capsys.readouterr().err}"
        ran.append(args[0])
    assert set(ran) == RUNNABLE, f"the README no longer shows {RUNNABLE - set(ran)}"
