"""No ``--help`` of any command shows reStructuredText markup (docstrings become descriptions)."""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest

from loom_core.cli.entry import build_parser
from loom_core.cli.help import plain
from loom_core.demo import agent as demo_agent
from loom_core.fork import agent_cli


def _commands(parser: argparse.ArgumentParser, path: list[str]) -> Iterator[list[str]]:
    yield path
    for action in parser._actions:  # argparse has no public walk of subcommands
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, [*path, name])


def _help(main: Callable[[list[str]], object], args: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        main([*args, "--help"])
    assert stop.value.code == 0
    return out.getvalue()


def test_no_help_of_any_subcommand_shows_backticks() -> None:
    paths = list(_commands(build_parser(), []))
    assert len(paths) > 10 and ["heal"] in paths
    for path in paths:
        text = _help(lambda argv: build_parser().parse_args(argv), path)
        assert "``" not in text and "`" not in text, (path, text)
    assert "python -m loom_core heal TRACE" in _help(
        lambda a: build_parser().parse_args(a), ["heal"]
    )


@pytest.mark.parametrize("main", [demo_agent.main, agent_cli.main])
def test_helper_programs_help_is_plain_too(main: Callable[[list[str]], object]) -> None:
    assert "`" not in _help(main, [])


def test_desktop_help_is_plain() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loom_desktop", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "`" not in done.stdout and "time-travel" in done.stdout


def test_plain_keeps_the_words() -> None:
    assert plain("run ``python -m x`` as `summary` shows") == "run python -m x as 'summary' shows"
