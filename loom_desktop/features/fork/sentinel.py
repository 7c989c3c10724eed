"""``NOTHING``: "no tool result supplied" when a paused branch is continued (``None`` is a
valid tool result, so it cannot say that).

A module of its own so the branch bars can name it without importing the fork engine
(:mod:`.work` pulls in the providers and the proxy's wire handling): the window builds
its fork menu and shows a branch's bar long before, if ever, a fork runs.
"""

from __future__ import annotations

from typing import Any

NOTHING: Any = object()
