"""Word diff ops: exact reconstruction, merged spans, the long-text path, the one-line render."""

from __future__ import annotations

import pytest

from loom_core.diff import textdiff
from loom_core.diff.textdiff import WordOp, changed_words, render, split_words, word_diff


def _rebuilds(a: str, b: str) -> list[WordOp]:
    ops = word_diff(a, b)
    assert "".join(op.a for op in ops) == a
    assert "".join(op.b for op in ops) == b
    for op in ops:
        assert op.op in ("equal", "insert", "delete", "replace")
        if op.op == "equal":
            assert op.a == op.b
    return ops


def test_split_keeps_every_character() -> None:
    text = "  Hello, world!\n  next line:  x=1"
    assert "".join(split_words(text)) == text
    assert split_words("a, b") == ["a", ",", " ", "b"]


def test_replace_one_word() -> None:
    ops = _rebuilds("the quick brown fox", "the slow brown fox")
    assert [op.op for op in ops] == ["equal", "replace", "equal"]
    assert changed_words(ops) == (["quick"], ["slow"])


def test_insert_and_delete() -> None:
    ops = _rebuilds("read the file now", "read the config file")
    assert changed_words(ops) == (["now"], ["config"])
    assert [op.op for op in ops] == ["equal", "insert", "equal", "delete"]


def test_identical_and_empty() -> None:
    assert _rebuilds("same text", "same text") == [WordOp("equal", "same text", "same text")]
    assert _rebuilds("", "") == []
    assert [op.op for op in _rebuilds("", "new words")] == ["insert"]


def test_unicode_words() -> None:
    ops = _rebuilds("Grüße, schön ✓", "Grüße, hässlich ✓")
    assert changed_words(ops) == (["schön"], ["hässlich"])


def test_long_repetitive_texts() -> None:
    """3,000 near-identical lines (difflib took seconds on such text; the aligner does not)."""
    lines = [f"line {i % 7} says value {i % 5} here" for i in range(3000)]
    changed = list(lines)
    changed[1500] = "line 2 says value 9999 here"
    changed[2900:2900] = ["an extra line"]
    ops = _rebuilds("\n".join(lines), "\n".join(changed))
    gone, new = changed_words(ops)
    assert gone == ["0"] and sorted(new) == ["9999", "an", "extra", "line"]


def test_huge_texts_fall_back_to_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textdiff, "MAX_WORD_TOKENS", 10)
    a = "first line here\nsecond line here\nthird line\n"
    b = "first line here\nsecond line changed\nthird line\n"
    ops = _rebuilds(a, b)
    assert ops[1] == WordOp("replace", "second line here\n", "second line changed\n")


def test_render_shows_changes_with_context() -> None:
    ops = word_diff(
        "one two three four five six seven eight nine ten",
        "one two three four five SIX seven eight nine ten",
    )
    assert render(ops, context=2) == "… four five [-six-] {+SIX+} seven eight …"
    assert render(word_diff("a", "b")) == "[-a-] {+b+}"
