"""Corrected pass rates: Lee et al.'s estimator, interval and allocation, and PPI++ against ppi_py."""

from __future__ import annotations

import importlib.util
import math
import os
from statistics import NormalDist

import numpy as np
import pytest

from judgekit.calibration.corrected import (
    LEE_METHOD,
    MIN_YOUDEN,
    corrected_criterion_rates,
    lee_allocation,
    lee_corrected_rate,
    lee_from_confusion,
    lee_from_record,
    ppi_plus_plus_mean,
)
from judgekit.errors import JudgekitError


def record(reports, which: str, fingerprint: str):
    """A calibration record of the conftest's good or bad judge."""
    from judgekit.calibration.gate import TrustPolicy
    from judgekit.calibration.records import LabelTableInfo, build_record

    table, report, gate = reports[which]
    info = LabelTableInfo(sha256=table.sha256, name="labels.csv", rows=len(table.rows))
    return build_record(
        fingerprint=fingerprint, report=report, gate=gate, policy=TrustPolicy(), label_table=info
    )


IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def ppi_py():
    """The reference implementation (dev dependency group); its absence fails under CI=true."""
    if importlib.util.find_spec("ppi_py") is None:
        if IN_CI:
            pytest.fail("CI=true but ppi-python is not installed (dev dependency group)")
        pytest.skip("ppi-python is not installed (dev dependency group)")
    import ppi_py as module

    return module


def paper_interval(p, q0, q1, n, m0, m1, *, alpha=0.05):  # noqa: PLR0917 - the paper's arguments
    """Lee et al. (arXiv 2511.21140) Eq. 5-7 and Appendix B, written out from the paper, scalar by scalar."""
    z = NormalDist().inv_cdf(1 - alpha / 2)
    p_ = (n * p + z**2 / 2) / (n + z**2)
    q0_ = (m0 * q0 + 1) / (m0 + 2)
    q1_ = (m1 * q1 + 1) / (m1 + 2)
    n_, m0_, m1_ = n + z**2, m0 + 2, m1 + 2
    th = (p_ + q0_ - 1) / (q0_ + q1_ - 1)
    dth = 2 * z**2 * (-(1 - th) * q0_ * (1 - q0_) / m0_ + th * q1_ * (1 - q1_) / m1_)
    se = math.sqrt(
        p_ * (1 - p_) / n_ + (1 - th) ** 2 * q0_ * (1 - q0_) / m0_ + th**2 * q1_ * (1 - q1_) / m1_
    ) / (q0_ + q1_ - 1)
    point = min(1, max(0, (p + q0 - 1) / (q0 + q1 - 1)))
    return point, min(1, max(0, th + dth - z * se)), min(1, max(0, th + dth + z * se))


# ----------------------------------------------------------------------------------------- Lee et al.


def test_the_issues_point_check():
    # p = 0.4, q0 = 0.7, q1 = 0.9: θ = (0.4 + 0.7 - 1) / (0.7 + 0.9 - 1) = 0.1 / 0.6
    r = lee_corrected_rate(400, 1000, q0_hits=70, m0=100, q1_hits=90, m1=100)
    assert round(r.estimate.value, 4) == 0.1667
    assert (r.q0, r.q1, round(r.youden, 12)) == (0.7, 0.9, 0.6)
    assert r.estimate.interval.method == LEE_METHOD
    assert not r.unreliable


