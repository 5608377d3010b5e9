"""Corrected pass rates that carry both uncertainties: the test sample's and the calibration's.

A judge's pass share on new items is biased by its errors. Two corrections, both returning intervals:

* :func:`lee_corrected_rate`: Lee, Zeng, Jeong, Sohn and Lee, "How to Correctly Report LLM-as-a-Judge
  Evaluations" (arXiv 2511.21140). The point value is the Rogan–Gladen correction
  θ̂ = clip((p̂ + q̂0 − 1) / (q̂0 + q̂1 − 1), 0, 1); the interval is their adjusted Wald interval
  (Eq. 5–7, after Lang and Reiczigel 2014), which adds pseudo-counts to the three proportions and a bias
  term ``dθ̃``, and covers close to its nominal level where the plain delta-method interval does not.
  :func:`lee_allocation` is their Algorithm 1: how to split a calibration budget between known-pass and
  known-fail items.
* :func:`ppi_plus_plus_mean`: PPI++ (Angelopoulos, Duchi and Zrnic 2023, "PPI++: Efficient
  Prediction-Powered Inference"), from human labels on a labelled subset plus the judge's verdicts on
  it and on unlabelled items. The power-tuning weight λ is chosen from the data exactly as ``ppi_py``
  does (clipped to [0, 1]); λ = 0 is the human-only estimate and λ = 1 classic PPI, so the tuned
  estimate is never (asymptotically) worse than the human labels alone.

**Orientation.** Lee et al. estimate the *pass rate* θ: ``q0`` is the judge's specificity for wrong
answers, P(judge says fail | truly fail), and ``q1`` its sensitivity for correct ones,
P(judge says pass | truly pass). judgekit's calibration records count *failures* as the positive class
(``tp`` = failures the judge caught), so in a record's confusion counts q0 = TPR = tp / (tp + fn),
q1 = TNR = tn / (tn + fp), m0 = tp + fn (reference failures) and m1 = tn + fp (reference passes); the
judge's pass share is 1 − flagged / n, and the corrected failure rate is 1 − θ̂ with the interval
[1 − high, 1 − low] (the Lee interval is exactly symmetric under swapping the classes).
:func:`lee_from_confusion` does this mapping.

**When the correction is unreliable.** The correction divides by the Youden index J = q̂0 + q̂1 − 1. It
is undefined for J ≤ 0 (a judge no better than chance) and flagged *unreliable* when J <
:data:`MIN_YOUDEN` (0.2: the judge's verdicts carry so little signal that small calibration errors move
the corrected rate a lot) or when the interval is the whole of [0, 1] (the data say nothing about the
rate).

All functions are pure; undefined values are ``None`` with a reason, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, Literal

import numpy as np

from judgekit.calibration.agreement import BinaryMetrics, undefined
from judgekit.calibration.beyond import check_correction_counts
from judgekit.calibration.records import CalibrationRecord
from judgekit.errors import JudgekitError
from judgekit.results import ResultLine
from judgekit.stats import Estimate, Interval, normal_quantile
from judgekit.verdict import CheckResult, FrozenModel, Verdict

__all__ = [
    "LEE_METHOD",
    "MIN_YOUDEN",
    "PPI_METHOD",
    "CriterionCorrection",
    "LeeAllocation",
    "LeeCorrection",
    "PPIResult",
    "corrected_criterion_rates",
    "corrected_point",
    "corrections_from_counts",
    "count_judged_criteria",
    "latest_records",
    "lee_allocation",
    "lee_corrected_rate",
    "lee_from_confusion",
    "lee_from_record",
    "ppi_plus_plus_mean",
]

LEE_METHOD: Final = "Lee et al. adjusted Wald"
"""The interval method name of :func:`lee_corrected_rate`."""
PPI_METHOD: Final = "PPI++ (power-tuned)"
"""The interval method name of :func:`ppi_plus_plus_mean`."""
MIN_YOUDEN: Final = 0.2
"""Below this Youden index q̂0 + q̂1 − 1 the Lee correction is flagged unreliable."""


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")
    return normal_quantile(confidence)


def _clip(x: float) -> float:
    return min(1.0, max(0.0, x))


class LeeCorrection(FrozenModel):
    """A Lee et al. corrected pass rate with the judge's error rates behind it.

    Attributes:
        estimate: The corrected *pass rate* θ̂ in [0, 1] with its adjusted Wald interval (method
            :data:`LEE_METHOD`); undefined (``value`` ``None``, with the reason) when the correction is.
        observed: The judge's pass share p̂ on the ``n`` test items.
        n: Test items the judge decided.
        q0: Calibration specificity P(judge says fail | truly fail) (= a record's TPR); ``None`` without
            reference failures.
        q1: Calibration sensitivity P(judge says pass | truly pass) (= a record's TNR); ``None`` without
            reference passes.
        m0: Calibration items whose reference label is fail.
        m1: Calibration items whose reference label is pass.
        youden: q0 + q1 − 1, ``None`` when either is unknown.
        unreliable: True when the correction should not be relied on (see ``unreliable_reason``).
        unreliable_reason: Why: the correction is undefined, J < :data:`MIN_YOUDEN`, or the interval is
            all of [0, 1]; ``None`` when reliable.
    """

    estimate: Estimate
    observed: float
    n: int
    q0: float | None
    q1: float | None
    m0: int
    m1: int
    youden: float | None
    unreliable: bool
    unreliable_reason: str | None = None

    def failure_rate(self) -> Estimate:
        """The same correction as a *failure* rate: 1 − θ̂ with the interval [1 − high, 1 − low]."""
        est = self.estimate
        if est.value is None:
            return est
        interval = est.interval
        flipped = (
            None
            if interval is None
            else interval.model_copy(update={"low": 1.0 - interval.high, "high": 1.0 - interval.low})
        )
        return est.model_copy(update={"value": 1.0 - est.value, "interval": flipped})


def lee_corrected_rate(
    passed: int,
    n: int,
    *,
    q0_hits: int,
    m0: int,
    q1_hits: int,
    m1: int,
    confidence: float = 0.95,
) -> LeeCorrection:
    """Lee et al.'s corrected pass rate and adjusted Wald interval.

    With p̂ = passed / n, q̂0 = q0_hits / m0, q̂1 = q1_hits / m1 and z = Φ⁻¹(1 − α/2):
    θ̂ = clip((p̂ + q̂0 − 1) / (q̂0 + q̂1 − 1)); the interval uses p̃ = (n p̂ + z²/2) / (n + z²),
    q̃k = (mk q̂k + 1) / (mk + 2), ñ = n + z², m̃k = mk + 2, θ̃ = (p̃ + q̃0 − 1) / (q̃0 + q̃1 − 1),
    dθ̃ = 2 z² (−(1 − θ̃) q̃0 (1 − q̃0) / m̃0 + θ̃ q̃1 (1 − q̃1) / m̃1) and
    se = √(p̃(1 − p̃)/ñ + (1 − θ̃)² q̃0(1 − q̃0)/m̃0 + θ̃² q̃1(1 − q̃1)/m̃1) / (q̃0 + q̃1 − 1), and is
    [clip(θ̃ + dθ̃ − z se), clip(θ̃ + dθ̃ + z se)].

    The test items and the calibration items must be independent samples, the calibration items drawn
    by reference class, and the judge's error rates the same on both.

    Args:
        passed: Test items the judge passed, ``0 <= passed <= n``.
        n: Test items the judge decided (``>= 1``).
        q0_hits: Calibration items with reference label fail that the judge also failed.
        m0: Calibration items with reference label fail (``>= q0_hits``).
        q1_hits: Calibration items with reference label pass that the judge also passed.
        m1: Calibration items with reference label pass (``>= q1_hits``).
        confidence: Two-sided confidence level.

    Returns:
        The correction and its diagnostics. The estimate is undefined when ``m0`` or ``m1`` is 0 or
        q̂0 + q̂1 ≤ 1; the interval alone is missing when the pseudo-count Youden q̃0 + q̃1 − 1 is not
        positive.

    Raises:
        ValueError: When a count is negative, ``passed`` is outside ``[0, n]``, a hit count exceeds its
            class, or ``confidence`` is outside (0, 1).
    """
    if min(passed, q0_hits, m0, q1_hits, m1) < 0:
        raise ValueError("counts must be non-negative")
    if n < 1 or passed > n:
        raise ValueError(f"passed must be between 0 and n >= 1, got passed={passed}, n={n}")
    if q0_hits > m0 or q1_hits > m1:
        raise ValueError(
            f"hits cannot exceed their class: q0_hits={q0_hits} of m0={m0}, q1_hits={q1_hits} of m1={m1}"
        )
    z = _z(confidence)
    p = passed / n
    q0 = q0_hits / m0 if m0 else None
    q1 = q1_hits / m1 if m1 else None
    youden = None if q0 is None or q1 is None else q0 + q1 - 1.0

    def result(estimate: Estimate, reason: str | None) -> LeeCorrection:
        return LeeCorrection(
            estimate=estimate,
            observed=p,
            n=n,
            q0=q0,
            q1=q1,
            m0=m0,
            m1=m1,
            youden=youden,
            unreliable=reason is not None,
            unreliable_reason=reason,
        )

    if q0 is None:
        why = "calibration has no reference failures, so q0 (P(judge fails | truly fail)) is unknown"
        return result(undefined(why, n), why)
    if q1 is None:
        why = "calibration has no reference passes, so q1 (P(judge passes | truly pass)) is unknown"
        return result(undefined(why, n), why)
    if youden is None or youden <= 0.0:
        why = f"q0 + q1 − 1 = {youden:.3f} is not positive: the judge is no better than chance"
        return result(undefined(why, n), why)
    raw = (p + q0 - 1.0) / youden
    theta = _clip(raw)
    note = None if theta == raw else f"the uncorrected estimate {raw:.3f} was clipped to [0, 1]"
    z2 = z * z
    pt = (n * p + z2 / 2.0) / (n + z2)
    q0t, q1t = (q0_hits + 1.0) / (m0 + 2.0), (q1_hits + 1.0) / (m1 + 2.0)
    nt, m0t, m1t = n + z2, m0 + 2.0, m1 + 2.0
    jt = q0t + q1t - 1.0
    interval: Interval | None = None
    interval_reason: str | None = None
    if jt <= 0.0:
        interval_reason = f"the adjusted Youden q̃0 + q̃1 − 1 = {jt:.3f} is not positive"
    else:
        tt = (pt + q0t - 1.0) / jt
        dt = 2.0 * z2 * (-(1.0 - tt) * q0t * (1.0 - q0t) / m0t + tt * q1t * (1.0 - q1t) / m1t)
        var = (
            pt * (1.0 - pt) / nt + (1.0 - tt) ** 2 * q0t * (1.0 - q0t) / m0t + tt**2 * q1t * (1.0 - q1t) / m1t
        )
        se = math.sqrt(var) / jt
        centre = tt + dt
        interval = Interval(
            low=_clip(centre - z * se),
            high=_clip(centre + z * se),
            confidence=confidence,
            method=LEE_METHOD,
            note=note,
        )
    estimate = Estimate(value=theta, n=n, interval=interval, interval_reason=interval_reason)
    reason: str | None = None
    if youden < MIN_YOUDEN:
        reason = (
            f"q0 + q1 − 1 = {youden:.3f} is below {MIN_YOUDEN}: the judge is close to chance, so the "
            "correction amplifies every calibration error"
        )
    elif interval is None:
        reason = interval_reason
    elif interval.low == 0.0 and interval.high == 1.0:
        reason = "the interval is all of [0, 1]: the data say nothing about the rate"
    return result(estimate, reason)


def lee_from_confusion(
    flagged: int,
    n: int,
    *,
    tp: int,
    fn: int,
    tn: int,
    fp: int,
    confidence: float = 0.95,
) -> LeeCorrection:
    """:func:`lee_corrected_rate` from judgekit's failure-positive counts.

    The mapping: passed = n − flagged, q0_hits = tp, m0 = tp + fn, q1_hits = tn, m1 = tn + fp. The result
    is the *pass* rate; :meth:`LeeCorrection.failure_rate` gives the failure rate.

    Args:
        flagged: Test items the judge flagged as failures, ``0 <= flagged <= n``.
        n: Test items the judge decided (``>= 1``).
        tp: Calibration failures the judge caught.
        fn: Calibration failures the judge missed.
        tn: Calibration passes the judge passed.
        fp: Calibration passes the judge flagged.
        confidence: Two-sided confidence level.

    Raises:
        ValueError: When a count is negative or ``flagged`` is outside ``[0, n]``.
    """
    check_correction_counts(flagged, n, tp=tp, fn=fn, tn=tn, fp=fp)
    return lee_corrected_rate(
        n - flagged, n, q0_hits=tp, m0=tp + fn, q1_hits=tn, m1=tn + fp, confidence=confidence
    )


def lee_from_record(record: CalibrationRecord, *, flagged: int, n: int) -> LeeCorrection:
    """The Lee correction of new data with a *trusted* record's confusion counts, at its confidence.

    Args:
        record: The judge's calibration record; it must have passed its policy.
        flagged: Test items the judge flagged as failures.
        n: Test items the judge decided.

    Raises:
        JudgekitError: When the record did not pass (exit code 1: an untrusted judge's error rates do
            not license a correction), has no failure-detection counts, or the counts are impossible
            (exit code 2).
    """
    if not record.trusted:
        raise JudgekitError(
            f"the record for {record.fingerprint!r} did not pass its policy; "
            "a corrected rate needs a trusted judge",
            exit_code=1,
        )
    binary = record.metrics.judge_vs_consensus.binary
    if binary is None:
        raise JudgekitError(
            f"the record has no failure-detection counts: {record.metrics.judge_vs_consensus.binary_reason}"
        )
    try:
        return lee_from_confusion(
            flagged,
            n,
            tp=binary.tp,
            fn=binary.fn,
            tn=binary.tn,
            fp=binary.fp,
            confidence=record.policy.confidence,
        )
    except ValueError as exc:
        raise JudgekitError(f"--flagged/--total: {exc}") from None


class LeeAllocation(FrozenModel):
    """Lee et al.'s Algorithm 1: how to split a calibration budget between the two reference classes.

    Attributes:
        budget: Total calibration labels m (the pilot included).
        pass_share: The judge's pass share p̂ on the test data.
        pilot_m0: Pilot items with reference label fail (already labelled).
        pilot_m1: Pilot items with reference label pass (already labelled).
        q0_pilot: q̃0, the judge's rate of failing a reference failure (TPR): from the pilot,
            (hits0 + 1) / (pilot_m0 + 2), or the stated belief when ``basis`` is ``beliefs``.
        q1_pilot: q̃1, the judge's rate of passing a reference pass (TNR): from the pilot,
            (hits1 + 1) / (pilot_m1 + 2), or the stated belief when ``basis`` is ``beliefs``.
        kappa: κ̂ = (1 − q̃0) / (1 − q̃1).
        m1_star: The unconstrained optimum round(m / (1 + (1/p̂ − 1) √κ̂)).
        m1: Reference-pass items in the final calibration set, clamped to [pilot_m1, m − pilot_m0].
        m0: Reference-fail items, m − m1.
        label_pass: Further known-pass items to label, m1 − pilot_m1.
        label_fail: Further known-fail items to label, m0 − pilot_m0.
        basis: Where q̃0 and q̃1 come from: ``pilot`` (the labels already collected) or ``beliefs``
            (no pilot item yet: the stated expected TPR and TNR, as Lee et al. do before any label).
    """

    budget: int
    pass_share: float
    pilot_m0: int
    pilot_m1: int
    q0_pilot: float
    q1_pilot: float
    kappa: float
    m1_star: int
    m1: int
    m0: int
    label_pass: int
    label_fail: int
    basis: Literal["pilot", "beliefs"] = "pilot"


def lee_allocation(
    budget: int,
    pass_share: float,
    *,
    pilot_q0_hits: int,
    pilot_m0: int,
    pilot_q1_hits: int,
    pilot_m1: int,
    expected_tpr: float | None = None,
    expected_tnr: float | None = None,
) -> LeeAllocation:
    """Split ``budget`` calibration labels between reference passes and fails (Lee et al., Algorithm 1).

    The split minimises the adjusted Wald interval's width: m̃0 ≈ (1/p̃ − 1) √κ · m̃1 with
    κ = (1 − q0) / (1 − q1), estimated from the pilot. The paper's pilot has ``m_pilot`` items per class;
    here the two pilot classes may differ in size (the labels already collected), and the final split
    never asks to un-label a pilot item: m1 is clamped to [pilot_m1, budget − pilot_m0]. With no pilot
    item at all and both beliefs given, q0 and q1 are the beliefs (``basis`` ``beliefs``): a judge
    believed to catch failures less well than it keeps passes (κ > 1) gets more known-fail labels. Without
    beliefs and without a pilot, q̃0 = q̃1 = 1/2 (κ = 1).

    Args:
        budget: Total calibration labels m, pilot included (``>= pilot_m0 + pilot_m1``, ``>= 1``).
        pass_share: The judge's pass share p̂ on the test data, in (0, 1).
        pilot_q0_hits: Pilot reference failures the judge failed.
        pilot_m0: Pilot reference failures.
        pilot_q1_hits: Pilot reference passes the judge passed.
        pilot_m1: Pilot reference passes.
        expected_tpr: The judge's believed TPR (share of reference failures it fails), in [0, 1); used
            only when the pilot is empty.
        expected_tnr: The judge's believed TNR (share of reference passes it passes), in [0, 1); used
            only when the pilot is empty.

    Raises:
        ValueError: When ``pass_share`` is outside (0, 1), a count is negative or a hit count exceeds its
            class, the budget is smaller than the pilot, or a belief used is outside [0, 1) (a belief of 1,
            a judge that never errs on a class, leaves κ undefined or sends every label to one class).
    """
    if not 0.0 < pass_share < 1.0:
        raise ValueError(f"the judge's pass share must be strictly between 0 and 1, got {pass_share}")
    if min(pilot_q0_hits, pilot_m0, pilot_q1_hits, pilot_m1) < 0:
        raise ValueError("pilot counts must be non-negative")
    if pilot_q0_hits > pilot_m0 or pilot_q1_hits > pilot_m1:
        raise ValueError("pilot hits cannot exceed their class")
    if budget < max(1, pilot_m0 + pilot_m1):
        raise ValueError(
            f"the budget {budget} is smaller than the {pilot_m0 + pilot_m1} labels already collected "
            "(it counts the pilot too)"
        )
    basis: Literal["pilot", "beliefs"] = "pilot"
    q0t = (pilot_q0_hits + 1.0) / (pilot_m0 + 2.0)
    q1t = (pilot_q1_hits + 1.0) / (pilot_m1 + 2.0)
    if pilot_m0 + pilot_m1 == 0 and expected_tpr is not None and expected_tnr is not None:
        for name, belief in (("TPR", expected_tpr), ("TNR", expected_tnr)):
            if not 0.0 <= belief < 1.0:
                raise ValueError(
                    f"with no pilot the split rests on the expected {name}, which must be in [0, 1), got "
                    f"{belief} (a judge believed never to err leaves nothing to balance)"
                )
        basis, q0t, q1t = "beliefs", expected_tpr, expected_tnr
    kappa = (1.0 - q0t) / (1.0 - q1t)
    m1_star = round(budget / (1.0 + (1.0 / pass_share - 1.0) * math.sqrt(kappa)))
    m1 = min(max(m1_star, pilot_m1), budget - pilot_m0)
    m0 = budget - m1
    return LeeAllocation(
        budget=budget,
        pass_share=pass_share,
        pilot_m0=pilot_m0,
        pilot_m1=pilot_m1,
        q0_pilot=q0t,
        q1_pilot=q1t,
        kappa=kappa,
        m1_star=m1_star,
        m1=m1,
        m0=m0,
        label_pass=m1 - pilot_m1,
        label_fail=m0 - pilot_m0,
        basis=basis,
    )


class PPIResult(FrozenModel):
    """A PPI++ estimate of a mean (a pass rate with pass = 1), and what the judge was worth.

    Attributes:
        estimate: The estimate with its interval (method :data:`PPI_METHOD`), both clipped to [0, 1]
            when every value is in [0, 1]; undefined with fewer than two labelled or unlabelled items.
        lam: The power-tuning weight λ used (tuned and clipped to [0, 1] unless given); λ = 0 is the
            human-only mean, λ = 1 classic PPI. ``None`` when undefined.
        raw_low: The interval's lower bound before clipping (what ``ppi_py.ppi_mean_ci`` returns).
        raw_high: The interval's upper bound before clipping.
        raw_value: The point estimate before clipping (``ppi_py.ppi_mean_pointestimate``).
        classical: The human-only mean of the labelled items with its normal interval (λ = 0).
        n_labelled: Items with a human label (and the judge's verdict).
        n_unlabelled: Items with the judge's verdict only.
        effective_labels: n_labelled × var(human-only mean) / var(PPI++ estimate): how many human labels
            alone would give the same variance; ``None`` when the PPI++ variance is 0.
    """

    estimate: Estimate
    lam: float | None
    raw_low: float | None
    raw_high: float | None
    raw_value: float | None
    classical: Estimate
    n_labelled: int
    n_unlabelled: int
    effective_labels: float | None


def ppi_plus_plus_mean(
    human_labelled: Sequence[float] | np.ndarray,
    judge_labelled: Sequence[float] | np.ndarray,
    judge_unlabelled: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    lam: float | None = None,
) -> PPIResult:
    """PPI++ mean and two-sided interval, as ``ppi_py.ppi_mean_pointestimate`` / ``ppi_mean_ci``.

    With labelled human values Y and judge values Ŷ (n items) and unlabelled judge values Ŷᵘ (N items):
    θ̂₁ = mean(Ŷᵘ) + mean(Y − Ŷ) (classic PPI) centres the tuning, and
    λ = clip(cov(Y, Ŷ) / ((1 + n/N) var(Ŷ ∪ Ŷᵘ)), 0, 1), with ``cov`` the 1/n covariance and ``var`` the
    1/(n + N − 1) variance of the pooled judge values. Then θ̂ = λ mean(Ŷᵘ) + mean(Y − λŶ),
    se² = λ² var₀(Ŷᵘ)/N + var₀(Y − λŶ)/n (1/N and 1/n variances) and the interval is θ̂ ± z se.

    Args:
        human_labelled: Human values on the labelled items (1 = pass, 0 = fail for a pass rate).
        judge_labelled: The judge's values on the same items, aligned with ``human_labelled``.
        judge_unlabelled: The judge's values on the items without a human label.
        confidence: Two-sided confidence level (``alpha`` = 1 − confidence).
        lam: A fixed λ instead of the tuned one (0 = human-only, 1 = classic PPI).

    Returns:
        The estimate, λ and the effective number of human labels. When the judge's values are all equal
        (no variance to tune on) λ is 0.

    Raises:
        ValueError: When the labelled arrays differ in length, hold non-finite values, or ``confidence``
            is outside (0, 1).
    """
    z = _z(confidence)
    y = np.asarray(human_labelled, dtype=float).ravel()
    f = np.asarray(judge_labelled, dtype=float).ravel()
    fu = np.asarray(judge_unlabelled, dtype=float).ravel()
    if y.shape != f.shape:
        raise ValueError(f"human_labelled and judge_labelled differ in length ({y.size} and {f.size})")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(f)) and np.all(np.isfinite(fu))):
        raise ValueError("values must be finite numbers")
    n, big_n = int(y.size), int(fu.size)
    if n < 2 or big_n < 2:
        why = "fewer than two human-labelled items" if n < 2 else "fewer than two unlabelled items"
        none = undefined(why, n + big_n)
        return PPIResult(
            estimate=none,
            lam=None,
            raw_low=None,
            raw_high=None,
            raw_value=None,
            classical=undefined(why, n) if n < 2 else _classical(y, z, confidence),
            n_labelled=n,
            n_unlabelled=big_n,
            effective_labels=None,
        )
    if lam is None:
        pooled = np.concatenate([f, fu])
        var_pooled = float(np.var(pooled, ddof=1))
        if var_pooled == 0.0:
            lam = 0.0
        else:
            cov = float(np.mean((y - y.mean()) * (f - f.mean())))
            lam = min(1.0, max(0.0, cov / ((1.0 + n / big_n) * var_pooled)))
    value = float(lam * fu.mean() + (y - lam * f).mean())
    var = lam**2 * float(np.var(fu)) / big_n + float(np.var(y - lam * f)) / n
    se = math.sqrt(var)
    low, high = value - z * se, value + z * se
    unit = all(bool(((a >= 0) & (a <= 1)).all()) for a in (y, f, fu))
    classical = _classical(y, z, confidence)
    effective = None if var == 0.0 else float(np.var(y)) / var
    shown = (_clip(value), _clip(low), _clip(high)) if unit else (value, low, high)
    return PPIResult(
        estimate=Estimate(
            value=shown[0],
            n=n + big_n,
            interval=Interval(low=shown[1], high=shown[2], confidence=confidence, method=PPI_METHOD),
        ),
        lam=lam,
        raw_low=low,
        raw_high=high,
        raw_value=value,
        classical=classical,
        n_labelled=n,
        n_unlabelled=big_n,
        effective_labels=effective,
    )


def _classical(y: np.ndarray, z: float, confidence: float) -> Estimate:
    """The human-only mean with its normal (1/n variance) interval: PPI++ at λ = 0."""
    mean = float(y.mean())
    se = math.sqrt(float(np.var(y)) / y.size)
    return Estimate(
        value=mean,
        n=int(y.size),
        interval=Interval(low=mean - z * se, high=mean + z * se, confidence=confidence, method="normal"),
    )


class CriterionCorrection(FrozenModel):
    """One judged criterion of a run: its observed pass share and Lee-corrected pass rate.

    Attributes:
        criterion: The criterion id (``honest_reporting``; the check id without ``criterion:``).
        fingerprint: The judge fingerprint that graded it (the record's ``fingerprint``).
        passed: Trials whose check verdict is ``pass``.
        decided: Trials whose check verdict is ``pass`` or ``fail`` (the denominator).
        observed: ``passed / decided``, the judge's uncorrected pass share.
        correction: The Lee correction with the record's counts, at the record's confidence; its
            ``unreliable`` flag and reason say when not to rely on it.
        record_trusted: Whether the record passed its policy (a correction from an untrusted record is
            still computed, and flagged unreliable).
        undecided: Trials whose check has no decided verdict (``insufficient_information``, ``error``,
            ``not_evaluated``), left out of ``decided``; ``>= 0``.
        undecided_low: The corrected point value over every trial, undecided ones included, when every
            undecided check counts as a fail (the judge's pass share ``passed / (decided + undecided)``);
            ``None`` when the correction is undefined. The missing-verdict bound, beside the interval.
        undecided_high: The same when every undecided check counts as a pass; ``undecided_low <=
            undecided_high``, equal when nothing is undecided.
    """

    criterion: str
    fingerprint: str
    passed: int
    decided: int
    observed: float
    correction: LeeCorrection
    record_trusted: bool
    undecided: int = 0
    undecided_low: float | None = None
    undecided_high: float | None = None


def _check_fingerprint(line: ResultLine, check: CheckResult) -> str | None:
    """The fingerprint of the judge behind one check: its note evidence's, else the line's."""
    for ev in check.evidence:
        if isinstance(ev.data, dict):
            found = ev.data.get("fingerprint")
            if isinstance(found, str) and found:
                return found
    fp = line.judge_fingerprint
    hex_ = fp.get("hex") if fp is not None else None
    return hex_ if isinstance(hex_, str) and hex_ else None


def corrected_criterion_rates(
    lines: Iterable[ResultLine], records: Sequence[CalibrationRecord]
) -> list[CriterionCorrection]:
    """Per judged criterion with a calibration record: observed pass share and Lee-corrected pass rate.

    Inputs: the result lines of one run (:attr:`judgekit.results.RunResults.lines`, as
    :func:`judgekit.results.read_results` returns them) and the calibration records
    (:func:`judgekit.calibration.records.load_records`). A judged criterion is a check with
    ``layer == "rubric"`` and ``check_id == "criterion:<id>"``; its fingerprint is the ``fingerprint`` in
    the check's judge note evidence (``evidence[].data["fingerprint"]``), else the line's
    ``judge_fingerprint["hex"]``. Only ``pass`` and ``fail`` verdicts count (abstentions and errors are
    not decided). The record used is the latest (by ``created_at``) whose ``fingerprint`` equals it and
    that has failure-detection counts; criteria without one are left out.

    Returns:
        One entry per (criterion, fingerprint) with at least one decided trial, sorted by criterion and
        fingerprint.
    """
    latest = latest_records(records)
    counts: dict[tuple[str, str], list[int]] = {}
    for line in lines:
        count_judged_criteria(counts, line, latest)
    return corrections_from_counts(counts, records)


def latest_records(
    records: Sequence[CalibrationRecord],
) -> dict[str, tuple[CalibrationRecord, BinaryMetrics]]:
    """Per fingerprint, the latest record (by ``created_at``) with failure-detection counts."""
    latest: dict[str, tuple[CalibrationRecord, BinaryMetrics]] = {}
    for rec in records:
        binary = rec.metrics.judge_vs_consensus.binary
        if binary is None:
            continue
        old = latest.get(rec.fingerprint)
        if old is None or rec.created_at > old[0].created_at:
            latest[rec.fingerprint] = (rec, binary)
    return latest


def count_judged_criteria(
    counts: dict[tuple[str, str], list[int]], line: ResultLine, fingerprints: Mapping[str, object]
) -> None:
    """Add one result line's judged criterion checks to ``counts``.

    Args:
        counts: ``(criterion id, fingerprint) -> [passed, decided, undecided]``, updated in place.
        line: The line.
        fingerprints: The fingerprints that have a record (:func:`latest_records`); checks of others are
            not counted.
    """
    for check in line.checks:
        if check.layer != "rubric" or not check.check_id.startswith("criterion:"):
            continue
        fp = _check_fingerprint(line, check)
        if fp is None or fp not in fingerprints:
            continue
        tally = counts.setdefault((check.check_id.removeprefix("criterion:"), fp), [0, 0, 0])
        if check.verdict in {Verdict.PASS, Verdict.FAIL}:
            tally[0] += check.verdict is Verdict.PASS
            tally[1] += 1
        else:
            tally[2] += 1


def corrections_from_counts(
    counts: Mapping[tuple[str, str], Sequence[int]], records: Sequence[CalibrationRecord]
) -> list[CriterionCorrection]:
    """:func:`corrected_criterion_rates` from counts made by :func:`count_judged_criteria`."""
    latest = latest_records(records)
    out: list[CriterionCorrection] = []
    for (criterion, fp), (passed, decided, undecided) in sorted(counts.items()):
        if decided == 0:
            continue
        rec, binary = latest[fp]
        correction = lee_corrected_rate(
            passed,
            decided,
            q0_hits=binary.tp,
            m0=binary.tp + binary.fn,
            q1_hits=binary.tn,
            m1=binary.tn + binary.fp,
            confidence=rec.policy.confidence,
        )
        if not rec.trusted:
            correction = correction.model_copy(
                update={
                    "unreliable": True,
                    "unreliable_reason": "; ".join(
                        r
                        for r in (
                            correction.unreliable_reason,
                            "the calibration record did not pass its policy",
                        )
                        if r
                    ),
                }
            )
        out.append(
            CriterionCorrection(
                criterion=criterion,
                fingerprint=fp,
                passed=passed,
                decided=decided,
                observed=passed / decided,
                correction=correction,
                record_trusted=rec.trusted,
                undecided=undecided,
                undecided_low=corrected_point(passed / (decided + undecided), correction),
                undecided_high=corrected_point((passed + undecided) / (decided + undecided), correction),
            )
        )
    return out


def corrected_point(p: float, correction: LeeCorrection) -> float | None:
    """The corrected pass rate at another judge pass share ``p``, with the same judge error rates.

    θ̂ = clip((p + q̂0 − 1) / (q̂0 + q̂1 − 1)), increasing in ``p``, so the corrected values at the pass
    shares with every undecided item failing and passing bound the corrected rate under the missing
    verdicts.

    Args:
        p: A judge pass share in [0, 1].
        correction: The correction whose ``q0`` and ``youden`` to use.

    Returns:
        The corrected value in [0, 1], or ``None`` when the correction is undefined (q0 unknown or
        q0 + q1 − 1 ≤ 0).

    Examples:
        >>> c = lee_corrected_rate(40, 100, q0_hits=70, m0=100, q1_hits=90, m1=100)
        >>> round(corrected_point(0.4, c), 4)
        0.1667
    """
    if correction.q0 is None or correction.youden is None or correction.youden <= 0.0:
        return None
    return min(1.0, max(0.0, (p + correction.q0 - 1.0) / correction.youden))
