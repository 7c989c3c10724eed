"""A download killed halfway leaves its partial file; trimming the cache removes it.

The fetch removes its partial file when it fails, but an app that is killed cannot: the
file stayed in the cache and counted against its bound forever. Here a real process is
killed (SIGKILL) in the middle of a fetch; once its file is older than any live fetch's,
the next open trims it away. A partial file still being written is left alone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loom_core.library import cache
from loom_core.library.store import PART, RunStore, bundle_of

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"
ROOT = Path(__file__).resolve().parents[3]

KILLED_MID_FETCH = """
import os, signal, sys
from loom_core.library import cache, store
from loom_core.library.store import RunStore
store.CHUNK = 4096
def killed(partial, done, total):
    if done >= 8192:
        os.kill(os.getpid(), signal.SIGKILL)
cache.local_copy(RunStore(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], killed)
"""


def _parts(root: Path) -> list[Path]:
    return sorted(root.rglob(f"*{PART}*"))


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_download_killed_halfway_is_swept_when_the_cache_is_trimmed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cache.ENV, str(tmp_path / "cache"))
    store = RunStore(str(tmp_path / "store"))
    bundle = bundle_of(SAMPLE)
    url = store.publish(bundle)
    argv = [store.url, url, bundle.digest, SAMPLE.name]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", KILLED_MID_FETCH, *argv], env=env, cwd=ROOT, timeout=120
    )
    assert done.returncode == -signal.SIGKILL
    root = cache.cache_home()
    (left,) = _parts(root)  # the killed fetch's partial file, 8 KiB of the run
    assert left.stat().st_size == 8192

    cache.evict()  # a moment later: it may still be a live fetch's, so it stays
    assert _parts(root) == [left]

    old = time.time() - 24 * 3600  # a day on: no fetch writes it
    os.utime(left, (old, old))
    live = root / "other" / f"run.loom.json{PART}x"  # another process's fetch, writing now
    live.parent.mkdir()
    live.write_bytes(b"{")
    folder_time = left.parent.stat().st_mtime_ns
    removed = cache.evict(bound=1 << 30)
    assert _parts(root) == [live] and removed == []  # no run was evicted, the part swept
    assert left.parent.stat().st_mtime_ns == folder_time  # its run not made "recent"

    local = cache.local_copy(store, url, bundle.digest, SAMPLE.name)
    assert local.read_bytes() == SAMPLE.read_bytes()
    assert cache._size(local.parent) == SAMPLE.stat().st_size  # the bound counts the run only
