"""``python -m loom_core watch PATH``: print a run's effects as its journal grows.

Why beside loom-harness's own ``loom watch``: that one polls every half second and
re-reads the whole file each time; this one follows the file by offset with
file-system events (:mod:`loom_core.live.tail`), notices rewrites, and can speak JSON
lines for scripts, with a ``{"status": ...}`` line whenever the run's status
changes (waiting, running, rewritten, waiting on a human, finished, crashed
mid-tool, stopped without finishing). Steps are described as ``summary`` describes them (a model call by the
calls it made, not its raw JSON). A line that cannot be read is reported as
``{"status": "unreadable line", "line": N, "cause": ...}`` (``-- line N cannot be
read: cause --``) and the lines after it are followed; a field of the wrong type is
a ``{"warning": ...}`` line. The human format is loom's:
``  [seq] <indent>kind detail``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING, Any

from loom_core.errors import LoadError

if TYPE_CHECKING:  # for annotations only: the CLI's start-up stays light (see below)
    from loom_core.live.follow import JournalUpdate

# Module-level imports stay light: the CLI builds every sub-parser on each run, and
# ``summary --help`` must not pay for msgspec and pydantic. The rest loads in cmd_watch.


def add_watch_command(sub: Any) -> None:
    """Register ``watch`` on the CLI's sub-parsers."""
    p = sub.add_parser("watch", help="follow a run's journal live, printing effects as they land")
    p.add_argument("path")
    p.add_argument(
        "--json-lines",
        action="store_true",
        help='one JSON object per effect, and a {"status": ...} line on changes',
    )
    p.add_argument(
        "--until-idle",
        type=float,
        default=None,
        metavar="SECONDS",
        help="exit 0 once the file has not changed for SECONDS",
    )
    p.add_argument(
        "--poll",
        type=float,
        default=0.5,
        metavar="SECONDS",
        help="re-check the file this often even without file-system events",
    )
    p.set_defaults(func=cmd_watch)


def _detail(kind: str, result: Any) -> str:
    """A step as ``summary`` describes it (a model call by its calls, a clock reading as a
    date: loom's watch printed their raw JSON), cut as loom's watch cuts (100 chars + ...)
    and kept on one line."""
    from loom_core.views.steps import effect_text

    text = effect_text(kind, result).replace("\r", " ").replace("\n", " ")
    return text[:100] + "..." if len(text) > 100 else text


def _tokens(kind: str, result: Any) -> dict[str, int] | None:
    usage = (
        result.get("usage") if kind in ("model", "sample") and isinstance(result, dict) else None
    )
    if not isinstance(usage, dict):
        return None
    inp, out = usage.get("input_tokens"), usage.get("output_tokens")
    if not isinstance(inp, int) and not isinstance(out, int):
        return None
    return {
        "input": inp if isinstance(inp, int) else 0,
        "output": out if isinstance(out, int) else 0,
    }