def test_the_interval_reproduces_the_papers_formulas_on_a_grid():
    worst = 0.0
    for n in (50, 1000):
        for m0, m1 in ((20, 30), (250, 250), (400, 100)):
            for passed in range(0, n + 1, max(1, n // 10)):
                for h0 in range(m0 // 2 + 1, m0 + 1, max(1, m0 // 5)):
                    for h1 in range(m1 // 2 + 1, m1 + 1, max(1, m1 // 5)):
                        r = lee_corrected_rate(passed, n, q0_hits=h0, m0=m0, q1_hits=h1, m1=m1)
                        point, low, high = paper_interval(passed / n, h0 / m0, h1 / m1, n, m0, m1)
                        worst = max(
                            worst,
                            abs(r.estimate.value - point),
                            abs(r.estimate.interval.low - low),
                            abs(r.estimate.interval.high - high),
                        )
    assert worst < 1e-12


def test_the_failure_rate_is_one_minus_the_pass_rate_correction():
    # judgekit's records count failures as positives: q0 = TPR, q1 = TNR, pass share = 1 - flagged/n
    fails = lee_from_confusion(300, 1000, tp=80, fn=20, tn=180, fp=20)
    direct = lee_corrected_rate(700, 1000, q0_hits=80, m0=100, q1_hits=180, m1=200)
    assert fails == direct
    # swapping the classes (fail = "pass") estimates the failure rate directly
    swapped = lee_corrected_rate(300, 1000, q0_hits=180, m0=200, q1_hits=80, m1=100)
    rate = fails.failure_rate()
    assert rate.value == pytest.approx(swapped.estimate.value, abs=1e-12)
    assert rate.interval.low == pytest.approx(swapped.estimate.interval.low, abs=1e-12)
    assert rate.interval.high == pytest.approx(swapped.estimate.interval.high, abs=1e-12)


def test_a_judge_near_chance_is_flagged_unreliable():
    r = lee_corrected_rate(500, 1000, q0_hits=55, m0=100, q1_hits=60, m1=100)
    assert r.estimate.value is not None
    assert r.unreliable
    assert r.youden == pytest.approx(0.15)
    assert r.unreliable_reason.startswith(f"q0 + q1 − 1 = 0.150 is below {MIN_YOUDEN}")


def test_an_interval_spanning_everything_is_flagged_unreliable():
    r = lee_corrected_rate(2, 4, q0_hits=2, m0=2, q1_hits=2, m1=2)
    assert (r.estimate.interval.low, r.estimate.interval.high) == (0.0, 1.0)
    assert r.unreliable_reason == "the interval is all of [0, 1]: the data say nothing about the rate"


def test_a_chance_judge_is_undefined():
    r = lee_corrected_rate(500, 1000, q0_hits=50, m0=100, q1_hits=50, m1=100)
    assert r.estimate.value is None
    assert r.unreliable
    assert r.estimate.undefined_reason == (
        "q0 + q1 − 1 = 0.000 is not positive: the judge is no better than chance"
    )


def test_the_adjusted_youden_can_leave_only_the_interval_undefined():
    # q̂0 = 0.01, q̂1 = 1: J = 0.01 > 0, but q̃0 = 2/102 and q̃1 = 2/3 give J̃ < 0
    r = lee_corrected_rate(5, 10, q0_hits=1, m0=100, q1_hits=1, m1=1)
    assert r.youden == pytest.approx(0.01)
    assert r.estimate.value is not None
    assert r.unreliable
    assert r.estimate.interval is None
    assert r.estimate.interval_reason.startswith("the adjusted Youden q̃0 + q̃1 − 1 = ")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"m0": 0}, "calibration has no reference failures"),
        ({"m1": 0, "q1_hits": 0}, "calibration has no reference passes"),
    ],
)
def test_a_missing_class_is_undefined(kwargs, message):
    args = {"q0_hits": 0, "m0": 10, "q1_hits": 9, "m1": 10} | kwargs
    args["q0_hits"] = min(args["q0_hits"], args["m0"])
    r = lee_corrected_rate(5, 10, **args)
    assert r.estimate.value is None
    assert r.estimate.undefined_reason.startswith(message)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: lee_corrected_rate(-1, 10, q0_hits=1, m0=2, q1_hits=1, m1=2), "counts must be non-negative"),
        (lambda: lee_corrected_rate(11, 10, q0_hits=1, m0=2, q1_hits=1, m1=2), "passed must be between"),
        (lambda: lee_corrected_rate(1, 10, q0_hits=3, m0=2, q1_hits=1, m1=2), "hits cannot exceed"),
        (
            lambda: lee_corrected_rate(1, 10, q0_hits=1, m0=2, q1_hits=1, m1=2, confidence=1.0),
            "confidence must be strictly between 0 and 1",
        ),
        (lambda: lee_from_confusion(1, 10, tp=-1, fn=0, tn=1, fp=0), "confusion counts must be non-negative"),
        (lambda: lee_from_confusion(11, 10, tp=1, fn=0, tn=1, fp=0), "flagged must be between"),
    ],
)
def test_lee_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_lee_from_record_uses_the_records_counts(reports):
    rec = record(reports, "good", "fp")
    b = rec.metrics.judge_vs_consensus.binary
    got = lee_from_record(rec, flagged=120, n=400)
    assert got == lee_from_confusion(120, 400, tp=b.tp, fn=b.fn, tn=b.tn, fp=b.fp)
    with pytest.raises(JudgekitError, match="a corrected rate needs a trusted judge") as info:
        lee_from_record(record(reports, "bad", "fp"), flagged=1, n=10)
    assert info.value.exit_code == 1
    with pytest.raises(JudgekitError, match="--flagged/--total: flagged must be between") as info:
        lee_from_record(rec, flagged=11, n=10)
    assert info.value.exit_code == 2


