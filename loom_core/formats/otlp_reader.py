"""The OpenTelemetry reader: the whole-file load of :mod:`.otlp` and the appended-lines
parser of :mod:`.otlp_lines` named as one format.

Why a module of its own: the line parser builds its run with the whole load's steps, so
it imports :mod:`.otlp`; the reader names both, and defining it in :mod:`.otlp` would tie
the two modules into an import cycle.
"""

from __future__ import annotations

from loom_core.formats.foreign import ForeignReader
from loom_core.formats.otlp import PATTERNS, load_otlp, sniff
from loom_core.formats.otlp_lines import AppendedOtlp
from loom_core.formats.otlp_logs import sibling_logs

__all__ = ["READER"]

READER = ForeignReader(
    name="otlp",
    label="OpenTelemetry (OTLP) trace",
    patterns=PATTERNS,
    sniff=sniff,
    load=load_otlp,
    companions=sibling_logs,
    lines=AppendedOtlp,
)
