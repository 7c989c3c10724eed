"""Structural diff: paths, added/removed keys, list items, Python equality."""

from __future__ import annotations

from loom_core.diff.structdiff import Change, key_path, struct_diff


def test_nested_change_path() -> None:
    old = {"args": {"path": "a.txt", "mode": "r"}}
    new = {"args": {"path": "b.txt", "mode": "r"}}
    assert struct_diff(old, new) == [Change("$.args.path", "changed", "a.txt", "b.txt")]


def test_added_and_removed_keys() -> None:
    assert struct_diff({"a": 1, "b": 2}, {"a": 1, "c": 3}) == [
        Change("$.b", "removed", old=2),
        Change("$.c", "added", new=3),
    ]


def test_list_insert_is_one_added_item() -> None:
    old = {"items": [{"id": 1}, {"id": 2}, {"id": 3}]}
    new = {"items": [{"id": 1}, {"id": 9}, {"id": 2}, {"id": 3}]}
    assert struct_diff(old, new) == [Change("$.items[1]", "added", new={"id": 9})]


def test_list_same_length_is_positional() -> None:
    assert struct_diff([1, 2, 3], [1, 5, 3]) == [Change("$[1]", "changed", 2, 5)]
    assert struct_diff([1, 2], [1]) == [Change("$[1]", "removed", old=2)]


def test_python_equality_and_type_changes() -> None:
    assert struct_diff({"n": 1, "x": [2.0]}, {"n": 1.0, "x": [2]}) == []
    assert struct_diff({"v": [1]}, {"v": {"0": 1}}) == [Change("$.v", "changed", [1], {"0": 1})]
    assert struct_diff("a", None) == [Change("$", "changed", "a", None)]


def test_odd_keys_are_quoted() -> None:
    assert key_path("$", "a b") == '$["a b"]'
    assert key_path("$", "ok_1") == "$.ok_1"
    assert struct_diff({"a-b": 1}, {"a-b": 2})[0].path == '$["a-b"]'


def test_changes_are_capped() -> None:
    old = {f"k{i}": i for i in range(100)}
    new = {f"k{i}": i + 1 for i in range(100)}
    assert len(struct_diff(old, new, limit=10)) == 10
    assert len(struct_diff(list(range(50)), list(range(100, 150)), limit=7)) == 7
    assert struct_diff(list(range(50)), list(range(1, 51))) == [
        Change("$[0]", "removed", old=0),
        Change("$[49]", "added", new=50),
    ]


def test_to_dict_shapes() -> None:
    assert Change("$.a", "added", new=1).to_dict() == {"path": "$.a", "op": "added", "new": 1}
    assert Change("$.a", "removed", old=1).to_dict() == {"path": "$.a", "op": "removed", "old": 1}
    assert Change("$.a", "changed", 1, 2).to_dict() == {
        "path": "$.a",
        "op": "changed",
        "old": 1,
        "new": 2,
    }
