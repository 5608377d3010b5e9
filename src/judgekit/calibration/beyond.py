"""Beyond agreement: correcting a judge's failure rate, and judging only where it is reliable.

* :func:`rogan_gladen`: the share of failures a trusted judge flags on unlabelled data is biased by its
  misses and false alarms; the Rogan–Gladen estimator corrects it with the judge's TPR and TNR from
  calibration, and the delta method gives an interval that carries the uncertainty of all three.
* :func:`prediction_powered_mean`: with a human-labelled subset as well, prediction-powered inference
  (Angelopoulos et al., 2023) corrects the judge's mean by the mean judge error on the labelled subset;
  its interval is valid whatever the judge's quality.
* :func:`selective_threshold`: choose the lowest confidence threshold at which the judge's agreement
  with experts on the items it keeps is at least a target with probability at least 1 − δ, by
  fixed-sequence testing (thresholds tested from strictest to loosest, stopping at the first that fails)
  with an exact binomial test, and report the coverage left.

All functions are pure and return undefined values (``None`` with a reason) rather than NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats as _st

from judgekit.calibration.agreement import Estimate, Interval, rate, undefined
from judgekit.verdict import FrozenModel

__all__ = [
    "SelectiveResult",
    "SelectiveStep",
    "prediction_powered_mean",
    "rogan_gladen",
    "selective_threshold",
]


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")
    return float(_st.norm.ppf(1.0 - (1.0 - confidence) / 2.0))


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
    if min(tp, fn, tn, fp) < 0:
        raise ValueError("confusion counts must be non-negative")
    if n < 1 or not 0 <= flagged <= n:
        raise ValueError(f"flagged must be between 0 and n >= 1, got flagged={flagged}, n={n}")
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


class SelectiveStep(FrozenModel):
    """One threshold tested in the fixed sequence.

    Attributes:
        threshold: Items with confidence at or above it are judged.
        judged: Items kept.
        agreed: Kept items where the judge equals the consensus.
        p_value: Exact one-sided binomial p-value of H0: agreement < target.
        rejected: True when ``p_value <= delta`` (agreement shown to reach the target).
    """

    threshold: float
    judged: int
    agreed: int
    p_value: float
    rejected: bool


class SelectiveResult(FrozenModel):
    """The chosen confidence threshold and what it leaves.

    Attributes:
        target_agreement: The agreement the judged items must reach.
        delta: Probability that the guarantee fails.
        threshold: The lowest threshold whose test (and every stricter one) rejected; ``None`` when even
            the strictest failed (``reason`` says why).
        coverage: Share of items the judge keeps at ``threshold`` (Wilson interval).
        agreement: Agreement on the kept items, with its one-sided exact lower bound as the interval's
            ``low``.
        steps: Every threshold tested, in order, up to and including the first that failed.
        reason: Why no threshold was chosen.
    """

    target_agreement: float
    delta: float
    threshold: float | None
    coverage: Estimate
    agreement: Estimate
    steps: tuple[SelectiveStep, ...]
    reason: str | None = None


def selective_threshold(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    *,
    target: float = 0.90,
    delta: float = 0.05,
    interval_confidence: float = 0.95,
    population: int | None = None,
) -> SelectiveResult:
    """Pick the judge's confidence threshold by fixed-sequence testing with an exact binomial bound.

    The candidate thresholds are the distinct confidence values, tested from highest to lowest. At
    threshold t the judge keeps items with confidence ≥ t; H0(t) says its agreement on them is below
    ``target``, tested with the exact binomial tail P(Bin(n_t, target) ≥ k_t). Testing stops at the first
    H0 not rejected at level ``delta``; because the order is fixed before looking at correctness, the
    chance that any rejected threshold actually falls short of the target is at most ``delta``.

    Args:
        confidence: The judge's confidence per item (for example its sample agreement), in [0, 1].
        correct: Whether the judge's verdict equals the expert consensus, aligned with ``confidence``.
        target: Agreement the kept items must reach, in (0, 1).
        delta: Allowed probability that the guarantee fails, in (0, 1).
        interval_confidence: Two-sided confidence level of the coverage's Wilson interval.
        population: Items coverage is a share of (default: the items given). Pass a larger number when
            some items cannot be kept at any threshold (the judge abstained on them).

    Returns:
        The chosen threshold, the coverage it leaves and the agreement on kept items.

    Raises:
        ValueError: When the inputs differ in length, a confidence is outside [0, 1], or ``target`` or
            ``delta`` is outside (0, 1).
    """
    conf = np.asarray(confidence, dtype=float)
    ok = np.asarray(correct, dtype=bool)
    if conf.shape != ok.shape:
        raise ValueError(f"confidence and correct differ in length ({conf.size} and {ok.size})")
    if conf.size and (not np.all(np.isfinite(conf)) or conf.min() < 0.0 or conf.max() > 1.0):
        raise ValueError("confidence values must be in [0, 1]")
    if not 0.0 < target < 1.0 or not 0.0 < delta < 1.0:
        raise ValueError("target and delta must be strictly between 0 and 1")
    n_total = int(conf.size) if population is None else population
    if population is not None and population < conf.size:
        raise ValueError(f"population {population} is smaller than the {conf.size} items given")
    if conf.size == 0:
        none = undefined("no items with a confidence and an expert consensus")
        return SelectiveResult(
            target_agreement=target,
            delta=delta,
            threshold=None,
            coverage=none,
            agreement=none,
            steps=(),
            reason="no items with a confidence and an expert consensus",
        )
    steps: list[SelectiveStep] = []
    chosen: SelectiveStep | None = None
    for t in sorted(set(conf.tolist()), reverse=True):
        keep = conf >= t
        n_t, k_t = int(keep.sum()), int(ok[keep].sum())
        p = float(_st.binom.sf(k_t - 1, n_t, target))
        step = SelectiveStep(threshold=t, judged=n_t, agreed=k_t, p_value=p, rejected=p <= delta)
        steps.append(step)
        if not step.rejected:
            break
        chosen = step
    if chosen is None:
        first = steps[0]
        reason = (
            f"even at the strictest threshold {first.threshold:g} the judge agrees on {first.agreed} of "
            f"{first.judged} items, which does not show agreement ≥ {target:g} at δ = {delta:g}"
        )
        return SelectiveResult(
            target_agreement=target,
            delta=delta,
            threshold=None,
            coverage=undefined(reason),
            agreement=undefined(reason),
            steps=tuple(steps),
            reason=reason,
        )
    coverage = rate(chosen.judged, n_total, confidence=interval_confidence, what="items")
    lower = (
        0.0
        if chosen.agreed == 0
        else float(_st.beta.ppf(delta, chosen.agreed, chosen.judged - chosen.agreed + 1))
    )
    agreement = Estimate(
        value=chosen.agreed / chosen.judged,
        n=chosen.judged,
        interval=Interval(
            low=lower,
            high=1.0,
            confidence=1.0 - delta,
            method="exact binomial (one-sided)",
        ),
    )
    return SelectiveResult(
        target_agreement=target,
        delta=delta,
        threshold=chosen.threshold,
        coverage=coverage,
        agreement=agreement,
        steps=tuple(steps),
    )