def test_lee_from_record_without_failure_counts_is_an_error(reports):
    rec = record(reports, "good", "fp")
    jvc = rec.metrics.judge_vs_consensus.model_copy(update={"binary": None, "binary_reason": "no positives"})
    broken = rec.model_copy(update={"metrics": rec.metrics.model_copy(update={"judge_vs_consensus": jvc})})
    with pytest.raises(JudgekitError, match="the record has no failure-detection counts: no positives"):
        lee_from_record(broken, flagged=1, n=10)


@pytest.mark.parametrize(("theta", "q0", "q1"), [(0.2, 0.7, 0.9), (0.5, 0.7, 0.9), (0.8, 0.85, 0.75)])
def test_lee_coverage_by_simulation(theta, q0, q1):
    # the paper's setting: n = 1000 test items, m0 + m1 = 500 calibration items, 2,000 repetitions
    rng = np.random.default_rng(2511)
    reps, n, m0, m1 = 2000, 1000, 250, 250
    p = theta * q1 + (1 - theta) * (1 - q0)
    passed = rng.binomial(n, p, reps)
    h0, h1 = rng.binomial(m0, q0, reps), rng.binomial(m1, q1, reps)
    covered = 0
    for k, a, b in zip(passed, h0, h1, strict=True):
        iv = lee_corrected_rate(int(k), n, q0_hits=int(a), m0=m0, q1_hits=int(b), m1=m1).estimate.interval
        covered += iv.low <= theta <= iv.high
    assert covered / reps >= 0.93  # 95 % less 3 binomial standard errors (0.0049 each) and some slack


# ----------------------------------------------------------------------------------------- allocation


def test_the_allocation_reproduces_algorithm_1_on_a_worked_example():
    # m = 500, m_pilot = 50 per class, pilot 35/50 fails caught and 45/50 passes kept, p̂ = 0.4
    a = lee_allocation(500, 0.4, pilot_q0_hits=35, pilot_m0=50, pilot_q1_hits=45, pilot_m1=50)
    q0t, q1t = 36 / 52, 46 / 52
    kappa = (1 - q0t) / (1 - q1t)
    m1_star = round(500 / (1 + (1 / 0.4 - 1) * math.sqrt(kappa)))
    assert (a.q0_pilot, a.q1_pilot, a.kappa) == pytest.approx((q0t, q1t, kappa))
    assert (a.m1_star, a.m1, a.m0) == (m1_star, m1_star, 500 - m1_star) == (145, 145, 355)
    assert (a.label_pass, a.label_fail) == (95, 305)


