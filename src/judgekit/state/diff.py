"""Structural diff of two snapshots: rows added, removed and changed, field by field.

The diff is the explanation a failing state check gives: which table, which row, which field, the old
and the new value. Nested mappings are compared field by field with dotted paths
(``passengers.first_name``); lists are compared whole (a changed list is one change with both lists).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import compress, filterfalse, repeat
from operator import is_not, ne
from typing import Any

from judgekit.state.snapshot import Snapshot

__all__ = ["FieldChange", "RowChange", "StateDiff", "TableDiff", "diff_records", "diff_states"]


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field that differs between two versions of a row.

    Attributes:
        path: Dotted path of the field inside the record (``""`` when the record is not a mapping).
        old: The value before (``None`` when absent; see ``old_present``).
        new: The value after (``None`` when absent; see ``new_present``).
        old_present: Whether the field existed before.
        new_present: Whether the field exists after.
    """

    path: str
    old: Any
    new: Any
    old_present: bool = True
    new_present: bool = True

    def describe(self) -> str:
        """One readable line: ``status: 'active' -> 'cancelled'``."""
        old = repr(self.old) if self.old_present else "(absent)"
        new = repr(self.new) if self.new_present else "(absent)"
        return f"{self.path or '(value)'}: {old} -> {new}"

    def to_data(self) -> dict[str, Any]:
        """Plain data for reports and evidence."""
        out: dict[str, Any] = {"path": self.path}
        if self.old_present:
            out["old"] = self.old
        if self.new_present:
            out["new"] = self.new
        return out


@dataclass(frozen=True, slots=True)
class RowChange:
    """A row present in both states whose content differs.

    Attributes:
        key: The row's key.
        changes: The differing fields, sorted by path.
        before: The row before.
        after: The row after.
    """

    key: str
    changes: tuple[FieldChange, ...]
    before: Any
    after: Any


@dataclass
class TableDiff:
    """Differences within one table.

    Attributes:
        added: Rows only in the second state, by key.
        removed: Rows only in the first state, by key.
        modified: Rows in both that differ, by key.
        table_added: The table exists only in the second state.
        table_removed: The table exists only in the first state.
    """

    added: dict[str, Any] = field(default_factory=dict)
    removed: dict[str, Any] = field(default_factory=dict)
    modified: dict[str, RowChange] = field(default_factory=dict)
    table_added: bool = False
    table_removed: bool = False

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.modified or self.table_added or self.table_removed)


@dataclass
class StateDiff:
    """Differences between two snapshots, by table (tables without differences are left out)."""

    tables: dict[str, TableDiff] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return any(self.tables.values())

    def change_count(self) -> int:
        """Rows added, removed or modified, over all tables."""
        return sum(len(t.added) + len(t.removed) + len(t.modified) for t in self.tables.values())

    def lines(self, *, limit: int = 50) -> list[str]:
        """Readable lines, one per added or removed row and per changed field.

        At most ``limit`` lines; a final line then says how many more there are.
        """
        out: list[str] = []
        for name in sorted(self.tables):
            t = self.tables[name]
            if t.table_added:
                out.append(f"{name}: table added")
            if t.table_removed:
                out.append(f"{name}: table removed")
            out.extend(f"{name}/{key}: row added" for key in sorted(t.added))
            out.extend(f"{name}/{key}: row removed" for key in sorted(t.removed))
            for key in sorted(t.modified):
                out.extend(f"{name}/{key}: {c.describe()}" for c in t.modified[key].changes)
        if len(out) > limit:
            return [*out[:limit], f"... and {len(out) - limit} more differences"]
        return out

    def to_data(self) -> dict[str, Any]:
        """Plain data: ``table -> {added: {key: row}, removed: {key: row}, modified: {key: [changes]}}``."""
        data: dict[str, Any] = {}
        for name, t in sorted(self.tables.items()):
            entry: dict[str, Any] = {}
            if t.table_added:
                entry["table_added"] = True
            if t.table_removed:
                entry["table_removed"] = True
            if t.added:
                entry["added"] = dict(sorted(t.added.items()))
            if t.removed:
                entry["removed"] = dict(sorted(t.removed.items()))
            if t.modified:
                entry["modified"] = {
                    k: [c.to_data() for c in rc.changes] for k, rc in sorted(t.modified.items())
                }
            data[name] = entry
        return data


