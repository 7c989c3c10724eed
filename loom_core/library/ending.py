"""How a run in the library ended: what its file says, whether anyone still writes it, and
the one decision (:func:`loom_core.live.outcome.outcome`, shared with the live tab).

Why the facts are kept apart from the decision: "still being written" is a fact about
processes now, not about the bytes indexed earlier. The library stores a run's
:class:`~loom_core.live.outcome.Facts` with its row and decides again when that can
change without the file changing (a journal whose writer died mid-tool is never
written again, so it would otherwise stay "running" forever): :func:`decide` is called
when a run is indexed, by the desktop's indexer every few seconds for the runs that
were running (:meth:`~loom_core.library.index.Indexer.recheck`), and by a reader
listing them (``runs list``).

Who writes a file, as far as this machine can tell (:func:`writer_of`):

* the app says it records it (``live``): yes, unless what follows says it is gone;
* a journal: a process holding it open for writing (:mod:`loom_core.live.writers`);
* a proxy's trace: our proxy's exchange sidecar (``<base>.exchanges.jsonl``) ends with
  an ``end`` record when the proxy stopped cleanly, else whoever holds it open;
  loom-harness's proxy keeps ``<save>.wirelog`` until it finalizes;
* a foreign file: changed within the idle time, or held open (as a live tab decides);
* any other trace is a whole saved run: nobody writes it.
"""

from __future__ import annotations

import os
import time
from typing import Any

from loom_core.formats.document import Document
from loom_core.library.scan import SIDECAR, TRACE
from loom_core.live.outcome import DEFAULT_IDLE_AFTER, Facts, Outcome, answered, outcome
from loom_core.live.reread import is_live_file
from loom_core.live.writers import NO_WRITER, writer_present

_FORK_ERRORS = {"error": "the fork ended with an error", "timeout": "the fork timed out"}
_FORK_LIMITS = {
    "budget": "token budget",
    "max_turns": "max_turns",
    "cancelled": "cancel",
    "stopped": "stop",
}
_HARNESS_ERRORS = {"invalid_output": "the model's output was invalid (invalid_output)"}
_END_TAIL = 1 << 16  # bytes at the end of a sidecar where its last line (the end) is read


def fork_of(doc: Document) -> dict[str, Any]:
    """The ``fork`` member of a branch's header (our fork provenance; {} otherwise)."""
    fork = (getattr(doc.header, "model_extra", None) or {}).get("fork")
    return fork if isinstance(fork, dict) else {}


def _said(value: Any) -> str:
    return value if isinstance(value, str) else ""


def file_facts(doc: Document) -> Facts:
    """What ``doc`` says about its end: unfinished intents, a pause, the harness's
    ``stop_reason``, a fork's status, what a foreign producer said (``extra["ended"]``)."""
    h, fork = doc.header, fork_of(doc)
    status = _said(fork.get("status"))
    said = doc.extra.get("ended")
    ended: dict[str, Any] = said if isinstance(said, dict) else {}
    stop = _said(h.stop_reason)
    unfinished = doc.unfinished
    first = next((u for u in unfinished if u.kind == "human"), None) or next(iter(unfinished), None)
    error = (
        _FORK_ERRORS.get(status)
        or _said(ended.get("error"))
        or (_HARNESS_ERRORS.get(stop, "") if not fork else "")
    )
    limit = _FORK_LIMITS.get(status) or _said(ended.get("limit"))
    if not fork and stop and not error:
        limit = limit or stop
    if not fork and not limit and h.truncated and not h.paused:
        limit = "truncated"
    return Facts(
        written=bool(doc.effects) or bool(doc.episodes),
        answered=status == "done"
        or (not unfinished and not fork and answered(doc, len(doc.episodes))),
        unfinished=first.kind if first is not None else "",
        unfinished_seq=first.seq if first is not None else None,
        paused=h.paused is True or status == "needs_tool_result",
        error=error,
        limit=limit,
    )


def merged_facts(facts: list[Facts]) -> Facts:
    """One ending for a file of several runs (an Inspect log's samples): the first error
    or limit any of them ended with; answered only when every one was."""
    return Facts(
        written=any(f.written for f in facts),
        answered=all(f.answered for f in facts),
        unfinished=next((f.unfinished for f in facts if f.unfinished), ""),
        unfinished_seq=next((f.unfinished_seq for f in facts if f.unfinished), None),
        paused=any(f.paused for f in facts),
        error=next((f.error for f in facts if f.error), ""),
        limit=next((f.limit for f in facts if f.limit), ""),
    )


def _proxy_writer(path: str) -> tuple[bool | None, str]:
    """Whether the proxy that records the trace at ``path`` is still at it."""
    base = path[: -len(TRACE)] if path.endswith(TRACE) else path
    sidecar = base + SIDECAR
    try:
        with open(sidecar, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - _END_TAIL))
            tail = fh.read()
    except OSError:
        tail = None
    if tail is not None:
        last = tail.rstrip().rsplit(b"\n", 1)[-1]  # the end record, when it was written
        if last.replace(b" ", b"").startswith(b'{"type":"end"'):
            return False, "its proxy stopped"
        present = writer_present(sidecar)
        return present, "its proxy is gone" if present is False else ""
    wirelog = path + ".wirelog"  # loom-harness's proxy, until it finalizes
    if os.path.exists(wirelog):
        present = writer_present(wirelog)
        return present, "its proxy is gone" if present is False else ""
    return False, ""


def writer_of(path: str, fmt: str, proxy: bool, live: bool) -> tuple[bool | None, str]:
    """Whether anyone still writes the run at ``path`` (True / False / None: cannot be
    known here), and how a gone writer is known (see the module docstring). ``live``: the
    app says it records it -- believed unless its files say how the writer is gone (an
    app that died while recording leaves its word behind); a file not written yet, or
    merely quiet, says nothing of the kind."""
    seen, why = _looked_for(path, fmt, proxy)
    known_gone = seen is False and bool(why)
    return (True, "") if live and not known_gone else (seen, why)


def _looked_for(path: str, fmt: str, proxy: bool) -> tuple[bool | None, str]:
    if fmt == "journal":
        present = writer_present(path)
        return present, "" if present is not False else NO_WRITER
    if fmt == "trace":
        return _proxy_writer(path) if proxy else (False, "")
    if fmt in ("wirelog", "exchanges"):
        present = writer_present(path)
        return present, ""
    return (True, "") if is_live_file(path) else (False, "")


def decide(
    path: str,
    fmt: str,
    facts: Facts,
    *,
    proxy: bool = False,
    live: bool = False,
    error: str = "",
    mtime: float | None = None,
) -> Outcome:
    """The run's outcome now: its file's ``facts``, what the app noted (``live``: it
    records it; ``error``: what error ended it, e.g. its agent crashed) and its writer."""
    if error:
        facts = Facts(**{**facts.as_json(), "error": error})
    if facts.error:
        return outcome(facts, False)  # no need to look for a writer
    writer, why = writer_of(path, fmt, proxy, live)
    idle = time.time() - mtime if mtime is not None else 0.0
    return outcome(facts, writer, idle, DEFAULT_IDLE_AFTER, why)
