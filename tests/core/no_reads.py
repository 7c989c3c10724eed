"""A guard for tests of refusals decided from a file's head or size: reading it whole fails."""

from __future__ import annotations

import pytest

from loom_core.formats import loader, progressive, read_file


def forbid_whole_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every whole read of a file (by the loader, the progressive load, the CLI) raises."""

    def never(*_args: object, **_kwargs: object) -> bytes:
        raise AssertionError("the whole file was read")

    for module in (loader, progressive, read_file):
        monkeypatch.setattr(module, "read_bytes", never)
    monkeypatch.setattr(progressive, "map_file", lambda _path: None)  # (then it would be read)
