"""World states: snapshots from JSON, SQLite and SQL dumps, their canonical form, and structural diffs."""

from judgekit.state.canonical import canonical, canonical_hash, canonical_json
from judgekit.state.diff import FieldChange, RowChange, StateDiff, TableDiff, diff_records, diff_states
from judgekit.state.snapshot import (
    Snapshot,
    load_state,
    snapshot_from_data,
    snapshot_from_sql,
    snapshot_from_sqlite,
)

__all__ = [
    "FieldChange",
    "RowChange",
    "Snapshot",
    "StateDiff",
    "TableDiff",
    "canonical",
    "canonical_hash",
    "canonical_json",
    "diff_records",
    "diff_states",
    "load_state",
    "snapshot_from_data",
    "snapshot_from_sql",
    "snapshot_from_sqlite",
]
