"""``--help`` without reStructuredText: descriptions come from docstrings, whose
``literal`` markup reads as noise on a terminal.

Every parser of the CLI is a :class:`HelpParser` (subcommands inherit the class
from their parent), so a docstring reused as a description never shows its
backticks: ````x```` prints as ``x`` and ```x``` as ``'x'``.
"""

from __future__ import annotations

import argparse
import re
import sys

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


# characters a terminal or str.splitlines() breaks a line at, shown as their escape
_BREAKS = {c: f"\\u{c:04x}" for c in (0x0B, 0x0C, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029)}
_BREAKS.update({ord("\n"): "\\n", ord("\r"): "\\r"})


def print_error(message: str) -> None:
    """``error: MESSAGE`` on stderr, on one line whatever the message holds (it can quote
    a file's text, e.g. a step's kind, and the CLI's promise is one line per refusal)."""
    print(f"error: {message.translate(_BREAKS)}", file=sys.stderr)
