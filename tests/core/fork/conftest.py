"""Parents recorded once per session; tests copy a parent before changing anything."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.core.fork.scenarios import ProxyParent, harness_fork_pair, proxy_run, weather_run


@pytest.fixture(scope="session")
def parents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``weather`` (harness), ``pair`` (harness parent + loom's own fork), ``anthropic`` /
    ``openai`` / ``responses`` (proxy recordings with sidecars)."""
    out: Path = tmp_path_factory.mktemp("fork-parents")
    found: dict[str, Any] = {"weather": weather_run(out), "pair": harness_fork_pair(out)}
    for dialect in ("anthropic", "openai", "responses"):
        found[dialect] = proxy_run(out / dialect, dialect)
    return found


@pytest.fixture
def copy_parent(parents: dict[str, Any], tmp_path: Path) -> Callable[..., Path]:
    """A private copy of a parent (with its sidecar unless ``sidecar=False``)."""

    def make(name: str, sidecar: bool = True) -> Path:
        found = parents[name]
        src = found.path if isinstance(found, ProxyParent) else found
        dst = tmp_path / name
        dst.mkdir(exist_ok=True)
        shutil.copy(src, dst / src.name)
        side = src.with_name(src.name.replace(".loom.json", ".exchanges.jsonl"))
        if sidecar and side.is_file():
            shutil.copy(side, dst / side.name)
        return dst / src.name

    return make
