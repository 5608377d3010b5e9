"""Hypothesis strategies for JSON-like values and snapshots (shared by the state tests)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from judgekit.state import Snapshot, snapshot_from_data

KEYS = st.text(alphabet="abcdeé_", min_size=1, max_size=4)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=6),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=8,
)
RECORDS = st.dictionaries(KEYS, VALUES, max_size=4)
TABLES = st.dictionaries(st.sampled_from(["A", "B", "C", "D"]), RECORDS, max_size=4)
STATES = st.dictionaries(st.sampled_from(["users", "orders", "flights"]), TABLES, max_size=3)


def snapshot(data: dict[str, Any]) -> Snapshot:
    return snapshot_from_data(data)


@st.composite
def state_pairs(draw: st.DrawFn) -> tuple[Snapshot, Snapshot]:
    """Two states that share some rows, so diffs have added, removed and modified rows."""
    a = draw(STATES)
    b: dict[str, Any] = {}
    for name, rows in a.items():
        if draw(st.booleans()):
            continue
        kept: dict[str, Any] = {}
        for key, record in rows.items():
            action = draw(st.sampled_from(["keep", "drop", "change"]))
            if action == "keep":
                kept[key] = record
            elif action == "change":
                kept[key] = draw(RECORDS)
        b[name] = {**kept, **draw(TABLES)}
    b.update({k: v for k, v in draw(STATES).items() if k not in a})
    return snapshot(a), snapshot(b)