def test_the_allocation_never_unlabels_the_pilot():
    a = lee_allocation(100, 0.99, pilot_q0_hits=40, pilot_m0=45, pilot_q1_hits=4, pilot_m1=5)
    assert a.m1_star > 55
    assert (a.m1, a.m0, a.label_fail) == (55, 45, 0)
    a = lee_allocation(100, 0.01, pilot_q0_hits=4, pilot_m0=5, pilot_q1_hits=40, pilot_m1=45)
    assert (a.m1, a.label_pass) == (45, 0)


def test_with_no_pilot_the_allocation_rests_on_the_stated_beliefs():
    # Lee et al.'s example: m = 200, p̂ = 0.4, beliefs TPR q0 = 0.7, TNR q1 = 0.9, no pilot.
    # κ = (1 − 0.7)/(1 − 0.9) = 3, √κ = 1.7321; m1* = round(200/(1 + (1/0.4 − 1)·1.7321))
    # = round(200/3.5981) = round(55.58) = 56 known-pass, m0 = 200 − 56 = 144 known-fail
    # (the old code ignored the beliefs: q̃0 = q̃1 = 1/2, κ = 1, m1 = round(200/2.5) = 80, m0 = 120).
    a = lee_allocation(
        200, 0.4, pilot_q0_hits=0, pilot_m0=0, pilot_q1_hits=0, pilot_m1=0, expected_tpr=0.7, expected_tnr=0.9
    )
    assert (a.m0, a.m1, a.label_fail, a.label_pass) == (144, 56, 144, 56)
    assert (a.q0_pilot, a.q1_pilot, a.kappa, a.basis) == pytest.approx((0.7, 0.9, 3.0, "beliefs"))


def test_a_pilot_outweighs_the_beliefs():
    beliefs = {"expected_tpr": 0.7, "expected_tnr": 0.9}
    a = lee_allocation(500, 0.4, pilot_q0_hits=35, pilot_m0=50, pilot_q1_hits=45, pilot_m1=50, **beliefs)
    assert (a.basis, a.m1, a.q0_pilot) == ("pilot", 145, 36 / 52)
    # one pilot item is a pilot: the smoothed estimate, not the belief
    a = lee_allocation(200, 0.4, pilot_q0_hits=1, pilot_m0=1, pilot_q1_hits=0, pilot_m1=0, **beliefs)
    assert (a.basis, a.q0_pilot, a.q1_pilot) == ("pilot", 2 / 3, 1 / 2)


@pytest.mark.parametrize("beliefs", [(1.0, 0.9), (0.7, 1.0), (-0.1, 0.9)])
def test_a_belief_outside_0_1_is_refused_when_it_is_used(beliefs):
    tpr, tnr = beliefs
    empty = {"pilot_q0_hits": 0, "pilot_m0": 0, "pilot_q1_hits": 0, "pilot_m1": 0}
    with pytest.raises(ValueError, match=r"with no pilot the split rests on the expected TN?P?R, which must"):
        lee_allocation(200, 0.4, **empty, expected_tpr=tpr, expected_tnr=tnr)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((100, 0.0, 1, 2, 1, 2), "the judge's pass share must be strictly between 0 and 1"),
        ((100, 0.5, -1, 2, 1, 2), "pilot counts must be non-negative"),
        ((100, 0.5, 3, 2, 1, 2), "pilot hits cannot exceed their class"),
        ((3, 0.5, 1, 2, 1, 2), "the budget 3 is smaller than the 4 labels already collected"),
    ],
)
def test_allocation_errors(args, message):
    budget, share, h0, m0, h1, m1 = args
    with pytest.raises(ValueError, match=message):
        lee_allocation(budget, share, pilot_q0_hits=h0, pilot_m0=m0, pilot_q1_hits=h1, pilot_m1=m1)


# ----------------------------------------------------------------------------------------- PPI++


