"""Grading with field predicates: ordering operators, combinations, and why each failure failed."""

from __future__ import annotations

import doctest
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import judgekit.cases
import judgekit.graders.state
from graders._build import by_id
from judgekit.cases import ExpectedState, FieldPredicate
from judgekit.graders.state import check_state, evaluate_predicate, predicate_failures
from judgekit.state import canonical, snapshot_from_data
from judgekit.verdict import FailureCategory, Verdict


def check(pred: dict[str, Any], value: Any, *, present: bool = True) -> str | None:
    return evaluate_predicate(FieldPredicate.model_validate(pred), present, canonical(value))


def holds(pred: dict[str, Any], value: Any) -> bool:
    return check(pred, value) is None


# --------------------------------------------------------------------------- each ordering predicate


@pytest.mark.parametrize(
    ("pred", "value"),
    [
        pytest.param({"gt": 5}, 6, id="gt"),
        pytest.param({"gt": 5}, 5.000001, id="gt_float"),
        pytest.param({"ge": 5}, 5, id="ge_equal"),
        pytest.param({"ge": 5}, 5.0, id="ge_equal_float"),
        pytest.param({"lt": 0}, -0.5, id="lt"),
        pytest.param({"le": 412.18}, 412.18, id="le_equal"),
        pytest.param({"between": [1, 5]}, 1, id="between_lo_included"),
        pytest.param({"between": [1, 5]}, 5, id="between_hi_included"),
        pytest.param({"between": [1, 5]}, 3.5, id="between_inside"),
        pytest.param({"gt": 2**53}, 2**53 + 1, id="gt_large_integer"),
    ],
)
def test_ordering_predicate_passes(pred: dict[str, Any], value: Any) -> None:
    assert check(pred, value) is None


@pytest.mark.parametrize(
    ("pred", "value", "message"),
    [
        pytest.param({"gt": 5}, 5, "gt: expected > 5, found 5", id="gt_equal"),
        pytest.param({"ge": 5}, 4.99, "ge: expected >= 5, found 4.99", id="ge"),
        pytest.param({"lt": 0}, 0, "lt: expected < 0, found 0", id="lt_equal"),
        pytest.param({"le": 10}, 11, "le: expected <= 10, found 11", id="le"),
        pytest.param(
            {"between": [1, 5]},
            5.5,
            "between: expected 1 <= value <= 5 (inclusive), found 5.5",
            id="between_above",
        ),
        pytest.param(
            {"between": [1, 5]},
            0,
            "between: expected 1 <= value <= 5 (inclusive), found 0",
            id="between_below",
        ),
        pytest.param({"gt": 0}, float("nan"), "gt: expected > 0, found nan", id="nan_is_not_ordered"),
    ],
)
def test_ordering_predicate_fails_with_the_bound_and_the_found_value(
    pred: dict[str, Any], value: Any, message: str
) -> None:
    assert check(pred, value) == message


@pytest.mark.parametrize(
    ("pred", "value", "message"),
    [
        pytest.param({"gt": 5}, "7", "gt: expected a number > 5, found string '7'", id="numeric_text"),
        pytest.param(
            {"ge": 0},
            True,
            "ge: expected a number >= 0, found boolean true (booleans are not numbers)",
            id="boolean",
        ),
        pytest.param({"lt": 3}, None, "lt: expected a number < 3, found null", id="null"),
        pytest.param({"le": 3}, [1], "le: expected a number <= 3, found list [1]", id="list"),
        pytest.param(
            {"between": [0, 1]},
            {"v": 1},
            "between: expected a number with 0 <= value <= 1 (inclusive), found mapping {'v': 1}",
            id="mapping",
        ),
        pytest.param(
            {"approx": 1.0},
            False,
            "expected a number within 1e-09 of 1.0, found boolean false (booleans are not numbers)",
            id="approx_boolean",
        ),
    ],
)
def test_non_number_found_value_fails_naming_its_type(pred: dict[str, Any], value: Any, message: str) -> None:
    assert check(pred, value) == message


