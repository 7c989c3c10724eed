"""The lock files stay the truth about what installs: they cover pyproject.toml, the app's
lock holds no test tool, and ``make deps-latest`` names only the packages that moved.

Why: a dependency added to pyproject.toml without ``make lock`` is missing from every fresh
venv (``pip --require-hashes`` installs only what the lock names), and a test tool in the
app's lock makes ``make run`` install the whole suite again.
"""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
APP_LOCK, TEST_LOCK = ROOT / "requirements" / "app.txt", ROOT / "requirements" / "dev.txt"


def lock_drift() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lock_drift", ROOT / "tools" / "lock_drift.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def requirements(group: str) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = project["dependencies"] if group == "app" else project["optional-dependencies"][group]
    return [Requirement(text) for text in names]


@pytest.mark.parametrize(
    ("group", "lock"),
    [("app", APP_LOCK), ("app", TEST_LOCK), ("dev", TEST_LOCK), ("package", TEST_LOCK)],
)
def test_every_requirement_is_pinned_at_a_version_it_allows(group: str, lock: Path) -> None:
    drift = lock_drift()
    pins = drift.locked_versions(lock, everywhere=True)
    for requirement in requirements(group):
        versions = pins.get(drift.canonical(requirement.name), set())
        assert any(requirement.specifier.contains(v, prereleases=True) for v in versions), (
            f"{lock.name} pins {requirement.name} at {sorted(versions) or 'nothing'}, "
            f"pyproject.toml asks {requirement}: run `make lock`"
        )


def test_the_app_lock_is_the_test_lock_less_the_test_tools() -> None:
    drift = lock_drift()
    app = drift.locked_versions(APP_LOCK, everywhere=True)
    test = drift.locked_versions(TEST_LOCK, everywhere=True)
    assert {name: versions for name, versions in app.items() if test.get(name) != versions} == {}
    app_names = {drift.canonical(r.name) for r in requirements("app")}
    tools = {drift.canonical(r.name) for r in requirements("dev")} - app_names
    assert tools and not tools & app.keys(), f"test tools in the app's lock: {tools & app.keys()}"


def test_drift_names_only_the_packages_that_moved(tmp_path: Path) -> None:
    """Pins for another platform, and pip itself, are not drift; a moved version is."""
    drift = lock_drift()
    installed = drift.installed_versions()
    pytest_version = installed["pytest"]
    lock = tmp_path / "lock.txt"
    lock.write_text(
        f"pytest=={pytest_version} \\\n    --hash=sha256:00\n"
        "pywin32==312 ; sys_platform == 'win32' \\\n    --hash=sha256:00\n"
        "msgspec==0.0.1 \\\n    --hash=sha256:00\n",
        encoding="utf-8",
    )
    lines = drift.drift(lock)
    assert f"msgspec: 0.0.1 -> {installed['msgspec']}" in lines
    assert not [line for line in lines if line.startswith(("pytest:", "pywin32:", "pip:"))]
