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


def _report_with_reasons(tmp_path, count: int, text: str):
    """The golden report with ``count`` trials that did not pass, each reason carrying ``text``."""
    from judgekit.reports.run_model import report_run
    from judgekit.verdict import Verdict
    from support import results_file

    path = results_file(tmp_path / "run.jsonl", "2.1.0", {"refund-1": [Verdict.FAIL, Verdict.PASS]})
    report = report_run(path, undecided="fail")[0]
    first = report.trial_reasons[0]
    reasons = tuple(
        first.model_copy(update={"trial": n + 1, "reason": f"{text} (trial {n + 1})"}) for n in range(count)
    )
    return report.model_copy(update={"trial_reasons": reasons})


def test_the_pieces_joined_are_the_whole_report_json(tmp_path, monkeypatch):
    from judgekit.reports import run_json

    report = _report_with_reasons(tmp_path, 40, 'é\u2028"quoted" \\ back')
    whole = _reference(report.model_dump(mode="json"))
    assert "".join(run_json.run_json_pieces(report)) == whole == run_json.render_run_json(report)
    monkeypatch.setattr(run_json, "_PIECE_CHARS", 1)  # a piece per entry
    pieces = list(run_json.run_json_pieces(report))
    assert len(pieces) == 40
    assert "".join(pieces) == whole
    assert all(p and p.endswith((",\n", "}\n")) for p in pieces)
    empty = report.model_copy(update={"trial_reasons": ()})
    assert list(run_json.run_json_pieces(empty)) == [_reference(empty.model_dump(mode="json"))]