def judged(rng, n, big_n, *, theta=0.7, q0=0.8, q1=0.9):
    """Human labels and judge verdicts (1 = pass) on n labelled and big_n unlabelled items."""
    truth = rng.random(n + big_n) < theta
    says = np.where(truth, rng.random(n + big_n) < q1, rng.random(n + big_n) >= q0).astype(float)
    return truth[:n].astype(float), says[:n], says[n:]


@pytest.mark.parametrize("seed", range(6))
def test_ppi_plus_plus_matches_ppi_py(seed):
    ppi = ppi_py()
    rng = np.random.default_rng(seed)
    n, big_n = (40, 400, 150, 300, 1000, 25)[seed], (500, 2000, 150, 5000, 3000, 60)[seed]
    y, f, fu = judged(rng, n, big_n, theta=0.2 + 0.1 * seed)
    if seed == 5:  # continuous values: a scored judge
        y, f, fu = rng.normal(size=n), rng.normal(size=n), rng.normal(size=big_n)
        f = 0.6 * y + 0.8 * f
    for alpha in (0.05, 0.1):
        got = ppi_plus_plus_mean(y, f, fu, confidence=1 - alpha)
        ref_point = float(np.asarray(ppi.ppi_mean_pointestimate(y, f, fu)).ravel()[0])
        low, high = (float(np.asarray(b).ravel()[0]) for b in ppi.ppi_mean_ci(y, f, fu, alpha=alpha))
        assert abs(got.raw_value - ref_point) < 1e-9
        assert abs(got.raw_low - low) < 1e-9
        assert abs(got.raw_high - high) < 1e-9
        assert 0.0 <= got.lam <= 1.0
    for lam in (0.0, 1.0):
        got = ppi_plus_plus_mean(y, f, fu, lam=lam)
        low, high = (float(np.asarray(b).ravel()[0]) for b in ppi.ppi_mean_ci(y, f, fu, alpha=0.05, lam=lam))
        assert (got.raw_low, got.raw_high) == pytest.approx((low, high), abs=1e-9)


def test_lambda_zero_is_the_human_only_estimate_and_tuning_is_never_worse():
    rng = np.random.default_rng(7)
    y, f, fu = judged(rng, 200, 4000)
    human = ppi_plus_plus_mean(y, f, fu, lam=0.0)
    assert human.raw_value == pytest.approx(y.mean())
    assert (human.raw_low, human.raw_high) == pytest.approx(
        (human.classical.interval.low, human.classical.interval.high)
    )
    assert human.effective_labels == pytest.approx(200)
    tuned = ppi_plus_plus_mean(y, f, fu)
    assert tuned.effective_labels > 200  # a good judge is worth more than its labelled items alone
    assert tuned.raw_high - tuned.raw_low < human.raw_high - human.raw_low


def test_a_useless_judge_is_worth_about_no_extra_labels():
    rng = np.random.default_rng(8)
    y = (rng.random(300) < 0.5).astype(float)
    f, fu = (rng.random(300) < 0.5).astype(float), (rng.random(3000) < 0.5).astype(float)
    got = ppi_plus_plus_mean(y, f, fu)
    assert got.lam < 0.15
    assert got.effective_labels == pytest.approx(300, rel=0.05)


def test_a_constant_judge_gets_lambda_zero():
    got = ppi_plus_plus_mean([1, 0, 1, 1], [1, 1, 1, 1], [1, 1, 1])
    assert got.lam == 0.0
    assert got.raw_value == 0.75


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (([1], [1], [1, 0]), "fewer than two human-labelled items"),
        (([1, 0], [1, 0], [1]), "fewer than two unlabelled items"),
    ],
)
def test_ppi_with_too_few_items_is_undefined(args, reason):
    got = ppi_plus_plus_mean(*args)
    assert (got.estimate.value, got.estimate.undefined_reason, got.lam) == (None, reason, None)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1, 0], [1], [1, 0]), r"human_labelled and judge_labelled differ in length \(2 and 1\)"),
        (([1, float("nan")], [1, 0], [1, 0]), "values must be finite numbers"),
    ],
)
def test_ppi_errors(args, message):
    with pytest.raises(ValueError, match=message):
        ppi_plus_plus_mean(*args)


