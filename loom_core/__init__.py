"""loom_core: the Qt-free library behind Loom Desktop.

It reads and writes the trace, journal and wirelog formats of loom-harness
(see ``loom-format.md``) and derives the views the desktop shows: steps,
context frames, deltas, tokens and cost. Nothing here may import Qt, so the
same code serves the GUI, the CLI and the proxy process.
"""

__version__ = "0.1.0"
