"""How a rule pattern meets a tool call (loom-format.md §7.1).

A call is named three ways and a pattern may hit any of them: the bare tool
name (``Bash``), the signature ``Bash({"command": "ls"})`` built from sorted
JSON, and that signature with each run of whitespace squeezed to one space
(padding ``rm`` and ``-rf`` apart does not dodge ``*rm -rf*``). Matching is
case-sensitive ``fnmatchcase`` because loom-harness matches that way, and a
policy must mean the same in both tools. Tabs and newlines inside arguments
are JSON-escaped in the signature, so they are not whitespace there.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any

from loom_core.formats.canonical import call_signature
from loom_core.shield.capabilities import infer_capabilities

signature = call_signature  # the shield's name for the one definition (§7.1)

_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Collapse every whitespace run to a single space."""
    return _WS.sub(" ", text)


def glob_matches(pattern: str, name: str, tool_input: Any) -> bool:
    """A plain (non-``cap:``) pattern against name, signature, normalised signature."""
    if fnmatchcase(name, pattern):
        return True
    sig = signature(name, tool_input)
    return fnmatchcase(sig, pattern) or fnmatchcase(normalize(sig), pattern)


def call_matches(pattern: str, name: str, tool_input: Any) -> bool:
    """Any rule pattern, ``cap:<capability>`` included, against one call."""
    if pattern.startswith("cap:"):
        return pattern[4:].strip() in infer_capabilities(name, tool_input)
    return glob_matches(pattern, name, tool_input)


def text_matches(text: str, pattern: str) -> bool:
    """A taint glob may occur anywhere in the text (it is wrapped in ``*...*``)."""
    return fnmatchcase(normalize(text), f"*{pattern}*")
