"""Beyond agreement: correcting a judge's failure rate, and judging only where it is reliable.

* :func:`rogan_gladen`: the share of failures a trusted judge flags on unlabelled data is biased by its
  misses and false alarms; the Rogan–Gladen estimator corrects it with the judge's TPR and TNR from
  calibration, and the delta method gives an interval that carries the uncertainty of all three.
* :func:`prediction_powered_mean`: with a human-labelled subset as well, prediction-powered inference
  (Angelopoulos et al., 2023) corrects the judge's mean by the mean judge error on the labelled subset;
  its interval is valid whatever the judge's quality.
* :func:`selective_threshold` (with :class:`SelectiveResult` and :class:`SelectiveStep`): re-exported from
  :mod:`judgekit.calibration.selective`, where selective judging and the judge cascade live.

All functions are pure and return undefined values (``None`` with a reason) rather than NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from judgekit import lazy
from judgekit.calibration.agreement import undefined
from judgekit.calibration.selective import SelectiveResult, SelectiveStep, selective_threshold
from judgekit.stats import Estimate, Interval, normal_quantile

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy.module("numpy")  # imported at its first use: grading's start does not wait for it


__all__ = [
    "SelectiveResult",
    "SelectiveStep",
    "check_correction_counts",
    "prediction_powered_mean",
    "rogan_gladen",
    "selective_threshold",
]


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")
    return normal_quantile(confidence)


def check_correction_counts(flagged: int, n: int, *, tp: int, fn: int, tn: int, fp: int) -> None:
    """Refuse the counts of a failure-rate correction (new data, calibration confusion) that cannot be.

    Raises:
        ValueError: When a confusion count is negative, ``n < 1``, or ``flagged`` is outside ``[0, n]``.
    """
    if min(tp, fn, tn, fp) < 0:
        raise ValueError("confusion counts must be non-negative")
    if n < 1 or not 0 <= flagged <= n:
        raise ValueError(f"flagged must be between 0 and n >= 1, got flagged={flagged}, n={n}")


def rogan_gladen(
    flagged: int,
    n: int,
    *,
    tp: int,
    fn: int,
    tn: int,
    fp: int,
    confidence: float = 0.95,
) -> Estimate:
    """Rogan–Gladen corrected failure rate: θ = (q + TNR − 1) / (TPR + TNR − 1).

    ``q`` is the share of ``n`` unlabelled items the judge flagged as failures; TPR and TNR come from the
    calibration confusion counts. The interval is a delta-method (Wald) interval whose variance adds the
    binomial variances of q, TPR and TNR, each weighted by its derivative; it is clipped to [0, 1] and so
    is the point value (a corrected rate outside [0, 1] means the calibration and the new data disagree).

    Args:
        flagged: Items the judge flagged as failures on the new data, ``0 <= flagged <= n``.
        n: Items the judge decided on the new data (``>= 1``).
        tp: Calibration failures the judge caught.
        fn: Calibration failures the judge missed.
        tn: Calibration non-failures the judge passed.
        fp: Calibration non-failures the judge flagged.
        confidence: Two-sided confidence level.

    Returns:
        The corrected failure rate in [0, 1] with its interval; undefined when TPR + TNR ≤ 1 (the judge
        is no better than chance, so the correction divides by zero or flips sign) or calibration has no
        failures or no non-failures.

    Raises:
        ValueError: When a count is negative or ``flagged`` is outside ``[0, n]``.
    """
    check_correction_counts(flagged, n, tp=tp, fn=fn, tn=tn, fp=fp)
    z = _z(confidence)
    n_pos, n_neg = tp + fn, tn + fp
    if n_pos == 0:
        return undefined("calibration has no reference failures, so TPR is unknown")
    if n_neg == 0:
        return undefined("calibration has no reference non-failures, so TNR is unknown")
    se, sp, q = tp / n_pos, tn / n_neg, flagged / n
    youden = se + sp - 1.0
    if youden <= 0.0:
        return undefined(f"TPR + TNR − 1 = {youden:.3f} is not positive: the judge is no better than chance")
    theta = (q + sp - 1.0) / youden
    var = (
        q * (1 - q) / n + theta**2 * se * (1 - se) / n_pos + (1 - theta) ** 2 * sp * (1 - sp) / n_neg
    ) / youden**2
    half = z * math.sqrt(max(var, 0.0))
    clipped = min(1.0, max(0.0, theta))
    return Estimate(
        value=clipped,
        n=n,
        interval=Interval(
            low=max(0.0, theta - half),
            high=min(1.0, theta + half),
            confidence=confidence,
            method="delta",
            note=None if clipped == theta else f"the uncorrected estimate {theta:.3f} was clipped to [0, 1]",
        ),
    )


def prediction_powered_mean(
    judge_unlabelled: Sequence[float] | np.ndarray,
    judge_labelled: Sequence[float] | np.ndarray,
    human_labelled: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
) -> Estimate:
    """Prediction-powered estimate of a mean (such as the failure rate, with fail = 1).

    θ̂ = mean(f(unlabelled)) − mean(f(labelled) − y(labelled)); its variance is
    var(f(unlabelled))/N + var(f(labelled) − y(labelled))/n, and the interval is θ̂ ± z·sd.

    Args:
        judge_unlabelled: The judge's values (0/1 for verdicts) on the ``N`` items without human labels.
        judge_labelled: The judge's values on the ``n`` human-labelled items.
        human_labelled: The human values on the same ``n`` items, aligned with ``judge_labelled``.
        confidence: Two-sided confidence level.

    Returns:
        The estimate with its interval (clipped to [0, 1] when every value is in [0, 1]); undefined when
        either set has fewer than two items (no variance estimate).

    Raises:
        ValueError: When the labelled arrays differ in length or hold non-finite values.
    """
    z = _z(confidence)
    fu = np.asarray(judge_unlabelled, dtype=float)
    fl = np.asarray(judge_labelled, dtype=float)
    yl = np.asarray(human_labelled, dtype=float)
    if fl.shape != yl.shape:
        raise ValueError(f"judge_labelled and human_labelled differ in length ({fl.size} and {yl.size})")
    if not (np.all(np.isfinite(fu)) and np.all(np.isfinite(fl)) and np.all(np.isfinite(yl))):
        raise ValueError("values must be finite numbers")
    if fu.size < 2:
        return undefined("fewer than two unlabelled items")
    if fl.size < 2:
        return undefined("fewer than two human-labelled items")
    rect = fl - yl
    theta = float(fu.mean() - rect.mean())
    sd = math.sqrt(float(fu.var(ddof=1)) / fu.size + float(rect.var(ddof=1)) / rect.size)
    low, high = theta - z * sd, theta + z * sd
    unit = all(((a >= 0) & (a <= 1)).all() for a in (fu, fl, yl))
    if unit:
        low, high = max(0.0, low), min(1.0, high)
    return Estimate(
        value=min(1.0, max(0.0, theta)) if unit else theta,
        n=int(fu.size + fl.size),
        interval=Interval(low=low, high=high, confidence=confidence, method="prediction-powered"),
    )
