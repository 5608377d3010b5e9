"""The JSON reports' text: what ``json.dumps(indent=2, sort_keys=True, ensure_ascii=False)`` writes."""

from __future__ import annotations

import json
from typing import Any

import pytest
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
    monkeypatch.setattr(run_json, "_PIECE_CHARS", 1)  # a piece per batch of entries
    for batch, count in ((1, 40), (3, 14), (40, 1), (64, 1)):
        monkeypatch.setattr(run_json, "_BATCH", batch)
        pieces = list(run_json.run_json_pieces(report))
        assert len(pieces) == count
        assert "".join(pieces) == whole
        assert all(p and p.endswith((",\n", "}\n")) for p in pieces)
    empty = report.model_copy(update={"trial_reasons": ()})
    assert list(run_json.run_json_pieces(empty)) == [_reference(empty.model_dump(mode="json"))]


ENTRY_VALUE = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | TEXT
ENTRY = st.dictionaries(
    TEXT,
    ENTRY_VALUE
    | st.lists(ENTRY_VALUE, max_size=3)
    | st.lists(st.dictionaries(TEXT, ENTRY_VALUE), max_size=2),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(ENTRY, min_size=1, max_size=5))
def test_entries_dumped_together_are_each_entry_dumped_and_indented(entries):
    """msgspec's one encoding of a batch writes what json writes entry by entry (lone surrogates included)."""
    from judgekit.reports.run_json import _dump_entries

    assert _dump_entries(entries) == ",\n".join(
        "    " + _dump(e)[:-1].replace("\n", "\n    ") for e in entries
    )


@pytest.mark.parametrize("model", ["TrialReason", "UndecidedCase"])
def test_the_entries_msgspec_writes_hold_no_float(model):
    """Their batches are encoded by msgspec, which spells floats unlike json: a trial entry has none."""
    from judgekit.reports import run_model

    def types(schema):
        if isinstance(schema, dict):
            yield schema.get("type")
            for value in schema.values():
                yield from types(value)
        elif isinstance(schema, list):
            for value in schema:
                yield from types(value)

    found = set(types(getattr(run_model, model).model_json_schema()))
    assert "number" not in found
    assert {"string", "integer"} <= found


def test_every_long_list_is_written_in_batches_and_the_pieces_are_the_whole_json(tmp_path, monkeypatch):
    """Trial list, undecided cases and per-case cost rows (dollars: floats) each in batches, cut anywhere."""
    from judgekit.reports import run_json
    from judgekit.reports.run_model import CostRow, CostSummary, UndecidedCase

    report = _report_with_reasons(tmp_path, 7, "lone \ud800 surrogate")
    undecided = tuple(
        UndecidedCase(
            case_id=f"case-{n}\u2028",
            trials=3,
            passed=1,
            failed=0,
            undecided=2,
            error=2,
            insufficient_information=0,
            not_evaluated=0,
        )
        for n in range(11)
    )
    rows = tuple(
        CostRow(
            key=f"case-{n}",
            judgments=n,
            prompt_tokens=10 * n,
            completion_tokens=n,
            usd=(None if n % 4 == 0 else 1e-05 * n + 1e16 * (n == 3)),
            known_usd=0.1 * n,
            unpriced=int(n % 4 == 0),
            replayed=0,
        )
        for n in range(13)
    )
    cost = CostSummary(run=rows[1].model_copy(update={"key": "run"}), cases=rows, criteria=rows[:2])
    report = report.model_copy(update={"undecided_cases": undecided, "cost": cost})
    whole = _reference(report.model_dump(mode="json"))
    assert '"usd": 1e-05' in whole
    assert "1e+16" in whole
    assert "".join(run_json.run_json_pieces(report)) == whole
    monkeypatch.setattr(run_json, "_PIECE_CHARS", 1)
    for batch in (1, 2, 5, 64):
        monkeypatch.setattr(run_json, "_BATCH", batch)
        pieces = list(run_json.run_json_pieces(report))
        assert "".join(pieces) == whole
        assert all(p.endswith(",\n") for p in pieces[:-1]), batch
        assert len(pieces) > (7 + 11 + 13) // batch - 3
    only_cost = report.model_copy(update={"undecided_cases": (), "trial_reasons": ()})
    assert "".join(run_json.run_json_pieces(only_cost)) == _reference(only_cost.model_dump(mode="json"))
