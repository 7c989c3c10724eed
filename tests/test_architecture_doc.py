"""docs/ARCHITECTURE.md, the README and the other pages of docs/ name only modules and
paths that exist, and the architecture page's Layout table names every package of both trees.

Why: a map that names a module which has moved sends a newcomer to the wrong room, and
a Layout table that misses a new package hides it; both rot silently as code moves.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
DOCS = [
    ARCHITECTURE,
    ROOT / "README.md",
    *sorted(set((ROOT / "docs").glob("*.md")) - {ARCHITECTURE}),
]
PACKAGES = ("loom_core", "loom_desktop")
_DOTTED = re.compile(r"(?<![\w./-])((?:loom_core|loom_desktop)(?:\.\w+)+)")


def _module_file(dotted: str) -> Path | None:
    """The file of module ``dotted`` in this tree, or None."""
    base = ROOT.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _exists(dotted: str) -> bool:
    """A module or package file, or an attribute of the longest module prefix."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if _module_file(module) is None:
            continue
        if cut == len(parts):
            return True
        obj: object = importlib.import_module(module)
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def _named(doc: Path) -> set[str]:
    return {m.rstrip(".") for m in _DOTTED.findall(doc.read_text(encoding="utf-8"))}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_dotted_name_exists(doc: Path) -> None:
    named = _named(doc)
    missing = sorted(n for n in named if not _exists(n))
    assert not missing, f"{doc.name} names modules that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_path_exists(doc: Path) -> None:
    """``loom_core/formats/<name>.py`` names a folder that exists (up to the placeholder)."""
    paths = re.findall(r"`((?:loom_core|loom_desktop)/[^`]*)`", doc.read_text(encoding="utf-8"))
    missing = sorted(p for p in paths if not (ROOT / p.split("<", 1)[0]).exists())
    assert not missing, f"{doc.name} names paths that do not exist: {missing}"


def test_the_architecture_page_names_every_package() -> None:
    named = _named(ARCHITECTURE)
    for package in PACKAGES:
        for sub in sorted((ROOT / package).glob("*/__init__.py")):
            name = f"{package}.{sub.parent.name}"
            assert any(n == name or n.startswith(name + ".") for n in named), name


def _layout_row(text: str, package: str) -> str:
    section = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith(f"| `{package}/` |")]
    assert len(rows) == 1, f"the Layout table has no single row for {package}/"
    return rows[0]


@pytest.mark.parametrize("package", PACKAGES)
def test_layout_follows_the_tree(package: str) -> None:
    """Each folder and top-level module of the package is named in its row, and each
    name in the row exists (a feature folder as ``features/fork/`` or ``fork/``)."""
    row = _layout_row(ARCHITECTURE.read_text(encoding="utf-8"), package)
    named = set(re.findall(r"`([\w./]+)`", row)) - {f"{package}/"}
    top = ROOT / package
    folders = {p.parent.name + "/" for p in top.glob("*/__init__.py")}
    modules = {p.name for p in top.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    missing = (folders | modules) - named
    assert not missing, f"not in the Layout table: {sorted(missing)}"
    nested = {n for n in named if n not in folders | modules}
    for name in nested:
        candidates = [top / name, *(d / name for d in top.iterdir() if d.is_dir())]
        assert any(c.exists() for c in candidates), f"the Layout table names a missing {name}"
