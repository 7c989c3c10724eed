"""Property tests: no input crashes a reader, a view or the CLI (issue 12).

The normal suite runs a small, derandomized sample of every mutation family (a few
seconds); ``make fuzz`` selects the long profile (``LOOM_FUZZ_PROFILE=long``). A failing
example is kept under ``tests/fuzz_regressions/`` (the shortest one per family), and
every file there is replayed by :func:`test_kept_regressions_stay_fixed`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from loom_core.errors import LoadError
from loom_core.formats.journal import JournalState
from loom_core.formats.loader import load_bytes
from tests.core.fuzz.strategies import FAMILIES, documents, dump, mutated
from tests.core.fuzz.surfaces import exercise

REGRESSIONS = Path(__file__).resolve().parents[2] / "fuzz_regressions"
_QUIET = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.function_scoped_fixture,
    HealthCheck.filter_too_much,
]
settings.register_profile(
    "ci",
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=_QUIET,
)
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=_QUIET)
FUZZ = settings.get_profile(os.environ.get("LOOM_FUZZ_PROFILE", "ci"))
_kept: dict[str, Path] = {}


def keep_failure(family: str, data: bytes) -> None:
    """Keep the shortest failing input of this run for ``family`` as a regression file."""
    old = _kept.get(family)
    if old is not None and old.exists() and old.stat().st_size <= len(data):
        return
    REGRESSIONS.mkdir(exist_ok=True)
    path = REGRESSIONS / f"{family}-{hashlib.sha256(data).hexdigest()[:12]}.json"
    path.write_bytes(data)
    if old is not None and old != path:
        old.unlink(missing_ok=True)
    _kept[family] = path


def _exercise_keeping(family: str, data: bytes, tmp: Path) -> Any:
    try:
        return exercise(data, tmp)
    except Exception:
        keep_failure(family, data)
        raise


@FUZZ
@given(documents)
def test_valid_documents_load_without_warnings(
    tmp_path_factory: pytest.TempPathFactory, doc: tuple[str, Any]
) -> None:
    """What the schema allows loads cleanly, and every view and command takes it."""
    kind, value = doc
    tmp = tmp_path_factory.mktemp("valid")
    outcome = exercise(dump(kind, value), tmp)
    assert outcome.status == "ok", outcome.cause
    loaded = load_bytes(dump(kind, value), "x")
    assert not [w for w in loaded.warnings if "wrong type" in w or "out of range" in w]


@pytest.mark.parametrize("family", FAMILIES)
def test_mutated_documents_never_crash(
    family: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every family: accepted (wrong types marked) or refused in one line; never a traceback."""

    @FUZZ
    @given(mutated(family))
    def run(data: bytes) -> None:
        _exercise_keeping(family, data, tmp_path_factory.mktemp(family))

    run()


def _regressions() -> list[Path]:
    return sorted(REGRESSIONS.glob("*.json")) if REGRESSIONS.is_dir() else []


@pytest.mark.parametrize("path", _regressions(), ids=lambda p: p.name)
def test_kept_regressions_stay_fixed(path: Path, tmp_path: Path) -> None:
    exercise(path.read_bytes(), tmp_path)


def test_the_issue_reproductions_are_refused_in_words(tmp_path: Path) -> None:
    """The exact inputs of issue 12, with the cause and where it is."""
    cases = {
        b'{"log": [], "x": '
        + b"[" * 1000
        + b"]" * 1000
        + b"}": "JSON nested too deeply (over 500 levels) in member 'x' at line 1",
        b'{"log": [], "version": 1e400}': "number out of range in member 'version'",
    }
    for data, cause in cases.items():
        with pytest.raises(LoadError) as err:
            load_bytes(data, "f.loom.json")
        assert err.value.cause == cause
        assert exercise(data, tmp_path).status == "rejected"


def test_the_journal_feed_reads_wrong_types_with_the_line() -> None:
    state = JournalState()
    for line in (b'{"type": "header"}', b'{"type": "effect", "seq": 3, "kind": 5}'):
        assert state.feed(line)
    assert state.effects[0].seq == 3 and state.effects[0].kind == ""
    assert state.problems == ["line 2 (seq 3): field 'kind' has the wrong type, shown raw: 5"]


def test_a_call_name_of_another_type_shows_as_its_json() -> None:
    from loom_core.views.steps import call_text

    assert call_text({"name": ["x"], "input": {"q": 1}}) == '["x"]({"q": 1})'


def test_a_journal_with_a_broken_first_line_is_still_a_journal() -> None:
    effect = b'{"type": "effect", "seq": 0, "kind": "model"}\n'
    with pytest.raises(LoadError) as err:
        load_bytes(b'{"type": "hea\n' + effect, "j.jsonl")
    assert err.value.cause == (
        "not a loom journal (no header or effect line): line 1 is incomplete (torn)"
    )
    assert load_bytes(b'{"log": [], "version": null}', "t").version == 1  # null: as if absent


def test_what_loads_is_never_too_deep_for_what_runs_deeper_later() -> None:
    """Nesting near the stack's limit is decided once, at load (with headroom): a view or
    a save that decodes the same values from a deeper stack (a slot, a worker) succeeds."""
    from loom_core.formats.trace import source_dict

    def deeper(n: int, work: Any) -> Any:
        return work() if n == 0 else deeper(n - 1, work)

    for depth in range(600, 1000, 20):
        data = b'{"log": [], "x": ' + b"[" * depth + b"]" * depth + b"}"
        try:
            doc = load_bytes(data, "f")
        except LoadError as err:
            assert "nested too deeply" in err.cause
            continue
        assert "x" in deeper(120, lambda d=doc: source_dict(d))


def test_a_utf8_byte_order_mark_is_read_and_utf16_is_named(tmp_path: Path) -> None:
    """Editors on Windows add a BOM; loom-harness never writes one. UTF-16 is refused in words."""
    from loom_core.formats.progressive import load_progressive

    text = '{"version": 2, "log": [{"seq": 0, "kind": "tool:x", "result": "ok"}]}'
    path = tmp_path / "bom.loom.json"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert len(load_bytes(path.read_bytes(), str(path)).effects) == 1
    assert len(load_progressive(str(path)).doc.effects) == 1
    assert exercise(path.read_bytes(), tmp_path).status == "ok"
    with pytest.raises(LoadError) as err:
        load_bytes(text.encode("utf-16"), "w.loom.json")
    assert err.value.cause == "UTF-16 text, not UTF-8 (save it as UTF-8 to open it)"


def test_lone_surrogates_are_found_by_reading_escapes_in_order() -> None:
    from loom_core.formats.tolerant import surrogate_cause

    assert surrogate_cause(rb'"\ud83d\ude00 \\ud800"') is None  # a pair, then text
    assert surrogate_cause(rb'"\\ud850\ude6c"') == (
        "a lone surrogate escape (\\ude6c) in a string at line 1"
    )
    assert surrogate_cause(rb'"\ud83d\ud83d\ude00"') is not None