class _Printer:
    """Turns updates into output lines; remembers the last status it printed."""

    def __init__(self, json_lines: bool) -> None:
        from loom_core.formats.document import decode_raw, text_and_calls

        self._decode, self._calls = decode_raw, text_and_calls
        self.json_lines = json_lines
        self.status: str | None = None
        self._header_shown = False

    def update_lines(self, update: JournalUpdate) -> Iterator[str]:
        """Lines for one update: "rewritten" before the new content, other statuses after."""
        if update.rewritten:
            self._header_shown = False
            yield from self.status_lines(update.status, (), 0)
        if update.header is not None and not self._header_shown and not self.json_lines:
            self._header_shown = True
            episodes = update.header.get("episodes") or []
            yield (
                f"model: {update.header.get('model')}  |  "
                f"prompt: {episodes[0] if episodes else '?'}"
            )
        for eff in update.new_effects:
            yield self._effect(eff)
        for number, cause in update.unreadable:
            yield self._unreadable(number, cause, update.total_effects)
        for problem in update.problems:  # a field of the wrong type, read as its default
            yield (
                json.dumps({"warning": problem}) if self.json_lines else f"-- warning: {problem} --"
            )
        yield from self.status_lines(
            update.status, update.unfinished, update.total_effects, update.detail
        )

    def _unreadable(self, number: int, cause: str, effects: int) -> str:
        """A skipped line, as a status of its own; the run's status is said again after it."""
        self.status = None
        if not self.json_lines:
            return f"-- line {number} cannot be read: {cause} (skipped) --"
        return json.dumps(
            {"status": "unreadable line", "line": number, "cause": cause, "effects": effects}
        )

    def _effect(self, eff: Any) -> str:
        result = self._decode(eff.result)
        kind, depth, seq = eff.kind or "", eff.depth or 0, eff.seq or 0
        if not self.json_lines:
            return f"  [{seq:>3}] {'  ' * depth}{kind:<14} {_detail(kind, result)}"
        obj: dict[str, Any] = {
            "seq": seq,
            "kind": kind,
            "depth": depth,
            "key": eff.key or "",
            "detail": _detail(kind, result),
        }
        if kind == "model":
            obj["tool_calls"] = [c.get("name", "") for c in self._calls(result)[1]]
        tokens = _tokens(kind, result)
        if tokens is not None:
            obj["tokens"] = tokens
        return json.dumps(obj)

    def status_lines(
        self, status: str, unfinished: Any, effects: int, why: str = ""
    ) -> Iterator[str]:
        if status == self.status:
            return
        self.status = status
        if not self.json_lines:
            yield (
                "-- rewritten: the run started again --"
                if status == "rewritten"
                else f"-- {status}{f' ({why})' if why else ''} --"
            )
            return
        obj: dict[str, Any] = {"status": status, "effects": effects}
        if unfinished:
            obj["unfinished"] = [
                {"seq": u.seq, "kind": u.kind, "depth": u.depth} for u in unfinished
            ]
        if why:
            obj["why"] = why
        yield json.dumps(obj)


def _emit(lines: Iterator[str]) -> None:
    text = "\n".join(lines)
    if text:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def _install_stop_handlers(stop: threading.Event) -> dict[int, Any]:
    """SIGINT/SIGTERM end the watch cleanly (exit 0); also when SIGINT was inherited ignored."""

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, handler)
    return previous


def _follow(args: argparse.Namespace, printer: _Printer, stop: threading.Event) -> Any:
    """Print updates until idle or stopped; returns the (stopped) tailer."""
    from loom_core.live.tail import JournalTailer

    updates: queue.Queue[Any] = queue.Queue()
    last_change, seen = time.monotonic(), (0, False, False)
    with JournalTailer(args.path, updates.put, poll_interval=max(args.poll, 0.01)) as tailer:
        while not stop.is_set():
            if args.until_idle is not None and time.monotonic() - last_change >= args.until_idle:
                break
            try:
                update = updates.get(timeout=0.05)
            except queue.Empty:
                continue
            _show(args.path, printer, update)
            now_seen = (update.offset, update.exists, update.torn)
            if update.rewritten or now_seen != seen:  # the file changed, not only the status
                last_change, seen = time.monotonic(), now_seen
    for _ in range(updates.qsize()):  # the thread is joined: what it queued is all there is
        _show(args.path, printer, updates.get_nowait())
    final = tailer.poll_now(final=True)  # and a last line without newline counts, as in load()
    if final is not None:
        _show(args.path, printer, final)
    return tailer


def _show(path: str, printer: _Printer, update: JournalUpdate) -> None:
    if update.error:
        raise LoadError(path, update.error)
    _emit(printer.update_lines(update))


def cmd_watch(args: argparse.Namespace) -> int:
    """Follow ``args.path``; exit 0 when idle (``--until-idle``) or on SIGINT/SIGTERM."""
    from loom_core.live.live_status import RUNNING, live_outcome
    from loom_core.live.writers import NO_WRITER, writer_present

    if os.path.isdir(args.path):
        raise LoadError(args.path, "is a directory, not a file")
    printer = _Printer(args.json_lines)
    stop = threading.Event()
    previous = _install_stop_handlers(stop)
    try:
        tailer = _follow(args, printer, stop)
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
    state = tailer.state if tailer.exists else None  # the run is over for us: no more waiting
    status, why = live_outcome(state, math.inf)
    if status == RUNNING and writer_present(args.path) is False:
        status, why = live_outcome(state, math.inf, writer=False, writer_why=NO_WRITER)
    _emit(
        printer.status_lines(
            status, state.unfinished() if state else (), len(state.effects) if state else 0, why
        )
    )
    return 0