def _strip_ignored(value: Any, ignore: frozenset[str], prefix: str) -> Any:
    if not ignore or not isinstance(value, dict):
        return value
    out = {}
    for k, v in value.items():
        path = f"{prefix}{k}"
        if k in ignore or path in ignore:
            continue
        out[k] = _strip_ignored(v, ignore, f"{path}.")
    return out


def diff_records(before: Any, after: Any, *, prefix: str = "") -> list[FieldChange]:
    """Field-level differences between two canonical records (mappings recurse, lists compare whole)."""
    if before == after:
        return []
    if not isinstance(before, dict) or not isinstance(after, dict):
        return [FieldChange(prefix.rstrip("."), before, after)]
    changes: list[FieldChange] = []
    for key in sorted(set(before) | set(after)):
        path = f"{prefix}{key}"
        if key not in after:
            changes.append(FieldChange(path, before[key], None, True, False))
        elif key not in before:
            changes.append(FieldChange(path, None, after[key], False, True))
        elif before[key] != after[key]:
            if isinstance(before[key], dict) and isinstance(after[key], dict):
                changes.extend(diff_records(before[key], after[key], prefix=f"{path}."))
            else:
                changes.append(FieldChange(path, before[key], after[key]))
    return changes


_MISSING = object()


def _diff_table(a: Mapping[str, Any], b: Mapping[str, Any], ignore: frozenset[str]) -> TableDiff:
    out = TableDiff()
    # Find the differing rows with C-level iteration (map/compress): rows that are the very same object
    # are skipped without comparing, the rest are compared with ``!=``; only differing rows are diffed.
    keys = list(a)
    others = list(map(b.get, keys, repeat(_MISSING)))
    mask = list(map(is_not, a.values(), others))
    maybe = list(compress(range(len(keys)), mask))
    rows = list(compress(a.values(), mask))
    maybe_others = list(compress(others, mask))
    differ = compress(zip(maybe, rows, maybe_others, strict=True), map(ne, rows, maybe_others))
    for i, row, other in differ:
        key = keys[i]
        if other is _MISSING:
            out.removed[key] = row
            continue
        if ignore:
            changes = diff_records(_strip_ignored(row, ignore, ""), _strip_ignored(other, ignore, ""))
        else:
            changes = diff_records(row, other)
        if changes:
            out.modified[key] = RowChange(key, tuple(changes), row, other)
    for key in filterfalse(a.__contains__, b):
        out.added[key] = b[key]
    return out


def diff_states(
    before: Snapshot,
    after: Snapshot,
    *,
    ignore_fields: Iterable[str] = (),
    tables: Iterable[str] | None = None,
) -> StateDiff:
    """Compare two snapshots.

    Args:
        before: The first state (for example the initial or the expected state).
        after: The second state (for example the agent's final state).
        ignore_fields: Field names (at any depth) or dotted paths that are ignored (timestamps that
            legitimately churn).
        tables: Only compare these tables (all when ``None``).

    Returns:
        The differences; falsy when the states are equal (ignoring ``ignore_fields``).
    """
    ignore = frozenset(ignore_fields)
    names = set(before.tables) | set(after.tables) if tables is None else set(tables)
    result = StateDiff()
    for name in sorted(names):
        a = before.tables.get(name)
        b = after.tables.get(name)
        if a is not None and b is not None and a == b:
            continue
        table_diff = _diff_table(a or {}, b or {}, ignore)
        table_diff.table_added = a is None and b is not None
        table_diff.table_removed = b is None and a is not None
        if table_diff:
            result.tables[name] = table_diff
    return result