def test_ordering_on_a_missing_field_fails_as_a_missing_field() -> None:
    pred = FieldPredicate(ge=1, lt=5)
    (failure,) = predicate_failures(pred, False, None)
    assert (failure.predicate, failure.expected, failure.found, failure.present) == (
        "present",
        True,
        None,
        False,
    )
    assert failure.message == "expected >= 1 and < 5, the field is absent"


# --------------------------------------------------------------------------- combinations


def test_combined_predicates_all_must_hold_and_name_the_one_that_failed() -> None:
    pred = FieldPredicate(ge=1, lt=5)
    assert predicate_failures(pred, True, 1) == []
    (failure,) = predicate_failures(pred, True, 5)
    assert failure.to_data() == {
        "predicate": "lt",
        "expected": 5,
        "found": 5,
        "present": True,
        "message": "lt: expected < 5, found 5",
    }


def test_every_failing_operator_is_reported() -> None:
    pred = FieldPredicate.model_validate({"matches": "^RF-", "one_of": ["A", "B"]})
    failures = predicate_failures(pred, True, "C")
    assert [(f.predicate, f.expected) for f in failures] == [("one_of", ["A", "B"]), ("matches", "^RF-")]
    assert evaluate_predicate(pred, True, "C") == (
        "expected one of ['A', 'B'], found 'C'; expected a match for /^RF-/, found 'C'"
    )


def test_present_with_a_bound_checks_both() -> None:
    pred = FieldPredicate.model_validate({"present": True, "between": [0, 1]})
    assert [f.predicate for f in predicate_failures(pred, False, None)] == ["present", "present"]
    assert [f.predicate for f in predicate_failures(pred, True, 2)] == ["between"]
    assert predicate_failures(pred, True, 0.5) == []


# --------------------------------------------------------------------------- properties

finite = st.one_of(st.integers(-(10**6), 10**6), st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))
found_numbers = st.one_of(finite, st.floats(allow_nan=True, allow_infinity=True))
not_numbers = st.one_of(st.booleans(), st.none(), st.text(max_size=5), st.lists(st.integers(), max_size=2))


@given(a=finite, b=finite, value=found_numbers)
def test_between_is_ge_lo_and_le_hi(a: float, b: float, value: float) -> None:
    lo, hi = min(a, b), max(a, b)
    assert holds({"between": [lo, hi]}, value) == (holds({"ge": lo}, value) and holds({"le": hi}, value))


@given(bound=finite, value=finite)
def test_gt_is_not_le_and_lt_is_not_ge_for_numbers(bound: float, value: float) -> None:
    assert holds({"gt": bound}, value) == (not holds({"le": bound}, value))
    assert holds({"lt": bound}, value) == (not holds({"ge": bound}, value))


@given(bound=finite, value=finite)
def test_ordering_agrees_with_python_comparison(bound: float, value: float) -> None:
    assert holds({"gt": bound}, value) == (value > bound)
    assert holds({"ge": bound}, value) == (value >= bound)
    assert holds({"lt": bound}, value) == (value < bound)
    assert holds({"le": bound}, value) == (value <= bound)


@given(bound=finite, value=not_numbers, op=st.sampled_from(["gt", "ge", "lt", "le"]))
def test_non_numbers_fail_every_ordering_predicate(bound: float, value: Any, op: str) -> None:
    problem = check({op: bound}, value)
    assert problem is not None
    assert "expected a number" in problem


@given(low=finite, high=finite, value=found_numbers, low_op=st.sampled_from(["gt", "ge"]))
def test_a_combination_holds_exactly_when_each_part_holds(
    low: float, high: float, value: float, low_op: str
) -> None:
    low, high = min(low, high), max(low, high) + 1
    combined = {low_op: low, "le": high}
    assert holds(combined, value) == (holds({low_op: low}, value) and holds({"le": high}, value))
    failed = {f.predicate for f in predicate_failures(FieldPredicate.model_validate(combined), True, value)}
    assert failed == {op for op in combined if not holds({op: combined[op]}, value)}


# --------------------------------------------------------------------------- in the state grader

INITIAL = snapshot_from_data(
    {"refunds": {}, "payments": {"PMT-1": {"amount": 412.18, "status": "settled", "attempts": 1}}}
)


