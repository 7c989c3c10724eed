"""``--help`` without reStructuredText: descriptions come from docstrings, whose
``literal`` markup reads as noise on a terminal.

Every parser of the CLI is a :class:`HelpParser` (subcommands inherit the class
from their parent), so a docstring reused as a description never shows its
backticks: ````x```` prints as ``x`` and ```x``` as ``'x'``.
"""

from __future__ import annotations

import argparse
import re

_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)
_SINGLE = re.compile(r"`([^`\s][^`]*)`")


def plain(text: str) -> str:
    """Help text as a terminal should show it."""
    return _SINGLE.sub(r"'\1'", _LITERAL.sub(r"\1", text))


class HelpParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage and help are :func:`plain`."""

    def format_help(self) -> str:
        return plain(super().format_help())

    def format_usage(self) -> str:
        return plain(super().format_usage())
