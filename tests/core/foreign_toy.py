"""A toy foreign format for the generic re-read follower's tests (not a real producer's).

Why a toy: the follower and the live tab are format-agnostic; testing them with a format
whose every rule fits in ten lines keeps the tests about following, not reading. One
JSON line ``{"toy": TEXT, "tokens": N}`` per model call; a torn last line is ignored;
anything else is a LoadError naming the line.
"""

from __future__ import annotations

import json

from loom_core.errors import LoadError
from loom_core.formats.document import Document
from loom_core.formats.foreign import ForeignReader, RunBuilder


def _sniff(head: bytes, path: str) -> bool:
    return head.startswith(b'{"toy"')


def _load(data: bytes, path: str) -> Document:
    run = RunBuilder(model="toy-1")
    run.add_episode("play")
    lines = data.split(b"\n")
    if not data.endswith(b"\n"):
        lines.pop()  # torn: the writer has not finished this line
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            text, tokens = str(rec["toy"]), int(rec.get("tokens", 1))
        except (ValueError, KeyError, TypeError) as err:
            raise LoadError(path, f"line {number} is not a toy record ({err})") from err
        run.add_model(text, [], {"input_tokens": tokens, "output_tokens": 1})
    return run.document(path, "toy")


READER = ForeignReader("toy", "Toy", ("*.toy",), _sniff, _load)


def toy_line(text: str, tokens: int = 1) -> bytes:
    return json.dumps({"toy": text, "tokens": tokens}).encode() + b"\n"
