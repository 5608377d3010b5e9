from __future__ import annotations

import math
from pathlib import Path

import pytest

from judgekit.calibration.labels import parse_labels
from judgekit.calibration.plan import (
    PlanSettings,
    expert_consensus,
    labels_needed,
    plan_labels,
)
from judgekit.stats import wilson_interval


def brute_force(bound: float, p: float, confidence: float = 0.95, limit: int = 2000) -> int | None:
    for n in range(1, limit):
        k = math.floor(p * n + 1e-9)
        low = wilson_interval(k, n, confidence=confidence)[0] if k > 0 else 0.0
        if low >= bound:
            return n
    return None


def test_perfect_judge_needs_16_per_class_for_080_at_95():
    assert labels_needed(0.80, 1.0, confidence=0.95) == 16
    assert wilson_interval(16, 16)[0] >= 0.80 > wilson_interval(15, 15)[0]


@pytest.mark.parametrize(
    ("bound", "p", "confidence"),
    [
        (0.8, 1.0, 0.95),
        (0.8, 0.95, 0.95),
        (0.8, 0.9, 0.95),
        (0.7, 0.85, 0.9),
        (0.9, 0.99, 0.99),
        (0.5, 0.6, 0.95),
    ],
)
def test_matches_brute_force_wilson(bound, p, confidence):
    assert labels_needed(bound, p, confidence=confidence) == brute_force(bound, p, confidence)


@pytest.mark.parametrize(("bound", "p"), [(0.8, 0.8), (0.8, 0.7), (1.0, 1.0), (0.95, 0.9)])
def test_never_met(bound, p):
    assert labels_needed(bound, p) is None


def test_zero_bound_is_trivial():
    assert labels_needed(0.0, 0.3) == 1


def test_assurance_needs_more_than_expected_count_and_is_exact():
    from scipy import stats

    n = labels_needed(0.8, 0.95, assurance=0.8)
    assert n is not None
    assert n > labels_needed(0.8, 0.95)

    def prob(m: int) -> float:
        kmin = next(k for k in range(m + 1) if k > 0 and wilson_interval(k, m)[0] >= 0.8)
        return float(stats.binom.sf(kmin - 1, m, 0.95))

    assert prob(n) >= 0.8
    assert all(
        prob(m) < 0.8 for m in range(16, n) if any(wilson_interval(k, m)[0] >= 0.8 for k in range(1, m + 1))
    )


@pytest.mark.parametrize("bad", [{"bound": 1.2, "expected": 0.9}, {"bound": 0.8, "expected": -0.1}])
def test_bad_arguments(bad):
    with pytest.raises(ValueError, match="must be in"):
        labels_needed(**bad)


def test_plan_without_labels_is_per_class_requirement():
    plan = plan_labels(
        tpr_bound=0.8,
        tnr_bound=0.8,
        confidence=0.95,
        settings=PlanSettings(expected_tpr=1.0, expected_tnr=1.0),
    )
    assert [n.required for n in plan.overall.needs] == [16, 16]
    assert [n.still_needed for n in plan.overall.needs] == [16, 16]
    assert plan.achievable
    # 16 failures at a 20% failure rate need about 80 random items
    assert plan.overall.random_items_to_label == 80


def test_plan_never_met_says_so():
    plan = plan_labels(
        tpr_bound=0.9,
        tnr_bound=0.8,
        confidence=0.95,
        settings=PlanSettings(expected_tpr=0.85, expected_tnr=0.99),
    )
    assert not plan.achievable
    assert any("never met" in s and "TPR" in s for s in plan.next_steps)
    tpr = plan.overall.needs[0]
    assert tpr.required is None
    assert tpr.still_needed is None
    assert "never" in tpr.reason


def test_plan_counts_existing_labels_per_criterion_and_names_the_short_one():
    rows = ["item_id,criterion,rater,label"]
    # criterion a: 16 fails and 16 passes (enough at a perfect judge); criterion b: 3 fails, 20 passes
    for i in range(16):
        rows += [f"a{i},a,e1,fail", f"a{i},a,e2,fail", f"p{i},a,e1,pass", f"p{i},a,e2,pass"]
    for i in range(3):
        rows += [f"b{i},b,e1,fail", f"b{i},b,e2,fail"]
    for i in range(20):
        rows += [f"q{i},b,e1,pass", f"q{i},b,e2,pass"]
    rows += ["t0,b,e1,pass", "t0,b,e2,fail"]  # a tie: no consensus, not counted
    table = parse_labels(("\n".join(rows) + "\n").encode(), source=Path("l.csv"))
    assert len(expert_consensus(table, ["e1", "e2"])) == 16 * 2 + 23
    plan = plan_labels(
        tpr_bound=0.8,
        tnr_bound=0.8,
        confidence=0.95,
        settings=PlanSettings(expected_tpr=1.0, expected_tnr=1.0, failure_rate=0.25),
        table=table,
        experts=["e1", "e2"],
    )
    by = {p.criterion: p for p in plan.criteria}
    assert not by["a"].short
    b_tpr = by["b"].needs[0]
    assert (b_tpr.have, b_tpr.required, b_tpr.still_needed) == (3, 16, 13)
    assert by["b"].random_items_to_label == 52
    assert plan.criteria[0].criterion == "b"
    assert any("criterion 'b': label 13 more consensus failures" in s for s in plan.next_steps)


def test_coverage_scales_needs():
    plan = plan_labels(
        tpr_bound=0.8,
        tnr_bound=None,
        confidence=0.95,
        settings=PlanSettings(expected_tpr=1.0, expected_coverage=0.8),
    )
    assert plan.overall.needs[0].still_needed == 20
