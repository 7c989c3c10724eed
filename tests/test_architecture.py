"""The architecture is checked, not just described (issue 13).

Two checks: the import-linter contracts in ``pyproject.toml`` (core free of Qt and of the
app, layers inside each package, features independent except through named seams), and
no import cycle between modules of either package. Cycles count every import grimp sees,
function-level ones included: a lazy import that dodges a cycle at load time still ties
the two modules together, and so does an import under ``if TYPE_CHECKING:`` (a type that
names the other module is a dependency all the same).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("loom_core", "loom_desktop")
LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def _env() -> dict[str, str]:
    """This checkout's code wins over any installed copy, in the child too."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def test_import_contracts_are_kept() -> None:
    run = subprocess.run(
        [sys.executable, "-c", LINT, "--no-cache"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of more than one module (iterative Tarjan)."""
    edges = {
        m: sorted(t for t in graph.find_modules_directly_imported_by(m) if t in graph.modules)
        for m in sorted(graph.modules)
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def describe(graph: grimp.ImportGraph, group: list[str]) -> str:
    """Each import inside one cycle, with its line, so the report says what to move."""
    lines = []
    for importer in group:
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if imported in group:
                where = [
                    d["line_number"]
                    for d in graph.get_import_details(importer=importer, imported=imported)
                ]
                lines.append(f"  {importer} -> {imported} (line {', '.join(map(str, where))})")
    return "\n".join(lines)


def test_cycles_finds_a_lazy_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.a")  # as if inside a function
    graph.add_import(importer="pkg.c", imported="pkg.a")
    assert cycles(graph) == [["pkg.a", "pkg.b"]]


def test_no_import_cycles() -> None:
    sys.path.insert(0, str(ROOT))  # grimp finds the packages through sys.path
    try:
        graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False, cache_dir=None)
    finally:
        sys.path.remove(str(ROOT))
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(describe(graph, g) for g in found)
