"""The offline demo: a scripted fake model and a scripted agent (no API key, no network).

:mod:`.fake_model` is a small Anthropic Messages server (JSON and SSE) on
127.0.0.1 that answers from a fixed script; :mod:`.agent` is the agent that
talks to it through a proxy (``python -m loom_core.demo.agent``). The desktop's
Help ▸ Run offline demo puts a real proxy with a confirm rule between them.
Nothing here imports Qt or the test suite.
"""

from __future__ import annotations

from loom_core.demo.fake_model import CONFIRM_PATTERN, SCRIPT, FakeModelServer

__all__ = ["CONFIRM_PATTERN", "FakeModelServer", "SCRIPT"]
