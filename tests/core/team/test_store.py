"""The run store: content-addressed, idempotent, complete or absent; on a folder and on S3."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from loom_core.errors import LoadError
from loom_core.library import cache
from loom_core.library.store import RunStore, bundle_of

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"


@pytest.fixture(params=["folder", "s3"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "folder":
        return str(tmp_path / "team-store")
    return str(request.getfixturevalue("bucket")) + "/team/runs"


def session_with_parts(root: Path) -> tuple[Path, list[Path]]:
    """A run read from several files (as a Claude Code session with a sub-agent file)."""
    main = root / "s1.jsonl"
    main.write_text('{"a": 1}\n', encoding="utf-8")
    part = root / "s1" / "subagents" / "agent-x.jsonl"
    part.parent.mkdir(parents=True)
    part.write_text('{"b": 2}\n', encoding="utf-8")
    return main, [part]


def test_publishing_twice_stores_once_and_fetches_whole(store_url: str, tmp_path: Path) -> None:
    store = RunStore(store_url)
    main, parts = session_with_parts(tmp_path)
    bundle = bundle_of(main, parts)
    assert not store.has(bundle)
    url = store.publish(bundle)
    assert url == f"{store.url}/{bundle.digest}/s1.jsonl" and store.has(bundle)
    assert store.publish(bundle_of(main, parts)) == url  # the same bytes: the same place
    got = store.fetch(url, tmp_path / "copy")
    assert got.read_bytes() == main.read_bytes()
    assert (tmp_path / "copy" / "s1" / "subagents" / "agent-x.jsonl").read_text() == '{"b": 2}\n'


def test_the_address_is_the_content(tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "x.loom.json", tmp_path / "b" / "x.loom.json"
    for path in (a, b):
        path.parent.mkdir()
        shutil.copy(SAMPLE, path)
    assert bundle_of(a).digest == bundle_of(b).digest
    b.write_bytes(b.read_bytes() + b" ")
    assert bundle_of(a).digest != bundle_of(b).digest


def test_an_unfinished_upload_is_not_a_run(store_url: str, tmp_path: Path) -> None:
    """The parts of an interrupted publish are there, the main file is not: not stored,
    not fetchable; publishing again completes it."""
    store = RunStore(store_url)
    main, parts = session_with_parts(tmp_path)
    bundle = bundle_of(main, parts)
    store._put(str(parts[0]), store._key(bundle.digest, bundle.parts[0][1]))  # the crash
    assert not store.has(bundle)
    with pytest.raises(LoadError, match="never finished"):
        store.fetch(store.location(bundle.digest, "s1.jsonl"), tmp_path / "copy")
    url = store.publish(bundle)
    assert store.fetch(url, tmp_path / "copy2").read_bytes() == main.read_bytes()


def test_a_part_outside_the_runs_folder_is_refused(tmp_path: Path) -> None:
    main = tmp_path / "run" / "a.jsonl"
    main.parent.mkdir()
    main.write_text("{}\n")
    with pytest.raises(LoadError, match="not under the run's folder"):
        bundle_of(main, [tmp_path / "elsewhere.jsonl"])


def test_the_cache_keeps_recent_runs_within_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cache.ENV, str(tmp_path / "cache"))
    store = RunStore(str(tmp_path / "store"))
    urls = []
    for n in range(3):
        run = tmp_path / f"r{n}" / "run.loom.json"
        run.parent.mkdir()
        run.write_bytes(b"x" * 4096 + str(n).encode())
        bundle = bundle_of(run)
        urls.append((store.publish(bundle), bundle.digest))
    first = cache.local_copy(store, urls[0][0], urls[0][1], "run.loom.json")
    os.utime(first.parent, (1, 1))  # used long ago
    monkeypatch.setenv(cache.BOUND_ENV, "0")  # nothing may stay but the run being opened
    second = cache.local_copy(store, urls[1][0], urls[1][1], "run.loom.json")
    assert second.is_file() and not first.exists()
    again = cache.local_copy(store, urls[1][0], urls[1][1], "run.loom.json")
    assert again == second  # a cached run is not fetched again


def test_a_fetch_cut_short_leaves_nothing_that_looks_complete(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The main file streams in under a temporary name; a fetch that stops halfway (the
    network, or the user opening another run) removes it, and the next fetch is whole."""
    from loom_core.library import store as store_module

    monkeypatch.setattr(store_module, "CHUNK", 4096)  # the sample arrives in several chunks
    monkeypatch.setenv("LOOM_DESKTOP_CACHE", str(tmp_path / "cache"))
    store = RunStore(store_url)
    bundle = bundle_of(SAMPLE)
    url = store.publish(bundle)
    seen: list[tuple[str, int, int]] = []

    def cut(partial: Path, done: int, total: int) -> None:
        seen.append((partial.name, done, total))
        assert not (partial.parent / SAMPLE.name).exists()  # not under its own name yet
        if len(seen) == 2:
            raise ConnectionResetError("the network went away")

    with pytest.raises(ConnectionResetError):
        cache.local_copy(store, url, bundle.digest, SAMPLE.name, cut)
    size = SAMPLE.stat().st_size
    assert [(done, total) for _, done, total in seen] == [(4096, size), (8192, size)]
    assert seen[0][0] == seen[1][0] and seen[0][0].startswith(f"{SAMPLE.name}.part-")
    folder = cache.cache_home() / bundle.digest
    assert not [p.name for p in folder.iterdir()]  # nothing left, partial or whole
    local = cache.local_copy(store, url, bundle.digest, SAMPLE.name)
    assert local.read_bytes() == SAMPLE.read_bytes()


def test_the_same_run_fetched_twice_at_once_arrives_whole_twice(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user who opens a teammate's run again while it downloads starts a second fetch
    into the same cache folder: each writes a temporary file of its own, so neither cuts
    the other's short (a shared temporary name was truncated by the second, and the first
    then found its file renamed away)."""
    from loom_core.library import store as store_module

    monkeypatch.setattr(store_module, "CHUNK", 4096)
    store = RunStore(store_url)
    url = store.publish(bundle_of(SAMPLE))
    dest = tmp_path / "cache" / "run"
    inner: list[Path] = []

    def again_meanwhile(_partial: Path, done: int, _total: int) -> None:
        if done == 4096 and not inner:  # the second fetch, while the first is at 4 KiB
            inner.append(store.fetch(url, dest))

    outer = store.fetch(url, dest, again_meanwhile)
    assert inner == [outer] and outer.read_bytes() == SAMPLE.read_bytes()
    assert [p.name for p in dest.iterdir()] == [SAMPLE.name]  # no temporary file left
