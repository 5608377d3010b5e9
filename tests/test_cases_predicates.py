"""Field predicates are a closed set: reading them from case files (judgekit.cases.FieldPredicate).

Grading with them is tested in tests/graders/test_state_predicates.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from judgekit.cases import Case, ExpectedState, FieldPredicate, parse_case
from judgekit.errors import Problem
from judgekit.io.documents import Document, parse_text

PREDICATE_LIST = "equals, approx, tol, one_of, matches, present, absent, gt, ge, lt, le, between"


def refused(pred: Any) -> str:
    """The single message refusing ``pred`` as a field predicate."""
    with pytest.raises(ValidationError) as info:
        FieldPredicate.model_validate(pred)
    (error,) = info.value.errors(include_url=False)
    return str(error["msg"]).removeprefix("Value error, ")


def problems_of(text: str, name: str = "case.yaml") -> list[Problem]:
    (doc,) = list(parse_text(text, Path(name)))
    assert isinstance(doc, Document)
    result = parse_case(doc.data, doc)
    assert isinstance(result, list), "expected the case to be refused"
    return result


def field_of(value: Any) -> FieldPredicate:
    """The predicate a value at a field-expectation position is read as."""
    state = ExpectedState.model_validate({"changes": {"t": {"modified": {"K": {"f": value}}}}})
    assert state.changes is not None
    return state.changes["t"].modified["K"]["f"]


# --------------------------------------------------------------------------- the closed set


def test_keys_lists_every_predicate_in_message_order() -> None:
    assert ", ".join(FieldPredicate.KEYS) == PREDICATE_LIST


def test_unknown_key_with_a_close_match_suggests_it() -> None:
    assert refused({"aprox": 3}) == (
        f"unknown predicate 'aprox'; did you mean 'approx'? (predicates: {PREDICATE_LIST})"
    )


def test_unknown_key_known_from_other_tools_suggests_ours() -> None:
    assert refused({"gte": 1}).startswith("unknown predicate 'gte'; did you mean 'ge'?")
    assert refused({"regex": "^x"}).startswith("unknown predicate 'regex'; did you mean 'matches'?")
    assert refused({"in": [1, 2]}).startswith("unknown predicate 'in'; did you mean 'one_of'?")


def test_unknown_key_without_a_close_match_lists_predicates_and_the_literal_form() -> None:
    assert refused({"city": "Leith"}) == (
        f"unknown predicate 'city' (predicates: {PREDICATE_LIST}); a mapping here is read as "
        "predicates: to expect this mapping as a value, write {equals: {...}}"
    )


def test_several_unknown_keys_are_named_together() -> None:
    message = refused({"aprx": 1, "zz": 2})
    assert message == (
        f"unknown predicates 'aprx' (did you mean 'approx'?), 'zz' (predicates: {PREDICATE_LIST})"
    )


def test_unknown_key_beside_known_ones_is_still_refused() -> None:
    assert refused({"ge": 1, "lte": 5}).startswith("unknown predicate 'lte'; did you mean 'le'?")


def test_empty_mapping_is_refused_with_both_readings() -> None:
    assert refused({}) == (
        "an empty mapping is not a predicate: to expect an empty mapping write {equals: {}}; "
        "to expect the field to exist, {present: true}"
    )


def test_null_operand_is_refused() -> None:
    assert refused({"gt": None}) == (
        "'gt: null' is not a predicate: give it a value (to expect null, write {equals: null})"
    )


def test_every_mapping_at_a_field_position_is_a_predicate() -> None:
    with pytest.raises(ValidationError, match="unknown predicate 'city'"):
        field_of({"city": "Leith"})
    assert field_of({"equals": {"city": "Leith"}}).equals == {"city": "Leith"}
    assert field_of({"equals": {}}).equals == {}


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("card", id="text"),
        pytest.param(412.18, id="number"),
        pytest.param(True, id="boolean"),
        pytest.param(None, id="null"),
        pytest.param([1, {"gt": 2}], id="list_with_a_mapping_inside"),
    ],
)
def test_a_plain_value_means_equals(value: Any) -> None:
    pred = field_of(value)
    assert (pred.operators, pred.equals) == (("equals",), value)


def test_an_already_built_predicate_is_kept() -> None:
    pred = FieldPredicate(gt=5)
    state = ExpectedState.model_validate({"changes": {"t": {"modified": {"K": {"f": pred}}}}})
    assert state.changes is not None
    assert state.changes["t"].modified["K"]["f"] is pred


# --------------------------------------------------------------------------- ordering predicates


@pytest.mark.parametrize(
    ("data", "attr", "expected"),
    [
        pytest.param({"gt": 5}, "gt", 5, id="gt"),
        pytest.param({"ge": 0.5}, "ge", 0.5, id="ge"),
        pytest.param({"lt": -3}, "lt", -3, id="lt"),
        pytest.param({"le": 1e6}, "le", 1e6, id="le"),
        pytest.param({"between": [1, 5]}, "between", (1, 5), id="between"),
        pytest.param({"between": [2, 2]}, "between", (2, 2), id="between_one_point"),
    ],
)
def test_ordering_predicates_load(data: dict[str, Any], attr: str, expected: Any) -> None:
    pred = FieldPredicate.model_validate(data)
    assert pred.operators == (attr,)
    assert pred.operator == attr
    assert getattr(pred, attr) == expected


def test_integer_bounds_stay_integers() -> None:
    # 2**53 + 1 is not a float: a float bound would compare wrongly with large integer ids.
    pred = FieldPredicate.model_validate({"gt": 2**53 + 1})
    assert pred.gt == 2**53 + 1
    assert isinstance(pred.gt, int)


def test_between_lo_greater_than_hi_is_refused() -> None:
    assert refused({"between": [10, 5]}) == "[10, 5] can never hold: lo is greater than hi (write [5, 10])"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(
            {"gt": "5"},
            "must be a number, found string '5' (to test text, use matches or one_of)",
            id="numeric_text",
        ),
        pytest.param(
            {"le": True},
            "must be a number, found boolean true (booleans are not numbers)",
            id="boolean",
        ),
        pytest.param({"lt": [1]}, "must be a number, found list [1]", id="list"),
        pytest.param({"ge": float("inf")}, "must be a finite number, found inf", id="infinite"),
        pytest.param(
            {"approx": "3"},
            "must be a number, found string '3' (to test text, use matches or one_of)",
            id="approx_text",
        ),
    ],
)
def test_non_numeric_bound_is_refused(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        FieldPredicate.model_validate(data)
    (error,) = info.value.errors(include_url=False)
    assert error["loc"] == (next(iter(data)),)
    assert str(error["msg"]).removeprefix("Value error, ") == message


@pytest.mark.parametrize(
    ("between", "message"),
    [
        pytest.param([1], "needs [lo, hi], a list of two numbers; found 1 item(s)", id="one_item"),
        pytest.param([1, 2, 3], "needs [lo, hi], a list of two numbers; found 3 item(s)", id="three_items"),
        pytest.param(5, "needs [lo, hi], a list of two numbers; found number 5", id="scalar"),
        pytest.param(
            ["a", 3],
            "lo must be a number, found string 'a' (to test text, use matches or one_of)",
            id="text_lo",
        ),
        pytest.param(
            [1, False], "hi must be a number, found boolean false (booleans are not numbers)", id="bool_hi"
        ),
    ],
)
def test_malformed_between_is_refused(between: Any, message: str) -> None:
    assert refused({"between": between}) == message


# --------------------------------------------------------------------------- combinations


def test_combined_predicates_are_kept_in_key_order() -> None:
    pred = FieldPredicate.model_validate({"lt": 5, "ge": 1, "matches": "^\\d"})
    assert pred.operators == ("matches", "ge", "lt")
    assert pred.operator == "all"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(
            {"gt": 5, "lt": 3},
            "gt 5 and lt 3 can never both hold: no number is > 5 and < 3",
            id="gt_above_lt",
        ),
        pytest.param(
            {"gt": 5, "le": 5},
            "gt 5 and le 5 can never both hold: no number is > 5 and <= 5",
            id="strict_touching",
        ),
        pytest.param(
            {"between": [1, 5], "ge": 6},
            "ge 6 and between [1, 5] can never both hold: no number is >= 6 and <= 5",
            id="between_and_ge",
        ),
        pytest.param(
            {"approx": 3, "tol": 0.5, "gt": 4},
            "approx 3 ± 0.5 and gt 4 can never both hold",
            id="approx_below",
        ),
        pytest.param(
            {"approx": 10, "le": 9},
            "approx 10 ± 1e-09 and le 9 can never both hold",
            id="approx_above",
        ),
        pytest.param(
            {"absent": True, "gt": 1},
            "absent: true with gt can never hold: a field that does not exist has no value",
            id="absent_with_value",
        ),
        pytest.param(
            {"present": False, "matches": "x"},
            "present: false with matches can never hold: a field that does not exist has no value",
            id="present_false_with_value",
        ),
        pytest.param(
            {"present": True, "absent": True},
            "present: true and absent: true can never both hold",
            id="present_and_absent",
        ),
        pytest.param(
            {"present": False, "absent": False},
            "present: false and absent: false can never both hold",
            id="neither_way",
        ),
        pytest.param(
            {"equals": 3, "ge": 0},
            "equals fixes the value: combine it with no other value predicate (got equals with ge)",
            id="equals_with_bound",
        ),
        pytest.param({"tol": 0.1}, "tol only goes with approx", id="tol_alone"),
        pytest.param({"tol": 0.1, "gt": 1}, "tol only goes with approx", id="tol_without_approx"),
    ],
)
def test_combinations_that_can_never_hold_are_refused(data: dict[str, Any], message: str) -> None:
    assert refused(data) == message


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"ge": 1, "lt": 5}, id="half_open"),
        pytest.param({"ge": 5, "le": 5}, id="one_point"),
        pytest.param({"gt": 1, "ge": 0}, id="redundant_lower"),
        pytest.param({"approx": 3, "tol": 1, "gt": 3.5}, id="approx_window_overlaps"),
        pytest.param({"one_of": [1, 2, 3], "gt": 1}, id="one_of_with_bound"),
        pytest.param({"present": True, "between": [0, 1]}, id="present_with_bound"),
        pytest.param({"equals": None, "present": True}, id="equals_null_present"),
    ],
)
def test_combinations_that_can_hold_load(data: dict[str, Any]) -> None:
    assert set(FieldPredicate.model_validate(data).operators) == set(data) - {"tol"}


@given(lo=st.integers(-1000, 1000), hi=st.integers(-1000, 1000))
def test_between_loads_exactly_when_lo_is_at_most_hi(lo: int, hi: int) -> None:
    if lo > hi:
        with pytest.raises(ValidationError, match="lo is greater than hi"):
            FieldPredicate.model_validate({"between": [lo, hi]})
    else:
        assert FieldPredicate.model_validate({"between": [lo, hi]}).between == (lo, hi)


@given(
    low=st.integers(-50, 50),
    high=st.integers(-50, 50),
    low_strict=st.booleans(),
    high_strict=st.booleans(),
)
def test_two_bounds_load_exactly_when_some_integer_or_point_fits(
    low: int, high: int, low_strict: bool, high_strict: bool
) -> None:
    data = {("gt" if low_strict else "ge"): low, ("lt" if high_strict else "le"): high}
    # Bounds are real numbers: the interval is non-empty when low < high, or they touch inclusively.
    possible = low < high or (low == high and not low_strict and not high_strict)
    try:
        FieldPredicate.model_validate(data)
    except ValidationError:
        assert not possible
    else:
        assert possible


# --------------------------------------------------------------------------- located problems


def test_unknown_predicate_in_a_case_file_is_located_with_file_line_and_field() -> None:
    text = (
        "id: P-1\n"
        "input: refund my fare\n"
        "expected_state:\n"
        "  changes:\n"
        "    refunds:\n"
        "      added:\n"
        "        - payment_id: PMT-1\n"
        "          amount: {aprox: 3}\n"
    )
    (problem,) = problems_of(text)
    assert str(problem) == (
        "case.yaml:8: expected_state.changes.refunds.added.0.amount: unknown predicate 'aprox'; "
        f"did you mean 'approx'? (predicates: {PREDICATE_LIST})"
    )


def test_bad_bound_in_a_json_case_names_the_predicate_field() -> None:
    text = (
        "{\n"
        '  "id": "P-2",\n'
        '  "input": "x",\n'
        '  "expected_state": {"changes": {"t": {"modified": {"K-1": {\n'
        '    "n": {"between": [9, 1]}\n'
        "  }}}}}\n"
        "}\n"
    )
    (problem,) = problems_of(text, "case.json")
    assert problem.field == "expected_state.changes.t.modified.K-1.n.between"
    assert problem.line == 5
    assert problem.message == "[9, 1] can never hold: lo is greater than hi (write [1, 9])"


def test_seed_shorthand_rows_are_read_the_same_way() -> None:
    text = "id: P-3\ninput: x\nexpected_state:\n  refunds:\n    - amount: {gte: 10}\n"
    (problem,) = problems_of(text)
    # The shorthand is read as changes.<table>.added: the problem names that path (and the line of
    # expected_state, the nearest part of it written in the file).
    assert problem.field == "expected_state.changes.refunds.added.0.amount"
    assert problem.message.startswith("unknown predicate 'gte'; did you mean 'ge'?")


def test_a_valid_ordering_case_loads() -> None:
    case = Case.model_validate(
        {
            "id": "P-4",
            "input": "x",
            "expected_state": {"changes": {"refunds": {"added": [{"amount": {"gt": 0, "le": 412.18}}]}}},
        }
    )
    assert case.expected_state is not None
    assert case.expected_state.changes is not None
    amount = case.expected_state.changes["refunds"].added[0]["amount"]
    assert (amount.gt, amount.le) == (0, 412.18)
