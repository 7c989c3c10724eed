"""``python -m loom_core``: the entry point and one module per command."""

from loom_core.cli.entry import main

__all__ = ["main"]