def test_modified_row_within_bounds_passes() -> None:
    spec = ExpectedState.model_validate(
        {"changes": {"payments": {"modified": {"PMT-1": {"attempts": {"ge": 2, "lt": 5}}}}}}
    )
    final = snapshot_from_data(
        {"refunds": {}, "payments": {"PMT-1": {"amount": 412.18, "status": "settled", "attempts": 3}}}
    )
    checks = by_id(check_state(spec, initial=INITIAL, final=final))
    assert checks["state"].verdict is Verdict.PASS, checks["state"].reason
    assert checks["state:collateral"].verdict is Verdict.PASS


def test_modified_row_out_of_bounds_says_which_bound_and_what_was_found() -> None:
    spec = ExpectedState.model_validate(
        {"changes": {"payments": {"modified": {"PMT-1": {"attempts": {"ge": 2, "lt": 5}}}}}}
    )
    final = snapshot_from_data(
        {"refunds": {}, "payments": {"PMT-1": {"amount": 412.18, "status": "settled", "attempts": 7}}}
    )
    state = by_id(check_state(spec, initial=INITIAL, final=final))["state"]
    assert state.verdict is Verdict.FAIL
    assert state.category is FailureCategory.INVALID_ARGUMENTS
    assert "payments/PMT-1: attempts: lt: expected < 5, found 7" in state.reason
    (ev,) = state.evidence
    assert ev.data["failures"] == [
        {
            "field": "attempts",
            "predicate": "lt",
            "expected": 5,
            "found": 7,
            "present": True,
            "message": "lt: expected < 5, found 7",
        }
    ]


def test_added_rows_with_ranges_are_matched_as_an_assignment() -> None:
    # First-fit would give RF-1 (50) to the wide range and leave the narrow one with nothing.
    spec = ExpectedState.model_validate(
        {"refunds": [{"amount": {"between": [0, 100]}}, {"amount": {"between": [40, 60]}}]}
    )
    final = snapshot_from_data(
        {**INITIAL.to_data(), "refunds": {"RF-1": {"amount": 50}, "RF-2": {"amount": 10}}}
    )
    checks = by_id(check_state(spec, initial=INITIAL, final=final))
    assert checks["state"].verdict is Verdict.PASS, checks["state"].reason
    assert checks["state:collateral"].verdict is Verdict.PASS


def test_added_row_with_text_amount_fails_naming_the_type() -> None:
    spec = ExpectedState.model_validate({"refunds": [{"amount": {"gt": 0, "le": 412.18}}]})
    final = snapshot_from_data({**INITIAL.to_data(), "refunds": {"RF-1": {"amount": "412.18"}}})
    state = by_id(check_state(spec, initial=INITIAL, final=final))["state"]
    assert state.verdict is Verdict.FAIL
    assert "no added row satisfies {amount: > 0 and <= 412.18}" in state.reason
    (ev,) = state.evidence
    assert ev.data["expected_row"] == {"amount": "> 0 and <= 412.18"}
    closest = ev.data["closest"]["RF-1"]
    assert closest["problems"] == [
        "amount: gt: expected a number > 0, found string '412.18'",
        "amount: le: expected a number <= 412.18, found string '412.18'",
    ]
    assert [(f["predicate"], f["expected"], f["found"]) for f in closest["failures"]] == [
        ("gt", 0, "412.18"),
        ("le", 412.18, "412.18"),
    ]


def test_no_added_row_describes_the_range() -> None:
    spec = ExpectedState.model_validate({"refunds": [{"amount": {"between": [1, 5]}}]})
    state = by_id(check_state(spec, initial=INITIAL, final=INITIAL))["state"]
    assert state.verdict is Verdict.FAIL
    assert state.category is FailureCategory.INCOMPLETE_EXECUTION
    assert "expected an added row {amount: between 1 and 5 (inclusive)}; no row was added" in state.reason


# --------------------------------------------------------------------------- documentation


@pytest.mark.parametrize("module", [judgekit.graders.state, judgekit.cases], ids=lambda m: m.__name__)
def test_doctests_run(module: Any) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
