"""World states: snapshots from JSON, SQLite and SQL dumps, their canonical form, and structural diffs.

What lives here:

* :mod:`~judgekit.state.snapshot`: snapshots (tables of records keyed by id) from JSON, SQLite or SQL.
* :mod:`~judgekit.state.canonical`: the canonical form of state values, one representation per meaning.
* :mod:`~judgekit.state.diff`: rows added, removed and changed between two snapshots, field by field.
* :mod:`~judgekit.state.provider`: the states a trial refers to (fixtures, recorded states, references),
  the one place grading reads state files.

What may import it: the layers above it in the import contract (``judges`` up to ``cli``); ``caseset``
is its sibling and does not. It may import ``formats`` and below.
"""

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
