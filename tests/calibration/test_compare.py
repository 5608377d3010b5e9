"""Grader comparison: deltas with paired intervals, exact McNemar, every flipped item."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from judgekit.calibration.agreement import compute_agreement
from judgekit.calibration.compare import compare_graders
from judgekit.calibration.gate import TrustPolicy, evaluate_gate
from judgekit.calibration.labels import Scale, parse_labels
from judgekit.calibration.records import LabelTableInfo, build_record
from judgekit.errors import JudgekitError
from judgekit.stats import mcnemar_exact


def two_graders(csv_bytes, n: int = 120, seed: int = 0):
    rng = np.random.default_rng(seed)
    rows, truth_of, old_of, new_of = [], {}, {}, {}
    for i in range(n):
        truth = "fail" if rng.random() < 0.3 else "pass"
        other = "pass" if truth == "fail" else "fail"
        old = truth if rng.random() > 0.25 else other
        new = truth if rng.random() > 0.08 else other
        truth_of[f"i{i:03d}"], old_of[f"i{i:03d}"], new_of[f"i{i:03d}"] = truth, old, new
        rows += [(f"i{i:03d}", "", e, truth) for e in ("e1", "e2", "e3")]
        rows += [(f"i{i:03d}", "", "old", old), (f"i{i:03d}", "", "new", new)]
    table = parse_labels(csv_bytes(rows), source=Path("labels.csv"))
    return table, truth_of, old_of, new_of


def make_record(table, judge: str, fingerprint: str):
    report = compute_agreement(table, judge=judge, experts=["e1", "e2", "e3"], resamples=200)
    return build_record(
        fingerprint=fingerprint,
        report=report,
        gate=evaluate_gate(report, TrustPolicy()),
        policy=TrustPolicy(),
        label_table=LabelTableInfo(sha256=table.sha256, name="labels.csv", rows=len(table.rows)),
    ), report


def test_mcnemar_and_flips_match_a_hand_count(csv_bytes):
    table, truth, old, new = two_graders(csv_bytes)
    baseline, _ = make_record(table, "old", "fp-old")
    _, current = make_record(table, "new", "fp-new")
    cmp = compare_graders(
        baseline, current, new_fingerprint="fp-new", label_sha256=table.sha256, resamples=300
    )
    broken = sum(1 for k in truth if old[k] == truth[k] and new[k] != truth[k])
    fixed = sum(1 for k in truth if old[k] != truth[k] and new[k] == truth[k])
    assert cmp.mcnemar.old_only == broken
    assert cmp.mcnemar.new_only == fixed
    assert cmp.mcnemar.p_value == pytest.approx(mcnemar_exact(broken, fixed))
    assert cmp.common_items == 120
    assert cmp.same_labels
    flipped = {f.item_id: f for f in cmp.flipped}
    assert set(flipped) == {k for k in truth if old[k] != new[k]}
    for k, f in flipped.items():
        assert (f.old, f.new, f.consensus) == (old[k], new[k], truth[k])
        assert f.experts == {"e1": truth[k], "e2": truth[k], "e3": truth[k]}
        assert f.change == ("fixed" if new[k] == truth[k] else "broken")


def test_the_kappa_change_is_read_against_the_consensus_base_rate(csv_bytes):
    from judgekit.reports.calibration_report import comparison_markdown

    table, truth, _, _ = two_graders(csv_bytes)
    baseline, _ = make_record(table, "old", "fp-old")
    _, current = make_record(table, "new", "fp-new")
    cmp = compare_graders(baseline, current, label_sha256=table.sha256, resamples=100)
    failures = sum(1 for v in truth.values() if v == "fail")
    assert (cmp.base_rate.value, cmp.base_rate.n) == (failures / 120, 120)
    assert f"| cohen_kappa (consensus base rate {failures / 120:.3f}) |" in comparison_markdown(cmp)


def test_deltas_are_new_minus_old_with_paired_intervals(csv_bytes):
    table, _truth, _old, _new = two_graders(csv_bytes, seed=1)
    baseline, old_report = make_record(table, "old", "fp-old")
    _, current = make_record(table, "new", "fp-new")
    cmp = compare_graders(baseline, current, label_sha256=table.sha256, resamples=400)
    deltas = {d.metric: d for d in cmp.deltas}
    assert set(deltas) == {
        "percent_agreement",
        "cohen_kappa",
        "krippendorff_alpha_nominal",
        "tpr",
        "tnr",
        "f1",
    }
    pa = deltas["percent_agreement"]
    assert pa.old == pytest.approx(old_report.judge_vs_consensus.percent_agreement.value)
    assert pa.new == pytest.approx(current.judge_vs_consensus.percent_agreement.value)
    assert pa.delta.value == pytest.approx(pa.new - pa.old)
    assert deltas["cohen_kappa"].old == pytest.approx(old_report.judge_vs_consensus.kappa["none"].value)
    for d in cmp.deltas:
        assert d.delta.interval is not None
        assert d.delta.interval.low <= d.delta.value <= d.delta.interval.high
    assert pa.delta.interval.low > 0  # the new grader is clearly better here


def test_the_same_grader_has_zero_deltas_and_no_flips(csv_bytes):
    table, *_ = two_graders(csv_bytes, seed=2)
    baseline, current = make_record(table, "new", "fp")
    cmp = compare_graders(baseline, current, new_fingerprint="fp", label_sha256=table.sha256, resamples=200)
    assert cmp.flipped == ()
    assert cmp.mcnemar.p_value == 1.0
    for d in cmp.deltas:
        assert d.delta.value == 0.0
        assert (d.delta.interval.low, d.delta.interval.high) == (0.0, 0.0)
    assert "same fingerprint" in " ".join(cmp.notes)


def test_a_different_label_table_is_noted(csv_bytes):
    table, *_ = two_graders(csv_bytes, seed=3)
    baseline, _ = make_record(table, "old", "fp-old")
    _, current = make_record(table, "new", "fp-new")
    cmp = compare_graders(baseline, current, label_sha256="0" * 64, resamples=100)
    assert not cmp.same_labels
    assert "different label table" in cmp.notes[0]


def test_different_scales_cannot_be_compared(csv_bytes):
    table, *_ = two_graders(csv_bytes, seed=4)
    baseline, _ = make_record(table, "old", "fp-old")
    scale = Scale(values=("pass", "fail"), positive=("fail",))
    other = parse_labels(
        csv_bytes([("a", "", "e1", "pass"), ("a", "", "new", "pass")]), source=Path("x.csv"), scale=scale
    )
    current = compute_agreement(other, judge="new", experts=["e1"], resamples=100)
    with pytest.raises(JudgekitError, match="--baseline: the record's scale"):
        compare_graders(baseline, current)


def test_no_common_items_cannot_be_compared(csv_bytes):
    table, *_ = two_graders(csv_bytes, seed=5)
    baseline, _ = make_record(table, "old", "fp-old")
    other = parse_labels(
        csv_bytes([("zz", "", "e1", "pass"), ("zz", "", "e2", "pass"), ("zz", "", "new", "pass")]),
        source=Path("x.csv"),
    )
    current = compute_agreement(other, judge="new", experts=["e1", "e2"], resamples=100)
    with pytest.raises(JudgekitError, match="share no item"):
        compare_graders(baseline, current)
