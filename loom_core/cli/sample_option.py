"""``--sample ID[:EPOCH]``: which run of a file that holds several (an Inspect AI log).

Why an option, not part of the path: the path stays the file the user has, so error
messages, ``convert``'s notes and shell completion all name a real file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loom_core.errors import LoadError

if TYPE_CHECKING:
    from loom_core.formats.document import Document


def add_sample_option(parser: Any) -> None:
    """Add ``--sample`` to a command that reads one run."""
    parser.add_argument(
        "--sample",
        metavar="ID[:EPOCH]",
        help="which sample of an Inspect AI log (.eval) to read (default: the first)",
    )


def load_run(path: str, sample: str | None, data: bytes | None = None) -> Document:
    """The run at ``path``: the file's only one, or its sample ``sample``.

    The readers are imported here, not at the top: ``summary --json`` parses its
    options and forks its checksum child before it pays for the schema (pydantic).
    """
    from loom_core.formats.foreign import SNIFF_BYTES
    from loom_core.formats.loader import load_bytes, read_bytes

    data = read_bytes(path) if data is None else data
    if sample is None:
        return load_bytes(data, path)
    from loom_core.formats import inspect_eval

    if not inspect_eval.sniff(data[:SNIFF_BYTES], path):
        raise LoadError(path, "--sample picks a sample of an Inspect AI log; this file is not one")
    return inspect_eval.load_sample(data, path, *inspect_eval.parse_sample_spec(sample))
