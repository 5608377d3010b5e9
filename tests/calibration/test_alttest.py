"""The alternative-annotator test (Calderon, Reichart and Dror, ACL 2025; reference code nitaytech/AltTest).

The reference figures come from two places: an independent re-implementation of the reference procedure
below (``reference_alt_test``: dictionaries of labels, ``scipy.stats.ttest_1samp(..., alternative="less")``
on ``W^h - W^f`` against epsilon, and the Benjamini–Yekutieli step-up rule with thresholds
``k / m * q / H_m``, as in the notebook ``alt_test_example.ipynb``), run on the seeded table
``data/alt_test_labels.csv`` (see ``alt_test_data.py``); and figures printed by that re-implementation,
hard-coded in ``test_figures_on_the_shared_table``.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ttest_1samp

from judgekit.calibration.agreement import compute_agreement
from judgekit.calibration.alttest import (
    EPSILON_BY_KIND,
    AltTestSettings,
    alt_test,
    alt_test_for_report,
    benjamini_yekutieli,
)
from judgekit.calibration.gate import parse_policy
from judgekit.calibration.labels import parse_labels
from judgekit.errors import ProblemsError

from .alt_test_data import PATH, alt_test_csv

EXPERTS = ("e1", "e2", "e3", "e4")


def labels_by_rater() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for row in csv.DictReader(io.StringIO(PATH.read_text(encoding="utf-8"))):
        out.setdefault(row["rater"], {})[row["item_id"]] = row["label"]
    return out


def reference_alt_test(llm, humans, epsilon, q=0.05, min_items=30):
    """The reference procedure, written from its description: (winning rate, advantage prob, p-values)."""
    names = list(humans)
    p_values, advantages, used = [], [], []
    for h in names:
        items = [i for i in humans[h] if i in llm and any(i in humans[o] for o in names if o != h)]
        if len(items) < min_items:
            continue
        w_llm, w_h = [], []
        for i in items:
            rest = [humans[o][i] for o in names if o != h and i in humans[o]]
            s_llm = np.mean([llm[i] == a for a in rest])
            s_h = np.mean([humans[h][i] == a for a in rest])
            w_llm.append(int(s_llm >= s_h))
            w_h.append(int(s_h >= s_llm))
        diff = np.array(w_h) - np.array(w_llm)
        p_values.append(float(ttest_1samp(diff, epsilon, alternative="less").pvalue))
        advantages.append(float(np.mean(w_llm)))
        used.append(h)
    m = len(p_values)
    h_m = sum(1.0 / k for k in range(1, m + 1))
    order = np.argsort(p_values)
    last = 0
    for rank, k in enumerate(order, start=1):
        if p_values[k] <= rank / m * q / h_m:
            last = rank
    return last / m, float(np.mean(advantages)), dict(zip(used, p_values, strict=True))


def test_the_table_is_what_its_generator_writes():
    assert PATH.read_text(encoding="utf-8") == alt_test_csv()


@pytest.mark.parametrize("judge", ["judge-majority", "judge-good", "judge-random"])
@pytest.mark.parametrize("epsilon", [0.1, 0.15, 0.2])
def test_reproduces_the_reference_procedure(judge, epsilon):
    labels = labels_by_rater()
    humans = {e: labels[e] for e in EXPERTS}
    wr, ap, p = reference_alt_test(labels[judge], humans, epsilon)
    result = alt_test(labels[judge], humans, settings=AltTestSettings(epsilon=epsilon))
    assert result.winning_rate == pytest.approx(wr)
    assert result.advantage_probability == pytest.approx(ap)
    assert {c.annotator: c.p_value for c in result.annotators} == pytest.approx(p, rel=1e-9)


def test_figures_on_the_shared_table():
    labels = labels_by_rater()
    humans = {e: labels[e] for e in EXPERTS}
    good = alt_test(labels["judge-good"], humans, settings=AltTestSettings(epsilon=0.1))
    assert [round(c.p_value, 6) for c in good.annotators] == [0.114039, 0.008684, 0.07017, 0.005175]
    assert [c.rejected for c in good.annotators] == [False, True, False, True]
    assert (good.winning_rate, round(good.advantage_probability or 0, 4), good.passed) == (0.5, 0.93, True)
    assert [c.n for c in good.annotators] == [50, 50, 50, 50]
    strict = alt_test(labels["judge-good"], humans, settings=AltTestSettings(epsilon=0.2))
    assert [f"{c.p_value:.5g}" for c in strict.annotators] == [
        "0.0010298",
        "5.2425e-05",
        "0.00073138",
        "3.6349e-05",
    ]
    assert strict.winning_rate == 1.0


def test_a_judge_copying_the_majority_passes_and_a_random_judge_fails():
    labels = labels_by_rater()
    humans = {e: labels[e] for e in EXPERTS}
    majority = alt_test(labels["judge-majority"], humans)
    assert majority.passed is True
    assert majority.winning_rate == 1.0
    assert majority.advantage_probability == 1.0
    coin = alt_test(labels["judge-random"], humans)
    assert coin.passed is False
    assert coin.winning_rate == 0.0
    assert coin.advantage_probability == pytest.approx(0.5)


def test_from_a_report_it_matches_the_label_dictionaries():
    table = parse_labels(PATH.read_bytes(), source=PATH)
    report = compute_agreement(table, judge="judge-good", experts=list(EXPERTS), resamples=100)
    labels = labels_by_rater()
    direct = alt_test(labels["judge-good"], {e: labels[e] for e in EXPERTS})
    assert alt_test_for_report(report, AltTestSettings()) == direct


def test_benjamini_yekutieli_matches_statsmodels():
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    rng = np.random.default_rng(3)
    for m in (1, 2, 3, 5, 10):
        p = rng.random(m) ** 3
        reject, adjusted, _, _ = multipletests(p, alpha=0.05, method="fdr_by")
        ours = benjamini_yekutieli(list(p))
        assert ours == pytest.approx(list(adjusted), rel=1e-12)
        assert [a <= 0.05 for a in ours] == list(reject)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=12))
def test_benjamini_yekutieli_is_the_step_up_rule(p):
    m = len(p)
    h_m = sum(1.0 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda k: p[k])
    last = max((r for r, k in enumerate(order, start=1) if p[k] <= r * 0.05 / (m * h_m)), default=0)
    step_up = {order[r] for r in range(last)}
    adjusted = benjamini_yekutieli(p)
    assert {k for k in range(m) if adjusted[k] <= 0.05} == step_up
    assert all(p[k] <= adjusted[k] <= 1.0 for k in range(m))


def test_fewer_than_three_annotators_is_undefined_with_the_reason():
    labels = labels_by_rater()
    result = alt_test(labels["judge-good"], {e: labels[e] for e in ("e1", "e2")})
    assert result.winning_rate is None
    assert result.passed is None
    assert result.annotators == ()
    assert result.undefined_reason == (
        "the alternative-annotator test needs at least 3 annotators with 30 or more items each; "
        "there are 2 of 2"
    )


def test_an_annotator_with_too_few_items_is_skipped_and_named():
    labels = labels_by_rater()
    humans = {e: dict(labels[e]) for e in EXPERTS}
    humans["e4"] = dict(list(humans["e4"].items())[:12])
    result = alt_test(labels["judge-good"], humans)
    assert [c.annotator for c in result.annotators] == ["e1", "e2", "e3"]
    assert result.skipped == (
        "e4: 12 item(s) labelled by e4, the judge and another annotator; the test needs at least 30",
    )
    humans["e3"] = dict(list(humans["e3"].items())[:5])
    undefined = alt_test(labels["judge-good"], humans)
    assert undefined.undefined_reason is not None
    assert undefined.undefined_reason.endswith("there are 2 of 4")
    assert len(undefined.skipped) == 2


def test_a_difference_that_never_varies_has_p_zero_or_one():
    items = {f"i{k}": ("fail" if k % 3 == 0 else "pass") for k in range(40)}
    humans = {e: dict(items) for e in ("a", "b", "c")}
    same = alt_test(items, humans)  # every W is 1 for both: d = 0 < epsilon
    assert [(c.t_statistic, c.p_value) for c in same.annotators] == [(None, 0.0)] * 3
    assert same.passed is True
    zero = alt_test(items, humans, settings=AltTestSettings(epsilon=0.0))  # d = 0 = epsilon: H0 holds
    assert [c.p_value for c in zero.annotators] == [1.0] * 3
    assert zero.passed is False


def test_epsilon_follows_the_kind_of_each_annotator():
    assert EPSILON_BY_KIND == {"expert": 0.2, "skilled": 0.15, "crowd": 0.1}
    labels = labels_by_rater()
    humans = {e: labels[e] for e in EXPERTS}
    cfg = AltTestSettings(annotator_kind="crowd", annotator_kinds={"e2": "expert", "e3": "skilled"})
    result = alt_test(labels["judge-good"], humans, settings=cfg)
    assert [(c.kind, c.epsilon) for c in result.annotators] == [
        ("crowd", 0.1),
        ("expert", 0.2),
        ("skilled", 0.15),
        ("crowd", 0.1),
    ]
    assert AltTestSettings(epsilon=0.05, annotator_kind="crowd").epsilon_of("e1") == 0.05


def test_numbers_are_scored_by_negative_rmse():
    rng = np.random.default_rng(5)
    truth = rng.integers(1, 6, size=40)
    humans = {
        e: {f"i{k}": float(np.clip(t + rng.integers(-1, 2), 1, 5)) for k, t in enumerate(truth)}
        for e in ("a", "b", "c")
    }
    judge = {f"i{k}": float(t) for k, t in enumerate(truth)}
    result = alt_test(judge, humans, scoring="neg_rmse")
    assert result.scoring == "neg_rmse"
    assert result.passed is True

    # rho^f for the left-out annotator a, by hand: minus the root mean squared distance from b and c
    def score(x, k):
        return -math.sqrt(((x - humans["b"][k]) ** 2 + (x - humans["c"][k]) ** 2) / 2)

    wins = [score(judge[k], k) >= score(humans["a"][k], k) for k in judge]
    assert result.annotators[0].annotator == "a"
    assert result.annotators[0].judge_advantage == sum(wins) / len(wins)


@pytest.mark.parametrize(
    ("alt", "field", "message"),
    [
        ({"min_items": 10}, "alt_test.min_items", "Input should be greater than or equal to 30"),
        (
            {"annotator_kind": "robot"},
            "alt_test.annotator_kind",
            "Input should be 'expert', 'skilled' or 'crowd'",
        ),
        ({"epsilon": 1.5}, "alt_test.epsilon", "Input should be less than 1"),
        ({"alpha": 0}, "alt_test.alpha", "Input should be greater than 0"),
        ({"annotator_kinds": {"e1": "boss"}}, "alt_test.annotator_kinds.e1", "Input should be 'expert'"),
        ({"requird": True}, "alt_test.requird", "unknown setting"),
    ],
)
def test_policy_errors_name_the_field(alt, field, message):
    with pytest.raises(ProblemsError) as err:
        parse_policy({"alt_test": alt}, source=Path("policy.yaml"), line_of=lambda loc: 7)
    text = str(err.value)
    assert f"policy.yaml:7: {field}" in text
    assert message in text
