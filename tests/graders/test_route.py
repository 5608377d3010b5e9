from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graders._build import by_id, make_transcript
from judgekit.cases import ExpectedCall
from judgekit.graders.route import (
    ActualCall,
    argument_problems,
    check_route,
    match_route,
    max_bipartite_matching,
)
from judgekit.verdict import FailureCategory, Verdict


def E(tool: str, **args: Any) -> ExpectedCall:
    return ExpectedCall(tool=tool, args=args)


def A(tool: str, **args: Any) -> ActualCall:
    return ActualCall(tool, args)


def route_checks(
    route: list[ExpectedCall] | None, mode: str, calls: list[tuple[str, Any]], **kw: Any
) -> dict[str, Any]:
    return by_id(check_route(route, mode, make_transcript(calls, **kw)))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- modes

LOOKUP, REFUND, FREEZE = E("lookup", ref="Q1"), E("refund", amount=10), E("freeze")


@pytest.mark.parametrize(
    ("mode", "calls", "ok"),
    [
        pytest.param("superset", [A("lookup", ref="Q1"), A("refund", amount=10)], True, id="superset_exact"),
        pytest.param(
            "superset",
            [A("ping"), A("refund", amount=10), A("lookup", ref="Q1")],
            True,
            id="superset_extra_any_order",
        ),
        pytest.param("superset", [A("lookup", ref="Q1")], False, id="superset_missing"),
        pytest.param("subset", [A("lookup", ref="Q1")], True, id="subset_missing_ok"),
        pytest.param("subset", [A("lookup", ref="Q1"), A("ping")], False, id="subset_extra"),
        pytest.param(
            "unordered", [A("refund", amount=10), A("lookup", ref="Q1")], True, id="unordered_swapped"
        ),
        pytest.param("unordered", [A("refund", amount=10)], False, id="unordered_missing"),
        pytest.param("strict", [A("lookup", ref="Q1"), A("refund", amount=10)], True, id="strict_ok"),
        pytest.param("strict", [A("refund", amount=10), A("lookup", ref="Q1")], False, id="strict_swapped"),
        pytest.param(
            "strict", [A("lookup", ref="Q1"), A("refund", amount=10), A("ping")], False, id="strict_extra"
        ),
    ],
)
def test_modes(mode: str, calls: list[ActualCall], ok: bool) -> None:
    assert match_route([LOOKUP, REFUND], calls, mode).ok is ok  # type: ignore[arg-type]


def test_empty_route_means_no_tool_may_fire() -> None:
    assert route_checks([], "superset", [])["route"].verdict is Verdict.PASS
    check = route_checks([], "superset", [("lookup", {"ref": "Q1"})])["route"]
    assert check.verdict is Verdict.FAIL
    assert check.category is FailureCategory.WRONG_TOOL
    assert check.evidence[0].call_index == 0
    assert check.evidence[0].arguments == {"ref": "Q1"}


def test_absent_route_is_not_evaluated() -> None:
    (check,) = check_route(None, "superset", make_transcript([("x", {})]))
    assert check.verdict is Verdict.NOT_EVALUATED


def test_failure_explains_the_closest_call() -> None:
    check = route_checks([REFUND], "superset", [("refund", {"amount": 12})])["route"]
    assert check.verdict is Verdict.FAIL
    assert check.category is FailureCategory.INVALID_ARGUMENTS
    assert "closest is call 0 (amount: expected 10, got 12)" in check.reason
    assert check.evidence[0].call_index == 0


def test_tool_never_called_is_incomplete_execution() -> None:
    check = route_checks([REFUND], "superset", [("lookup", {})])["route"]
    assert check.category is FailureCategory.INCOMPLETE_EXECUTION
    assert "refund was never called" in check.reason


