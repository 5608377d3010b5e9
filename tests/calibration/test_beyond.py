"""Beyond agreement: Rogan-Gladen and prediction-powered inference (selective judging: test_selective.py)."""

from __future__ import annotations

import numpy as np
import pytest

from judgekit.calibration.beyond import prediction_powered_mean, rogan_gladen


def test_rogan_gladen_known_value():
    # Observed 30 % flagged; TPR 0.9, TNR 0.95: (0.30 + 0.95 - 1) / (0.9 + 0.95 - 1) = 0.25 / 0.85
    est = rogan_gladen(300, 1000, tp=90, fn=10, tn=190, fp=10)
    assert est.value == pytest.approx(0.25 / 0.85)
    assert est.interval is not None
    assert est.interval.low < est.value < est.interval.high


def test_rogan_gladen_with_a_perfect_judge_is_the_observed_rate():
    est = rogan_gladen(42, 200, tp=50, fn=0, tn=50, fp=0)
    assert est.value == pytest.approx(0.21)
    # only the binomial variance of the observed rate remains
    half = 1.959963984540054 * np.sqrt(0.21 * 0.79 / 200)
    assert est.interval.low == pytest.approx(0.21 - half)
    assert est.interval.high == pytest.approx(0.21 + half)


def test_rogan_gladen_interval_covers_the_truth_about_95_percent():
    rng = np.random.default_rng(0)
    theta, se, sp = 0.2, 0.85, 0.9
    covered = 0
    trials = 400
    for _ in range(trials):
        tp = rng.binomial(200, se)
        tn = rng.binomial(300, sp)
        truth = rng.random(2000) < theta
        flagged = np.where(truth, rng.random(2000) < se, rng.random(2000) >= sp).sum()
        est = rogan_gladen(int(flagged), 2000, tp=int(tp), fn=200 - int(tp), tn=int(tn), fp=300 - int(tn))
        covered += est.interval.low <= theta <= est.interval.high
    assert 0.92 <= covered / trials <= 0.98


def test_rogan_gladen_is_undefined_for_a_chance_level_judge():
    est = rogan_gladen(50, 100, tp=5, fn=5, tn=5, fp=5)
    assert est.value is None
    assert "no better than chance" in (est.undefined_reason or "")


def test_rogan_gladen_clips_and_says_so():
    est = rogan_gladen(0, 100, tp=90, fn=10, tn=80, fp=20)
    assert est.value == 0.0
    assert "clipped" in (est.interval.note or "")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"flagged": 1, "n": 0, "tp": 1, "fn": 1, "tn": 1, "fp": 1}, "flagged must be between"),
        ({"flagged": 1, "n": 10, "tp": -1, "fn": 1, "tn": 1, "fp": 1}, "non-negative"),
    ],
)
def test_rogan_gladen_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rogan_gladen(**kwargs)


@pytest.mark.parametrize(
    ("counts", "reason"),
    [((0, 0, 5, 5), "no reference failures"), ((5, 5, 0, 0), "no reference non-failures")],
)
def test_rogan_gladen_undefined_without_a_class(counts, reason):
    tp, fn, tn, fp = counts
    assert reason in rogan_gladen(5, 10, tp=tp, fn=fn, tn=tn, fp=fp).undefined_reason


def test_ppi_with_a_perfect_judge_is_the_judge_mean():
    rng = np.random.default_rng(1)
    fu = (rng.random(5000) < 0.3).astype(float)
    yl = (rng.random(200) < 0.3).astype(float)
    est = prediction_powered_mean(fu, yl, yl)
    assert est.value == pytest.approx(fu.mean())


def test_ppi_corrects_a_biased_judge_and_covers_the_truth():
    rng = np.random.default_rng(2)
    theta = 0.25
    covered, trials = 0, 300
    for _ in range(trials):
        y_u = rng.random(3000) < theta
        f_u = np.where(y_u, rng.random(3000) < 0.8, rng.random(3000) < 0.15)  # biased upward
        y_l = rng.random(300) < theta
        f_l = np.where(y_l, rng.random(300) < 0.8, rng.random(300) < 0.15)
        est = prediction_powered_mean(f_u, f_l, y_l)
        covered += est.interval.low <= theta <= est.interval.high
    naive = 0.25 * 0.8 + 0.75 * 0.15
    assert naive > 0.3  # the judge alone is biased
    assert 0.92 <= covered / trials <= 0.98


def test_ppi_needs_two_items_each_side():
    assert prediction_powered_mean([1.0], [1.0, 0.0], [1.0, 0.0]).value is None
    assert prediction_powered_mean([1.0, 0.0], [1.0], [1.0]).value is None
    with pytest.raises(ValueError, match="differ in length"):
        prediction_powered_mean([1.0, 0.0], [1.0, 0.0], [1.0])
