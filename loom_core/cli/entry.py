"""``python -m loom_core``: the headless face of loom_core.

Bad input never produces a traceback: the command prints one line naming the
file and the cause on stderr and exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from loom_core import __version__
from loom_core.cli.help import HelpParser, print_error
from loom_core.cli.sample_option import add_sample_option
from loom_core.errors import LoadError

if TYPE_CHECKING:
    from loom_core.formats.fastcheck import ParallelChecksum

EXIT_BAD_INPUT = 2
# commands that print money: a malformed price override file stops them (exit 2),
# since their figures would not be the prices the user asked for
_PRICED = frozenset({"summary", "diff", "steps"})


def _detail(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _print_timeline(doc: Any) -> None:
    from loom_core.formats.foreign import format_label
    from loom_core.views.steps import effect_seq, step_summary
    from loom_core.views.timeline import F_BLOCKED, F_DENIED, F_ERROR, build_timeline

    tl = build_timeline(doc)
    print(
        f"{format_label(doc)}  model: {doc.header.model}  |  "
        f"prompt: {_detail(doc.episodes[0] if doc.episodes else '', 80)}"
    )
    for s in range(len(tl)):
        mark = "!" if tl.flags[s] & (F_ERROR | F_BLOCKED | F_DENIED) else " "
        seq = "" if tl.effect_of[s] < 0 else str(effect_seq(doc.effects, tl.effect_of[s]))
        indent = "  " * tl.depth[s]
        tokens = tl.tokens_in[s] + tl.tokens_out[s]
        tok = f"  [{tokens} tok]" if tokens else ""
        print(f"{mark}[{seq:>4}] {indent}{tl.kind_name(s):<16} {step_summary(tl, s, 90)}{tok}")
    print(
        f"{len(doc.effects)} effect(s), {tl.input_tokens} in / {tl.output_tokens} out tokens, "
        f"cost {tl.cost_text().replace('unknown', 'unknown (unpriced model)')}"
    )


def cmd_summary(args: argparse.Namespace) -> int:
    from loom_core.formats.read_file import read_bytes

    _refuse_early(args.path)
    data = read_bytes(args.path)
    job: ParallelChecksum | None = None
    if args.json:  # fork the checksum child before the heavy imports (pydantic, the readers)
        from loom_core.formats.fastcheck import ParallelChecksum

        job = ParallelChecksum.start(data)
    try:
        return _summary(args, data, job)
    finally:
        if job is not None:
            job.close()  # reaps the child on every path, a failed load included


def _refuse_early(path: str) -> None:
    """Refuse a file no reader can read from its first bytes before reading it whole (a
    2 GB file of NUL bytes was read, then refused). Only a head the byte rules refuse pays
    for the readers here: a foreign one may still claim it (protobuf starts like binary).
    A file too big for the memory left is refused here too, before it is read."""
    from loom_core.formats.memory_room import check_room
    from loom_core.formats.reader import SNIFF_BYTES, refuse_at_head

    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
            size = os.fstat(fh.fileno()).st_size
        refuse_at_head(head, path)
    except (OSError, LoadError):
        from loom_core.formats.loader import opened

        opened(path)  # names the cause (or it is a foreign reader's after all)
        return
    check_room(path, size, head)  # before the file is read whole


def _summary(args: argparse.Namespace, data: bytes, job: ParallelChecksum | None) -> int:
    from loom_core.cli.sample_option import ALL, load_run, samples_of_file
    from loom_core.formats.trace import checksum_state

    if args.sample == ALL:
        return _summary_all(args, data)
    doc = load_run(args.path, args.sample, data)
    samples = samples_of_file(doc, data, args.path)
    if args.json:
        from loom_core.views.summary import summarize, usage_and_cost

        usage = usage_and_cost(doc)  # while the child still works on the checksum
        computed = job.result() if job is not None and doc.format == "trace" else None
        state = checksum_state(doc, computed)
        print(json.dumps(summarize(doc, state, usage, samples), ensure_ascii=False))
        return 0
    _print_run(doc, len(samples))
    return 0


def _summary_all(args: argparse.Namespace, data: bytes) -> int:
    """Every sample of an Inspect AI log: one JSON object per line (``samples`` is empty
    there: the lines are the list), or one timeline after another."""
    from loom_core.cli.sample_option import each_run, samples_of_file
    from loom_core.formats.trace import checksum_state
    from loom_core.views.summary import summarize

    samples: list[dict[str, Any]] | None = None
    for n, doc in enumerate(each_run(args.path, data)):
        samples = samples_of_file(doc, data, args.path) if samples is None else samples
        if args.json:
            facts = summarize(doc, checksum_state(doc), None, samples)
            print(json.dumps({**facts, "samples": []}, ensure_ascii=False), flush=True)
        else:
            print("" if n == 0 else "\n", end="")
            _print_run(doc, len(samples))
    return 0


def _print_run(doc: Any, count: int) -> None:
    """A run's timeline, its checksum and warnings (and which sample of its file it is)."""
    from loom_core.cli.sample_option import sample_line
    from loom_core.formats.trace import checksum_state

    line = sample_line(doc, count)
    if line:
        print(line)
    _print_timeline(doc)
    state = checksum_state(doc)
    print(
        f"checksum: {state}"
        + ("  (WARNING: modified after it was written)" if state == "mismatch" else "")
    )
    for warning in doc.warnings:
        print(f"warning: {warning}")