def test_strict_failure_names_the_position() -> None:
    check = route_checks([LOOKUP, REFUND], "strict", [("refund", {"amount": 10}), ("lookup", {"ref": "Q1"})])[
        "route"
    ]
    assert check.verdict is Verdict.FAIL
    assert "strict order breaks at call 0: expected lookup(ref='Q1')" in check.reason
    assert check.category is FailureCategory.WRONG_TOOL


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        pytest.param(ExpectedCall(tool="t", args={"n": 1}), {"n": 1.0}, True, id="exact_numbers_by_value"),
        pytest.param(ExpectedCall(tool="t", args={"n": 1}), {"n": "1"}, False, id="exact_type"),
        pytest.param(ExpectedCall(tool="t", args={"n": 1}), {}, False, id="exact_missing"),
        pytest.param(ExpectedCall(tool="t", args={"n": 1}, arg_match={"n": "ignore"}), {}, True, id="ignore"),
        pytest.param(
            ExpectedCall(tool="t", args={"ids": [1, 2, 3]}, arg_match={"ids": "subset"}),
            {"ids": [3, 1]},
            True,
            id="subset_list",
        ),
        pytest.param(
            ExpectedCall(tool="t", args={"ids": [1, 2]}, arg_match={"ids": "subset"}),
            {"ids": [1, 1]},
            False,
            id="subset_multiplicity",
        ),
        pytest.param(
            ExpectedCall(tool="t", args={"ids": [1]}, arg_match={"ids": "superset"}),
            {"ids": [2, 1]},
            True,
            id="superset_list",
        ),
        pytest.param(
            ExpectedCall(tool="t", args={"m": {"a": 1}}, arg_match={"m": "superset"}),
            {"m": {"a": 1, "b": 2}},
            True,
            id="superset_map",
        ),
        pytest.param(
            ExpectedCall(tool="t", args={"m": {"a": 1, "b": 2}}, arg_match={"m": "subset"}),
            {"m": {"a": 1}},
            True,
            id="subset_map",
        ),
        pytest.param(
            ExpectedCall(tool="t", args={"m": {"a": 1}}, arg_match={"m": "subset"}),
            {"m": {"a": 2}},
            False,
            id="subset_map_value",
        ),
        pytest.param(ExpectedCall(tool="t", args={"n": 1}), None, False, id="invalid_json"),
        pytest.param(ExpectedCall(tool="t"), None, True, id="invalid_json_no_args_checked"),
    ],
)
def test_argument_matchers(expected: ExpectedCall, actual: dict[str, Any] | None, ok: bool) -> None:
    assert (not argument_problems(expected, actual)) is ok


def test_invalid_json_arguments_are_reported_not_crashed() -> None:
    check = route_checks([REFUND], "superset", [("refund", '{"amount": 10')])["route"]
    assert check.verdict is Verdict.FAIL
    assert check.category is FailureCategory.INVALID_ARGUMENTS
    assert "not valid JSON" in check.reason
    assert check.evidence[0].data["raw_arguments"] == '{"amount": 10'


# --------------------------------------------------------------------------- max_calls and confirmation


def test_max_calls_counts_retries() -> None:
    calls = [("refund", {"amount": 10}), ("refund", {"amount": 10})]
    checks = route_checks([REFUND], "unordered", calls)
    assert checks["route:max_calls"].verdict is Verdict.FAIL
    assert checks["route:max_calls"].evidence[0].call_index == 1
    assert checks["route"].verdict is Verdict.FAIL  # the second call is unexpected in unordered mode
    retry = ExpectedCall(tool="refund", args={"amount": 10}, max_calls=2)
    checks = route_checks([retry], "unordered", calls)
    assert checks["route"].verdict is Verdict.PASS
    assert checks["route:max_calls"].verdict is Verdict.PASS
    assert match_route(
        [LOOKUP, retry], [A("lookup", ref="Q1"), A("refund", amount=10), A("refund", amount=10)], "strict"
    ).ok


def test_requires_confirmation() -> None:
    entry = ExpectedCall(tool="freeze", requires_confirmation=True)
    asked = [{"role": "assistant", "content": "Shall I freeze it?"}]
    freeze = {
        "role": "assistant",
        "tool_calls": [{"id": "f", "type": "function", "function": {"name": "freeze", "arguments": "{}"}}],
    }
    ok = route_checks(
        [entry], "superset", [], messages=[*asked, {"role": "user", "content": "Yes please do"}, freeze]
    )
    assert ok["route:confirmation"].verdict is Verdict.PASS
    hedged = route_checks(
        [entry], "superset", [], messages=[*asked, {"role": "user", "content": "Yes but wait"}, freeze]
    )
    assert hedged["route:confirmation"].verdict is Verdict.FAIL
    assert hedged["route:confirmation"].category is FailureCategory.POLICY_VIOLATION
    unasked = route_checks([entry], "superset", [], messages=[freeze])
    assert unasked["route:confirmation"].verdict is Verdict.FAIL


