"""Real third-party files (never written by us) beside the repository: ``shared/real-world``.

Why beside it, not in it: they are other people's bytes, kept byte-exact with where each
came from in that folder's README; the tests read them where they are. A checkout without
the folder skips these tests, naming the folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.clis import ROOT

FILES = ROOT.parent / "shared" / "real-world" / "files"


def real_file(*parts: str) -> Path:
    """The real file at ``FILES/parts``; the test is skipped when the folder is absent."""
    path = FILES.joinpath(*parts)
    if not FILES.is_dir():
        pytest.skip(f"no real-world files beside the repository ({FILES})")
    assert path.is_file(), f"{path} is listed in the real-world README but missing"
    return path


def real_files(folder: str, *suffixes: str) -> list[Path]:
    """Every file of ``FILES/folder`` with one of ``suffixes``, sorted; none without the folder.

    For ``parametrize`` at collection time: an empty list makes pytest skip the test
    ("got empty parameter set") instead of failing a checkout that lacks the folder.
    """
    where = FILES / folder
    if not where.is_dir():
        return []
    return sorted(p for p in where.iterdir() if p.is_file() and p.suffix in suffixes)
