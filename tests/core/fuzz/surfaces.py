"""Every entry point that reads a file, driven with one input: the fuzzers' target.

``exercise`` loads a file the ways the app and the CLI do and builds every view the
window builds after loading. A :class:`LoadError` is a clean rejection; anything
else escaping is a crash. The CLI must exit 2 with exactly one line naming the file
on each rejection, and the loaders must agree on whether a file is readable.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom_core.cli import entry as cli
from loom_core.errors import LoadError
from loom_core.formats import progressive

VIEW_STEPS = 60  # views per step are built for the first steps only (bounded cost)
_parser = cli.build_parser()  # building it costs more than most commands: once per process


@dataclass
class Outcome:
    """What happened to one input: ``ok`` or ``rejected`` (with the loader's cause)."""

    status: str
    cause: str = ""
    warnings: tuple[str, ...] = ()
    effects: int = 0


def build_views(doc: Any, render: Callable[[Any, int], str] | None = None) -> None:
    """Everything the window and the CLI derive from a loaded document."""
    from loom_core.diff.compare import compare
    from loom_core.doctor import checkup
    from loom_core.formats.save import document_dict
    from loom_core.formats.trace import checksum_state
    from loom_core.heal.repairs import plan_candidates
    from loom_core.views.filtering import filter_steps
    from loom_core.views.frames import frame_at, neutral_messages
    from loom_core.views.steps import step_summary
    from loom_core.views.summary import summarize
    from loom_core.views.timeline import build_timeline

    tl = build_timeline(doc)
    for step in range(min(len(tl), VIEW_STEPS)):
        step_summary(tl, step)
        tl.steps_of_kind(step)
        if render is not None:
            render(tl, step)
    if tl.context is not None:
        for i in range(min(len(doc.effects), VIEW_STEPS)):
            frame = frame_at(tl.context, i)
            if frame is not None:
                frame.messages()
                frame.system()
                frame.tools()
                neutral_messages(frame)
    for query in ("error", "kind:model", "tool:search paris", "!x"):
        filter_steps(tl, query)
    summarize(doc, checksum_state(doc))
    plan_candidates(doc, doc.path, checkup(doc).findings, 5)  # heal's planning
    compare(doc, doc)
    document_dict(doc)
    _ = tl.total_cost, [doc.raw_entry(i) for i in range(min(len(doc), VIEW_STEPS))]


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    real, cli.build_parser = cli.build_parser, lambda: _parser  # type: ignore[assignment]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(list(argv))
    finally:
        cli.build_parser = real  # type: ignore[assignment]
    return code, out.getvalue(), err.getvalue()


def check_rejection(
    path: Path, code: int, err: str, argv: tuple[str, ...], borderline: bool = False
) -> None:
    """Exit 2 and one line naming the file (the CLI's promise for bad input).

    ``borderline``: refused for nesting. The limit is the interpreter's stack, so a file
    nested close to it (800-1000 levels) may read at one call depth and not at another;
    either outcome is fine, a traceback is not.
    """
    lines = err.strip().split("\n")  # (a U+2028 from the file is no line break on a terminal)
    if borderline and code != 2:
        assert "Traceback" not in err, (argv, err)
        return
    assert code == 2 and len(lines) == 1 and str(path) in lines[0], (argv, code, err)


def run_cli(path: Path, out_dir: Path, rejected: bool, borderline: bool = False) -> None:
    """The commands that read a file; on a rejected file each must refuse it cleanly."""
    commands: list[tuple[str, ...]] = [
        ("summary", str(path)),
        ("summary", "--json", str(path)),
        ("checksum", str(path)),
        ("convert", str(path), "-o", str(out_dir / "converted.loom.json"), "--force"),
        ("doctor", str(path)),
        ("doctor", "--json", str(path)),
        ("diff", str(path), str(path)),
        ("fork", str(path), "--step", "0", "--dry-run", "--provider", "scripted"),
    ]
    for argv in commands:
        code, _out, err = _cli(*argv)
        if rejected:
            check_rejection(path, code, err, argv, borderline)
        else:
            assert "Traceback" not in err, (argv, err)
            if code == 2:
                assert len(err.strip().split("\n")) == 1, (argv, err)


def exercise(
    data: bytes, tmp: Path, cli: bool = True, render: Callable[[Any, int], str] | None = None
) -> Outcome:
    """Run ``data`` through the loaders, the views and (``cli``) the commands."""
    from loom_core.formats.loader import load

    path = tmp / "input.loom.json"
    path.write_bytes(data)
    try:
        doc = load(path)
    except LoadError as err:
        assert err.path == str(path) and err.cause and "\n" not in err.cause, err
        outcome = Outcome("rejected", err.cause)
    else:
        build_views(doc, render)
        outcome = Outcome("ok", warnings=doc.warnings, effects=len(doc.effects))
    _progressive(path, outcome)
    if cli:
        run_cli(path, tmp, outcome.status == "rejected", _nesting(outcome))
    return outcome


def _nesting(outcome: Outcome) -> bool:
    return outcome.status == "rejected" and "nested too deeply" in outcome.cause


def _progressive(path: Path, outcome: Outcome) -> None:
    """The window's loader, forced onto its big-file path, must agree with ``load``."""
    small = progressive.SMALL_BYTES
    progressive.SMALL_BYTES = 0
    heads: list[Any] = []
    try:
        loaded = progressive.load_progressive(str(path), heads.append)
    except LoadError as err:
        assert outcome.status == "rejected" or "nested too deeply" in err.cause, (
            f"progressive rejects what load accepts: {err.cause}"
        )
        return
    finally:
        progressive.SMALL_BYTES = small
    if _nesting(outcome):
        return  # see check_rejection
    assert outcome.status == "ok", f"progressive accepts what load rejects: {outcome.cause}"
    assert loaded.doc.warnings == outcome.warnings  # the same fields marked either way
    assert len(loaded.doc.effects) == outcome.effects  # and not one entry lost
    for head in heads:
        build_views(head.doc)
    build_views(loaded.doc)