# --------------------------------------------------------------------------- the assignment problem


def _greedy_superset(route: list[ExpectedCall], calls: list[ActualCall]) -> bool:
    """First-fit: each expected call takes the first unused call that satisfies it."""
    used: set[int] = set()
    for entry in route:
        for j, call in enumerate(calls):
            if j not in used and call.tool == entry.tool and not argument_problems(entry, call.arguments):
                used.add(j)
                break
        else:
            return False
    return True


def test_a_route_greedy_matching_gets_wrong() -> None:
    route = [ExpectedCall(tool="A", args={"x": 1}, arg_match={"x": "ignore"}), E("A", x=1)]
    calls = [A("A", x=1), A("A", x=2)]
    assert not _greedy_superset(route, calls)  # first-fit gives A(x=1) to the "any x" entry
    result = match_route(route, calls, "superset")
    assert result.ok
    assert sorted(result.pairs) == [(0, 1), (1, 0)]
    assert (
        route_checks(route, "unordered", [("A", {"x": 1}), ("A", {"x": 2})])["route"].verdict is Verdict.PASS
    )


TOOLS = st.sampled_from(["a", "b"])
ARG = st.sampled_from([1, 2])
CALLS = st.lists(st.tuples(TOOLS, ARG), max_size=5)


def _expected(calls: list[tuple[str, int]], any_mask: list[bool] | None = None) -> list[ExpectedCall]:
    mask = any_mask or [False] * len(calls)
    return [
        ExpectedCall(tool=t, args={"x": x}, arg_match={"x": "ignore"} if wild else {})
        for (t, x), wild in zip(calls, mask, strict=True)
    ]


def _actual(calls: list[tuple[str, int]]) -> list[ActualCall]:
    return [ActualCall(t, {"x": x}) for t, x in calls]


def _brute_force_superset(route: list[ExpectedCall], calls: list[ActualCall]) -> bool:
    """Try every injective assignment of route entries to calls."""
    if len(route) > len(calls):
        return False
    for chosen in itertools.permutations(range(len(calls)), len(route)):
        if all(
            calls[j].tool == e.tool and not argument_problems(e, calls[j].arguments)
            for e, j in zip(route, chosen, strict=True)
        ):
            return True
    return False


@settings(max_examples=300, deadline=None)
@given(route=CALLS, wild=st.lists(st.booleans(), min_size=5, max_size=5), calls=CALLS, data=st.data())
def test_unordered_matching_is_invariant_under_permutation(route, wild, calls, data) -> None:
    expected = _expected(route, wild[: len(route)])
    actual = _actual(calls)
    shuffled_calls = data.draw(st.permutations(actual))
    shuffled_route = data.draw(st.permutations(expected))
    for mode in ("unordered", "subset", "superset"):
        base = match_route(expected, actual, mode).ok
        assert match_route(expected, shuffled_calls, mode).ok is base
        assert match_route(shuffled_route, actual, mode).ok is base


@settings(max_examples=300, deadline=None)
@given(a=CALLS, b=CALLS)
def test_superset_a_b_exactly_when_subset_b_a(a, b) -> None:
    # superset(expected=a, actual=b): every call of a is made in b.
    # subset(expected=b, actual=a): every call of a is among b's.
    assert (
        match_route(_expected(a), _actual(b), "superset").ok
        is match_route(_expected(b), _actual(a), "subset").ok
    )


@settings(max_examples=300, deadline=None)
@given(route=CALLS, wild=st.lists(st.booleans(), min_size=5, max_size=5), calls=CALLS)
def test_superset_matches_brute_force(route, wild, calls) -> None:
    expected = _expected(route, wild[: len(route)])
    actual = _actual(calls)
    assert match_route(expected, actual, "superset").ok is _brute_force_superset(expected, actual)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, 6), max_size=7), max_size=7))
def test_max_bipartite_matching_is_maximum(edges) -> None:
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    edges = [sorted(set(e)) for e in edges]
    matching = max_bipartite_matching(edges, 7)
    assert len(set(matching.values())) == len(matching)
    assert all(j in edges[i] for i, j in matching.items())
    best = 0
    if edges:
        weights = np.zeros((len(edges), 7))
        for i, row in enumerate(edges):
            weights[i, row] = 1
        rows, cols = linear_sum_assignment(weights, maximize=True)
        best = int(weights[rows, cols].sum())
    assert len(matching) == best
