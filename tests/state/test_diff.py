"""Tests for judgekit.state.diff: rows added, removed and changed, field by field."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hypothesis import given

from judgekit.state import (
    FieldChange,
    Snapshot,
    diff_records,
    diff_states,
    load_state,
    snapshot_from_data,
)

from .strategies import STATES, snapshot, state_pairs


@given(STATES)
def test_diff_of_a_state_with_itself_is_empty(data: dict) -> None:  # type: ignore[type-arg]
    state = snapshot(data)
    diff = diff_states(state, state)
    assert not diff
    assert diff.tables == {}
    assert diff.change_count() == 0
    assert diff.lines() == []


@given(STATES)
def test_diff_with_an_equal_but_reordered_state_is_empty(data: dict) -> None:  # type: ignore[type-arg]
    reordered = {t: dict(reversed(list(rows.items()))) for t, rows in reversed(list(data.items()))}
    assert not diff_states(snapshot(data), snapshot(reordered))


@given(state_pairs())
def test_diff_mirrors_when_swapped(pair: tuple[Snapshot, Snapshot]) -> None:
    a, b = pair
    ab = diff_states(a, b)
    ba = diff_states(b, a)
    assert set(ab.tables) == set(ba.tables)
    assert ab.change_count() == ba.change_count()
    for name, forward in ab.tables.items():
        backward = ba.tables[name]
        assert forward.added == backward.removed
        assert forward.removed == backward.added
        assert forward.table_added == backward.table_removed
        assert forward.table_removed == backward.table_added
        assert set(forward.modified) == set(backward.modified)
        for key, change in forward.modified.items():
            other = backward.modified[key]
            assert (change.before, change.after) == (other.after, other.before)
            assert [(c.path, c.old, c.new, c.old_present, c.new_present) for c in change.changes] == [
                (c.path, c.new, c.old, c.new_present, c.old_present) for c in other.changes
            ]


@given(state_pairs())
def test_diff_is_empty_exactly_when_states_are_equal(pair: tuple[Snapshot, Snapshot]) -> None:
    a, b = pair
    assert bool(diff_states(a, b)) == (a.digest() != b.digest())


def test_rows_added_removed_and_changed_field_by_field() -> None:
    before = snapshot_from_data(
        {
            "orders": {
                "O-1": {"status": "awaiting_dispatch", "address": {"line1": "1 Old St", "city": "Leith"}},
                "O-2": {"status": "delivered", "address": {"line1": "9 Far Rd", "city": "Perth"}},
            }
        }
    )
    after = snapshot_from_data(
        {
            "orders": {
                "O-1": {"status": "awaiting_dispatch", "address": {"line1": "5 New St", "city": "Leith"}},
                "O-3": {"status": "new", "address": {}},
            }
        }
    )
    diff = diff_states(before, after)
    table = diff.tables["orders"]
    assert list(table.added) == ["O-3"]
    assert list(table.removed) == ["O-2"]
    change = table.modified["O-1"]
    assert change.changes == (FieldChange("address.line1", "1 Old St", "5 New St"),)
    assert diff.change_count() == 3
    assert diff.lines() == [
        "orders/O-3: row added",
        "orders/O-2: row removed",
        "orders/O-1: address.line1: '1 Old St' -> '5 New St'",
    ]
    assert diff.to_data() == {
        "orders": {
            "added": {"O-3": {"status": "new", "address": {}}},
            "removed": {"O-2": {"status": "delivered", "address": {"line1": "9 Far Rd", "city": "Perth"}}},
            "modified": {"O-1": [{"path": "address.line1", "old": "1 Old St", "new": "5 New St"}]},
        }
    }


def test_fields_appearing_and_disappearing() -> None:
    changes = diff_records({"a": 1, "b": 2}, {"b": 2, "c": 3})
    assert changes == [
        FieldChange("a", 1, None, True, False),
        FieldChange("c", None, 3, False, True),
    ]
    assert [c.describe() for c in changes] == ["a: 1 -> (absent)", "c: (absent) -> 3"]
    assert [c.to_data() for c in changes] == [{"path": "a", "old": 1}, {"path": "c", "new": 3}]


def test_lists_compare_whole() -> None:
    before = {"passengers": [{"first_name": "Ana"}, {"first_name": "Ben"}]}
    after = {"passengers": [{"first_name": "Ana"}]}
    (change,) = diff_records(before, after)
    assert change.path == "passengers"
    assert change.old == before["passengers"]
    assert change.new == after["passengers"]


def test_non_mapping_records() -> None:
    (change,) = diff_records(1, 2)
    assert change.path == ""
    assert change.describe() == "(value): 1 -> 2"


def test_one_equals_one_point_zero_and_nfd_in_diffs() -> None:
    a = snapshot_from_data({"t": {"1": {"amount": 35, "name": "Chlo\u00e9"}}})
    b = snapshot_from_data({"t": {"1": {"amount": 35.0, "name": "Chloe\u0301"}}})
    assert not diff_states(a, b)


def test_ignore_fields_by_name_and_by_dotted_path() -> None:
    a = snapshot_from_data({"t": {"1": {"updated_at": "t1", "meta": {"seen": 1, "etag": "x"}, "v": 1}}})
    b = snapshot_from_data({"t": {"1": {"updated_at": "t2", "meta": {"seen": 2, "etag": "y"}, "v": 1}}})
    assert diff_states(a, b).lines() == [
        "t/1: meta.etag: 'x' -> 'y'",
        "t/1: meta.seen: 1 -> 2",
        "t/1: updated_at: 't1' -> 't2'",
    ]
    assert diff_states(a, b, ignore_fields=["updated_at"]).lines() == [
        "t/1: meta.etag: 'x' -> 'y'",
        "t/1: meta.seen: 1 -> 2",
    ]
    assert diff_states(a, b, ignore_fields=["updated_at", "meta.seen", "etag"]).lines() == []


def test_tables_added_and_removed() -> None:
    a = snapshot_from_data({"old": {"1": {"x": 1}}})
    b = snapshot_from_data({"new": {}})
    diff = diff_states(a, b)
    assert diff.tables["old"].table_removed
    assert diff.tables["new"].table_added
    assert diff.lines() == ["new: table added", "old: table removed", "old/1: row removed"]
    assert diff.to_data()["new"] == {"table_added": True}


def test_only_selected_tables() -> None:
    a = snapshot_from_data({"x": {"1": {"v": 1}}, "y": {"1": {"v": 1}}})
    b = snapshot_from_data({"x": {"1": {"v": 2}}, "y": {"1": {"v": 2}}})
    assert list(diff_states(a, b, tables=["y"]).tables) == ["y"]


def test_lines_are_limited() -> None:
    a = snapshot_from_data({"t": {}})
    b = snapshot_from_data({"t": {str(i): {"v": i} for i in range(10)}})
    lines = diff_states(a, b).lines(limit=3)
    assert len(lines) == 4
    assert lines[-1] == "... and 7 more differences"


def test_collateral_change_in_sqlite_is_visible(tmp_path: Path) -> None:
    """The seed's failure: the requested order changes, and so does another customer's."""
    schema = (
        "CREATE TABLE orders (order_id TEXT PRIMARY KEY, customer TEXT, address TEXT, status TEXT);"
        "INSERT INTO orders VALUES ('O-1', 'U-7', '1 Old St', 'awaiting_dispatch');"
        "INSERT INTO orders VALUES ('O-2', 'U-9', '3 Mill Ln', 'awaiting_dispatch');"
    )
    paths = []
    for name, updates in (("before", []), ("after", ["O-1", "O-2"])):
        path = tmp_path / f"{name}.sqlite"
        with sqlite3.connect(path) as conn:
            conn.executescript(schema)
            for key in updates:
                conn.execute("UPDATE orders SET address = '5 New St' WHERE order_id = ?", (key,))
        conn.close()
        paths.append(path)
    diff = diff_states(load_state(paths[0]), load_state(paths[1]))
    assert sorted(diff.tables["orders"].modified) == ["O-1", "O-2"]
    assert diff.lines() == [
        "orders/O-1: address: '1 Old St' -> '5 New St'",
        "orders/O-2: address: '3 Mill Ln' -> '5 New St'",
    ]
