"""The human ceiling as a test: judge-vs-experts minus experts-vs-experts, with a paired interval."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.calibration.agreement import compute_agreement
from judgekit.calibration.ceiling import consensus_base_rate, human_ceiling
from judgekit.calibration.labels import Scale, parse_labels

from .conftest import make_csv, synthetic_rows

HERE = Path(__file__).parent
LABELS = HERE / "data" / "labels_small.csv"


@pytest.fixture(scope="module")
def report():
    table = parse_labels(LABELS.read_bytes(), source=LABELS)
    return compute_agreement(table, judge="judge-v2", experts=["alice", "bob", "carol"], resamples=200)


@pytest.mark.parametrize(
    ("metric", "pick"),
    [
        ("cohen_kappa", lambda p: p.kappa["none"]),
        ("percent_agreement", lambda p: p.percent_agreement),
        ("gwet_ac1", lambda p: p.ac1),
    ],
)
def test_point_values_are_the_reports_means(report, metric, pick):
    c = human_ceiling(report, metric=metric, resamples=300, seed=0)
    judge_mean = sum(pick(p).value for p in report.judge_vs_experts) / len(report.judge_vs_experts)
    assert c.judge.value == pytest.approx(judge_mean, abs=1e-12)
    assert c.experts.value == pytest.approx(report.expert_group.mean_pairwise[metric].value, abs=1e-12)
    assert c.difference.value == pytest.approx(judge_mean - c.experts.value, abs=1e-12)
    d = c.difference.interval
    assert d is not None
    assert d.method == "bootstrap"
    assert d.low <= c.difference.value <= d.high


def test_figures_on_the_small_table(report):
    c = human_ceiling(report, metric="cohen_kappa", resamples=200, seed=0)
    assert round(c.judge.value, 3) == 0.835
    assert round(c.experts.value, 3) == 0.806
    assert (round(c.difference.interval.low, 3), round(c.difference.interval.high, 3)) == (-0.033, 0.076)
    assert round(c.base_rate.value, 3) == 0.375


def test_the_interval_is_paired(report):
    """A paired difference varies less than the two means do independently (they move together)."""
    c = human_ceiling(report, metric="cohen_kappa", resamples=400, seed=1)
    width = c.difference.interval.high - c.difference.interval.low
    independent = (
        (c.judge.interval.high - c.judge.interval.low) ** 2
        + (c.experts.interval.high - c.experts.interval.low) ** 2
    ) ** 0.5
    assert width < 0.8 * independent


def test_same_seed_same_interval(report):
    a = human_ceiling(report, resamples=200, seed=4)
    b = human_ceiling(report, resamples=200, seed=4)
    assert a == b


def test_one_expert_is_undefined_with_the_reason():
    table = parse_labels(make_csv(synthetic_rows(n_cases=20)), source=Path("t.csv"))
    rep = compute_agreement(table, judge="judge", experts=["e1"], resamples=100)
    c = human_ceiling(rep, resamples=100, seed=0)
    assert c.difference.value is None
    assert c.difference.undefined_reason == "the human ceiling needs two or more experts; there is 1"


def test_an_undefined_pair_makes_the_difference_undefined():
    rows = [(f"c{k}", "a", r, "pass") for k in range(20) for r in ("e1", "e2", "judge")]
    table = parse_labels(make_csv(rows), source=Path("t.csv"))
    rep = compute_agreement(table, judge="judge", experts=["e1", "e2"], resamples=100)
    c = human_ceiling(rep, resamples=100, seed=0)
    assert c.difference.value is None
    assert c.difference.undefined_reason == "a pair's cohen_kappa is undefined on the items both labelled"
    assert c.judge.undefined_reason == "the judge's cohen_kappa is undefined on the items both labelled"


def test_base_rate_is_the_consensus_share_of_failures(report):
    decided = [r.consensus for r in report.items if r.consensus in ("pass", "fail")]
    b = consensus_base_rate(report)
    assert b.value == decided.count("fail") / len(decided)
    assert b.interval is not None
    assert b.interval.method == "wilson"


def test_base_rate_without_failing_labels_is_undefined():
    scale = Scale(values=("1", "2", "3"), level="ordinal")
    rows = [
        (f"c{k}", "a", r, str(1 + (k + j) % 3))
        for k in range(12)
        for j, r in enumerate(("e1", "e2", "judge"))
    ]
    table = parse_labels(make_csv(rows), source=Path("t.csv"), scale=scale)
    rep = compute_agreement(table, judge="judge", experts=["e1", "e2"], resamples=100)
    b = consensus_base_rate(rep)
    assert b.value is None
    assert b.undefined_reason == "the scale declares no failing labels"


def test_without_failing_labels_kappa_is_read_against_the_consensus_shares(csv_bytes):
    from judgekit.calibration.gate import TrustPolicy
    from judgekit.calibration.labels import parse_scale_option
    from judgekit.calibration.pipeline import run_calibration
    from judgekit.reports.calibration_report import base_rate_text

    labels = ["A"] * 6 + ["B"] * 3 + ["tie"] * 3
    rows = [(f"p{k}", "", r, labels[k]) for k in range(12) for r in ("e1", "e2", "e3", "judge")]
    scale = parse_scale_option("pairwise")
    table = parse_labels(csv_bytes(rows), source=Path("pw.csv"), scale=scale)
    rep = compute_agreement(table, judge="judge", experts=["e1", "e2", "e3"], resamples=50)
    ceiling = human_ceiling(rep, resamples=50, seed=0)
    assert ceiling.consensus_shares == {"A": 0.5, "B": 0.25, "tie": 0.25}
    result = run_calibration(
        table,
        judge="judge",
        experts=["e1", "e2", "e3"],
        policy=TrustPolicy(),
        fingerprint=None,
        label_name="pw.csv",
    )
    assert base_rate_text(result) == "consensus shares A 0.500, B 0.250, tie 0.250"
