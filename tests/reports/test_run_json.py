"""The JSON reports' text: what ``json.dumps(indent=2, sort_keys=True, ensure_ascii=False)`` writes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.reports.run_json import _dump

TEXT = st.text(st.sampled_from([*(chr(i) for i in range(0x90)), "é", "😀", "\u2028", "\ud800", '"', "\\"]))
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**40), 10**40) | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=25,
)
"""JSON-like data with every float (NaN, infinities, subnormals, -0.0), control characters, lone
surrogates, non-ASCII text and empty containers."""


def _reference(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(JSONISH)
def test_the_report_json_is_json_dumps_indented_to_the_character(data):
    assert _dump(data) == _reference(data)


def test_floats_keep_pythons_spelling_and_nan_still_reads_as_json_writes_it():
    data = {"b": [1e-05, 1e16, 5e-324, -0.0, 0.1, 1.7976931348623157e308], "a": {}, "c": []}
    assert _dump(data) == _reference(data)
    assert "1e-05" in _dump(data)
    assert "1e+16" in _dump(data)
    assert _dump({"x": float("nan")}) == _reference({"x": float("nan")}) == '{\n  "x": NaN\n}\n'