def cmd_checksum(args: argparse.Namespace) -> int:
    """Print valid / mismatch / absent; the GUI runs this in a separate process (a big
    trace's bytes are mapped and hashed, not loaded: :mod:`loom_core.formats.file_checksum`)."""
    from loom_core.formats.file_checksum import file_checksum_state

    print(file_checksum_state(args.path))
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from loom_core.cli.sample_option import load_run
    from loom_core.formats.save import save_document
    from loom_core.runs_dir import refuse_overwrite

    refuse_overwrite(args.output, args.force)
    doc = load_run(args.input, args.sample)
    notes: list[str] = []
    try:
        written = save_document(doc, args.output, notes)
    except OSError as err:
        raise LoadError(args.output, f"cannot write: {err.strerror or err}") from err
    raw = written.get("wire")  # a hand-edited trace's wire may be anything: counted if a list
    wire = f" and {len(raw)} raw exchange(s)" if isinstance(raw, list) and raw else ""
    from loom_core.formats.foreign import reader_named, with_article

    reader = reader_named(doc.format)  # "an Inspect AI log", not "a inspect"
    source = "proxy exchange sidecar" if doc.format == "exchanges" else doc.format
    source = reader.label if reader is not None else source
    print(
        f"wrote {args.output}: {len(written['log'])} effect(s){wire} from {with_article(source)}",
        file=sys.stderr,
    )
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


_CORE_COMMANDS = frozenset({"summary", "checksum", "convert"})
# parsed without the other commands' modules: numpy's BLAS starts threads when it is
# imported, and a thread started before the proxy blocks its stop signals could take
# one and hide its sender (loom_core.proxy.stop_signals)
_PROXY_COMMANDS = frozenset({"proxy", "record"})


def _core_parser() -> tuple[argparse.ArgumentParser, Any]:
    """The parser with just ``summary``, ``checksum`` and ``convert`` (and its subparsers).

    Why apart: the other commands' modules bring the proxy, asyncio and the SDKs, a
    fifth of a second a ``summary --json`` process on a big trace need not spend.
    """
    parser = HelpParser(
        prog="python -m loom_core", description="Read, check, convert and watch loom traces."
    )
    parser.add_argument("--version", action="version", version=f"loom_core {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("summary", help="summarise a trace, journal or wirelog")
    p.add_argument("path")
    p.add_argument("--json", action="store_true", help="one JSON object instead of a timeline")
    add_sample_option(p, every=True)
    p.set_defaults(func=cmd_summary)
    p = sub.add_parser("checksum", help="verify a trace's checksum: valid, mismatch or absent")
    p.add_argument("path")
    p.set_defaults(func=cmd_checksum)
    p = sub.add_parser("convert", help="write any input as a loom-compatible trace")
    p.add_argument("input")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--force", action="store_true", help="replace OUTPUT if it exists")
    add_sample_option(p)
    p.set_defaults(func=cmd_convert)
    return parser, sub


def _parser_for(command: str) -> argparse.ArgumentParser:
    """The smallest parser that knows ``command`` (the whole one for anything else)."""
    if command in _CORE_COMMANDS:
        return _core_parser()[0]
    if command in _PROXY_COMMANDS:
        from loom_core.proxy.commands import add_proxy_commands

        parser, sub = _core_parser()
        add_proxy_commands(sub)
        return parser
    return build_parser()


def build_parser() -> argparse.ArgumentParser:
    """The whole command line parser."""
    parser, sub = _core_parser()
    from loom_core.cli.approvals import add_approval_commands
    from loom_core.cli.diff import add_diff_command
    from loom_core.cli.doctor import add_doctor_command
    from loom_core.cli.export import add_export_command
    from loom_core.cli.fork import add_fork_command
    from loom_core.cli.heal import add_heal_command
    from loom_core.cli.otlp_receive import add_otlp_receive_command
    from loom_core.cli.runs import add_runs_command
    from loom_core.cli.steps import add_steps_command
    from loom_core.cli.watch import add_watch_command
    from loom_core.proxy.commands import add_proxy_commands

    for add in (
        add_watch_command,
        add_proxy_commands,
        add_approval_commands,
        add_fork_command,
        add_diff_command,
        add_doctor_command,
        add_heal_command,
        add_steps_command,
        add_otlp_receive_command,
        add_export_command,
        add_runs_command,
    ):
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = _parser_for(words[0] if words else "")
    args = parser.parse_args(words)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        name = args.command if isinstance(args.command, str) else ""  # record's COMMAND is a list
        if name in _PRICED or (name == "fork" and getattr(args, "dry_run", False)):
            from loom_core.views.price_file import check_overrides

            check_overrides()
        return func(args)
    except LoadError as err:
        print_error(f"{err.path}: {err.cause}")
        return EXIT_BAD_INPUT
    except MemoryError:  # a load too big for the memory left, where no loader named it
        print_error(f"{getattr(args, 'path', 'loom')}: ran out of memory")
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
