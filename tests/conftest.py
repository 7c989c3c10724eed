"""Every test (and every process a test starts) keeps generated runs, the run library and
the proxies' control tokens out of the real home."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from loom_core.library.db import ENV as LIBRARY_ENV
from loom_core.runs_dir import ENV

pytest_plugins = ["tests.servers.fixtures"]

# Property tests are not timed: hypothesis's default deadline (200 ms per example) fails
# an example that a busy two-core machine happened to preempt, as a flaky error.
settings.register_profile("loom", deadline=None)
settings.load_profile("loom")


@pytest.fixture(autouse=True)
def runs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The per-user runs folder, in this test's temp dir (subprocesses inherit it)."""
    folder = tmp_path / "runs"
    monkeypatch.setenv(ENV, str(folder))
    return folder


@pytest.fixture(autouse=True)
def proxy_runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where proxies write their control-token files, in this test's temp dir. The default
    (``~/.loom/proxies``) is shared by every test run on the machine and the user's own
    proxies: a test that lists the running proxies, or runs ``approvals`` without
    ``--port``, must find only its own. A test's own ``runtime`` fixture overrides it."""
    folder = tmp_path / "proxy-runtime"
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(folder))
    return folder


@pytest.fixture(autouse=True)
def library_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The run library's database, in this test's temp dir (subprocesses inherit it)."""
    path = tmp_path / "library.sqlite3"
    monkeypatch.setenv(LIBRARY_ENV, str(path))
    return path


@pytest.fixture(autouse=True)
def price_cache_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The price rates kept between processes, in this test's temp dir (subprocesses
    inherit it); this process forgets what it read from another test's file."""
    from loom_core.views import price_cache

    path = tmp_path / "prices.json"
    monkeypatch.setenv(price_cache.ENV, str(path))
    price_cache.forget()
    return path


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "pristine_sdks: needs the openai/anthropic SDKs no instrumentor has touched"
    )
    config.addinivalue_line(
        "markers", "long: runs for tens of seconds; started early so both workers end together"
    )


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups it is given here
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``pristine_sdks`` run first. OpenLLMetry's ``uninstrument`` leaves its
    wrappers on the SDK clients for the rest of the process: afterwards every client call
    opens a span on a shut-down provider, so an SDK-only agent's traces have a parent that
    never arrives and are no longer bare (tests/core/formats/test_otlp.py runs it).

    Under pytest-xdist (``--dist loadgroup``) they are one group: the scheduler hands out
    groups in collection order, so the group is the first work of the worker that gets it.
    Tests marked ``long`` come next: one started near the end would leave a worker idle
    while the other finishes it."""
    first = [i for i in items if i.get_closest_marker("pristine_sdks")]
    for item in first:
        item.add_marker(pytest.mark.xdist_group("pristine_sdks"))
    rest = [i for i in items if not i.get_closest_marker("pristine_sdks")]
    long = [i for i in rest if i.get_closest_marker("long")]  # a long test started last
    items[:] = first + long + [i for i in rest if not i.get_closest_marker("long")]
