"""The app's long-lived children (a proxy, the demo's agent) run in a process session of their own.

Why: a child started plainly stays in the app's process group, so every signal meant
for the app's group reaches it too: Ctrl-C, Ctrl-Z or a hang-up of the terminal that
ran ``make run``, or a job manager stopping the app's group. The proxy would then stop
(or freeze) under its owner's feet and the agent waiting on it would see "Server
disconnected". In a session of its own a child gets only the signals its owner sends
it; the owner stops it on every way out (house rule 6), and the app turns SIGINT,
SIGTERM and SIGHUP into a clean close (:mod:`loom_desktop.infra.quit_signals`).
Windows has no sessions; a new process group keeps the console's Ctrl-C and Ctrl-Break
to the app's own group there.
"""

from __future__ import annotations

import sys
from typing import Any

from PySide6.QtCore import QProcess

CREATE_NEW_PROCESS_GROUP = 0x00000200  # Windows' CreateProcess flag


def own_session(proc: QProcess) -> None:
    """Start ``proc`` (not started yet) in a session (Windows: a process group) of its own."""
    if sys.platform == "win32":
        modifier = getattr(proc, "setCreateProcessArgumentsModifier", None)
        if modifier is not None:
            modifier(_new_group)
        return
    flag = getattr(QProcess.UnixProcessFlag, "CreateNewSession", None)  # Qt >= 6.7
    if flag is not None:
        proc.setUnixProcessParameters(flag)


def _new_group(args: Any) -> None:
    args.flags |= CREATE_NEW_PROCESS_GROUP
