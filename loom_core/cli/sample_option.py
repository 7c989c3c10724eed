"""``--sample ID[:EPOCH]``: which run of a file that holds several (an Inspect AI log);
``summary --sample all``: every one of them.

Why an option, not part of the path: the path stays the file the user has, so error
messages, ``convert``'s notes and shell completion all name a real file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from loom_core.errors import LoadError

if TYPE_CHECKING:
    from loom_core.formats.document import Document


ALL = "all"  # ``summary --sample all``: every sample, one after the other


def add_sample_option(parser: Any, every: bool = False) -> None:
    """Add ``--sample`` to a command that reads one run (``every``: or all of them)."""
    more = "; 'all': every sample, one JSON object per line with --json" if every else ""
    parser.add_argument(
        "--sample",
        metavar="ID[:EPOCH]" + ("|all" if every else ""),
        help=f"which sample of an Inspect AI log (.eval or JSON) to read (default: the first){more}",
    )


def load_run(path: str, sample: str | None, data: bytes | None = None) -> Document:
    """The run at ``path``: the file's only one, or its sample ``sample``.

    The readers are imported here, not at the top: ``summary --json`` parses its
    options and forks its checksum child before it pays for the schema (pydantic).
    """
    from loom_core.formats.loader import load, load_bytes, read_bytes

    if sample is None:  # decided from its first bytes before it is read whole
        return load(path) if data is None else load_bytes(data, path)
    if sample == ALL:
        raise LoadError(path, "--sample all is for summary; this command reads one sample")
    data = read_bytes(path) if data is None else data
    from loom_core.formats import inspect_eval

    _check(data, path)
    return inspect_eval.load_sample(data, path, *inspect_eval.parse_sample_spec(sample))


def each_run(path: str, data: bytes) -> Iterator[Document]:
    """``--sample all``: every sample of the Inspect AI log at ``path``, one at a time."""
    from loom_core.formats import inspect_eval

    _check(data, path)
    return inspect_eval.each_sample(data, path)


def samples_of_file(doc: Document, data: bytes, path: str) -> list[dict[str, Any]]:
    """The samples of the file ``doc`` came from when it holds several runs, else []."""
    from loom_core.formats import inspect_eval

    return inspect_eval.sample_list(data, path) if doc.format == "inspect" else []


def sample_line(doc: Document, count: int) -> str | None:
    """``sample 7 · epoch 2 (1 of 4 samples: …)``: which run of the file a summary shows."""
    shown = doc.extra.get("sample")
    if not isinstance(shown, dict):
        return None
    line = f"sample {shown.get('id')} · epoch {shown.get('epoch')}"
    if count > 1:
        line += f" ({count} samples: --sample ID[:EPOCH] shows another, --sample all every one)"
    return line


def _check(data: bytes, path: str) -> None:
    """``--sample`` on a file that is no Inspect AI log: the one-line error."""
    from loom_core.formats import inspect_eval
    from loom_core.formats.foreign import SNIFF_BYTES

    if not inspect_eval.sniff(data[:SNIFF_BYTES], path):
        raise LoadError(path, "--sample picks a sample of an Inspect AI log; this file is not one")