@pytest.mark.parametrize(("theta", "n", "big_n"), [(0.3, 200, 2000), (0.7, 100, 1000), (0.9, 300, 3000)])
def test_ppi_coverage_by_simulation(theta, n, big_n):
    rng = np.random.default_rng(2311)
    reps, covered = 2000, 0
    for _ in range(reps):
        y, f, fu = judged(rng, n, big_n, theta=theta)
        got = ppi_plus_plus_mean(y, f, fu)
        covered += got.raw_low <= theta <= got.raw_high
    assert covered / reps >= 0.93


# ----------------------------------------------------------------------------------------- run reports


def result_line(case: str, verdicts: dict[str, str], fingerprint: str):
    from judgekit.results import ResultLine

    return ResultLine.model_validate(
        {
            "schema_version": 1,
            "run_id": "r",
            "case": {"id": case, "version": "1"},
            "trial": 1,
            "verdict": "pass",
            "checks": [
                {
                    "check_id": f"criterion:{c}",
                    "layer": "rubric",
                    "verdict": v,
                    "reason": "" if v == "pass" else "judged",
                    "evidence": [{"kind": "note", "summary": "judge", "data": {"fingerprint": fingerprint}}],
                }
                for c, v in verdicts.items()
            ]
            + [{"check_id": "state", "layer": "state", "verdict": "fail", "reason": "x"}],
            "judge_fingerprint": {"hex": fingerprint},
            "judgekit_version": "0",
        }
    )


def test_corrected_criterion_rates_per_criterion_with_a_record(reports):
    rec = record(reports, "good", "fp-good")
    b = rec.metrics.judge_vs_consensus.binary
    lines = [
        result_line(f"c{i}", {"a": "pass" if i % 4 else "fail", "b": "insufficient_information"}, "fp-good")
        for i in range(40)
    ] + [result_line("z", {"a": "fail"}, "fp-unknown")]
    (row,) = corrected_criterion_rates(lines, [rec])
    assert (row.criterion, row.fingerprint, row.passed, row.decided) == ("a", "fp-good", 30, 40)
    assert row.observed == 0.75
    assert row.correction == lee_from_confusion(10, 40, tp=b.tp, fn=b.fn, tn=b.tn, fp=b.fp)
    assert row.record_trusted


def test_corrected_criterion_rates_flag_an_untrusted_record(reports):
    rec = record(reports, "bad", "fp-bad")
    (row,) = corrected_criterion_rates([result_line("c", {"a": "pass"}, "fp-bad")], [rec])
    assert row.correction.unreliable
    assert not row.record_trusted
    assert row.correction.unreliable_reason.endswith("the calibration record did not pass its policy")


def test_corrected_criterion_rates_give_bounds_under_the_undecided_checks(reports):
    rec = record(reports, "good", "fp-good")
    verdicts = ["pass"] * 24 + ["fail"] * 8 + ["insufficient_information"] * 6 + ["error"] * 2
    lines = [result_line(f"c{i}", {"a": v}, "fp-good") for i, v in enumerate(verdicts)]
    (row,) = corrected_criterion_rates(lines, [rec])
    assert (row.passed, row.decided, row.undecided) == (24, 32, 8)
    q0, j = row.correction.q0, row.correction.youden
    assert row.undecided_low == pytest.approx(min(1.0, max(0.0, (24 / 40 + q0 - 1) / j)))
    assert row.undecided_high == pytest.approx(min(1.0, max(0.0, (32 / 40 + q0 - 1) / j)))
    assert row.undecided_low <= row.correction.estimate.value <= row.undecided_high


def test_a_criterion_with_only_undecided_checks_is_left_out(reports):
    rec = record(reports, "good", "fp-good")
    lines = [result_line("c", {"a": "error"}, "fp-good")]
    assert corrected_criterion_rates(lines, [rec]) == []
