r"""The drift canaries' sequential test: an always-valid test of whether a judge's replies moved.

A canary check re-asks the judge questions whose replies were recorded at calibration time (the canary
set, :mod:`judgekit.calibration.canary`) and counts, over every check made against one calibration record:

- **flips**: re-asked items whose new verdict differs from the recorded one (over every re-asked item
  the judge answered; a provider failure counts in neither stream);
- **new errors**: among the re-asked items whose *recorded* verdict agreed with the experts' consensus,
  those whose new verdict does not (the judge moved away from the labels).

**The null.** A judge called at temperature 0 with the same request can still flip a few replies (batching
and hardware non-determinism), so the null is not "no flip" but: *each re-asked item flips with probability
at most* :math:`p_0`, *whatever happened before* (the flip indicators :math:`X_i` satisfy
:math:`P(X_i = 1 \mid X_1..X_{i-1}) \le p_0`). :math:`p_0` is fixed with the canary set (the larger of a
stated tolerance, by default 0.02, and the flip rate seen among the judge's own samples at calibration),
never re-estimated during the series. On a binary verdict a new error implies a flip, so under the null a
new error also has probability at most :math:`p_0` on each item whose recorded verdict was right.

**The statistic.** For each stream, with :math:`S` events among :math:`n` items so far, the mixture
likelihood ratio with a uniform prior on the alternative :math:`p \in [p_0, 1]`:

.. math::

    E_n = \frac{1}{1 - p_0} \int_{p_0}^{1} \left(\frac{p}{p_0}\right)^{S}
          \left(\frac{1-p}{1-p_0}\right)^{n-S} dp
        = \frac{B(S+1,\, n-S+1)\,\bigl(1 - I_{p_0}(S+1,\, n-S+1)\bigr)}{(1-p_0)\, p_0^{S} (1-p_0)^{n-S}}

(:math:`B` the beta function, :math:`I` the regularised incomplete beta function). For every
:math:`p \ge p_0` the factor of one item has conditional expectation
:math:`q\,p/p_0 + (1-q)(1-p)/(1-p_0) \le 1` when the true flip probability :math:`q \le p_0`, so
:math:`E_n` is a non-negative supermartingale starting at 1 under the null, and by **Ville's inequality**
:math:`P(\sup_n E_n \ge 1/a) \le a`.

**What is promised.** Each of the two streams is tested at :math:`a = \alpha/2` (Bonferroni), so drift is
declared when either :math:`E_n \ge 2/\alpha`. For a judge that satisfies the null, the probability that
*any* check of the whole series against one calibration record (however many checks, however many items
each, whenever they are run, and however the re-asked items are chosen from the set) ever declares drift is
at most :math:`\alpha` (default 0.01). That is stronger than "1% per check": the 1% is spent once over the
unlimited series, which is why repeated checks do not inflate it. An alarm stands once raised (the
supremum crossed): later checks against the same record keep it until a new calibration record starts a
new series.

**What is not promised.** A judge whose stable flip rate exceeds :math:`p_0` false-alarms more often: set
the tolerance to the flip rate of a re-run you trust. Power depends on how much the flip rate moves: a
change confined to one class moves the overall flip rate by that class's share times the change.

>>> round(mixture_e_value(1, 1, 0.5), 6)  # one flip in one item at p0 = 0.5: 1.5 (hand-computed)
1.5
>>> round(mixture_e_value(0, 1, 0.5), 6)
0.5
>>> test = drift_test(flips=9, rejudged=30, new_errors=7, right_before=24, null_rate=0.02, alpha=0.01)
>>> test.detected, test.threshold
(True, 200.0)
"""

from __future__ import annotations

import math
from typing import Final

from judgekit.verdict import FrozenModel

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_TOLERANCE",
    "DriftStream",
    "DriftTest",
    "drift_test",
    "log_mixture_e_value",
    "mixture_e_value",
    "null_rate",
]

DEFAULT_ALPHA: Final = 0.01
"""The false-alarm rate over a whole series of checks against one calibration record."""

DEFAULT_TOLERANCE: Final = 0.02
"""The flip probability per re-asked item a stable judge is allowed under the null (2%)."""


def _checked(events: int, trials: int, p0: float) -> None:
    if not 0 <= events <= trials:
        raise ValueError(f"events must be between 0 and trials (got {events} of {trials})")
    if not 0.0 < p0 < 1.0:
        raise ValueError(f"the null rate must be above 0 and below 1 (got {p0!r})")


def log_mixture_e_value(events: int, trials: int, p0: float) -> float:
    """The natural log of :func:`mixture_e_value` (finite for any counts).

    Args:
        events: Events seen (flips, or new errors), 0 to ``trials``.
        trials: Items observed (>= 0); 0 gives 0.0 (the e-process starts at 1).
        p0: The null's largest event probability per item, strictly between 0 and 1.

    Raises:
        ValueError: When the counts or ``p0`` are out of range.

    >>> log_mixture_e_value(0, 0, 0.02)
    0.0
    """
    _checked(events, trials, p0)
    if trials == 0:
        return 0.0
    from scipy.special import betaincc, betaln

    misses = trials - events
    upper = float(betaincc(events + 1, misses + 1, p0))  # 1 - I_p0(S+1, n-S+1)
    if upper <= 0.0:  # all the mass below p0 (many items, no event): the e-value underflows to 0
        return -math.inf
    return (
        float(betaln(events + 1, misses + 1))
        + math.log(upper)
        - math.log1p(-p0)
        - events * math.log(p0)
        - misses * math.log1p(-p0)
    )


def mixture_e_value(events: int, trials: int, p0: float) -> float:
    r"""The mixture likelihood ratio :math:`E_n` of the module docs (uniform prior on ``[p0, 1]``).

    Args:
        events: Events seen so far over the whole series (0 to ``trials``).
        trials: Items observed so far over the whole series (>= 0).
        p0: The null rate, strictly between 0 and 1.

    Returns:
        :math:`E_n \ge 0`; 1.0 before any item; large values are evidence that the event rate exceeds
        ``p0``. ``math.inf`` when it overflows a float.

    >>> round(mixture_e_value(2, 2, 0.5), 6)  # 2 * 4 * (1 - 1/8) / 3 = 7/3 (hand-computed)
    2.333333
    """
    log_e = log_mixture_e_value(events, trials, p0)
    return math.exp(log_e) if log_e < 700 else math.inf


def null_rate(tolerance: float, calibration_flip_rate: float | None) -> float:
    """The null's flip probability: the larger of the tolerance and the flip rate seen at calibration.

    Args:
        tolerance: The stated tolerance (strictly between 0 and 1).
        calibration_flip_rate: The share of the judge's samples at calibration that differed from the
            recorded verdict (0 to 1), or ``None`` when the judge took one sample (nothing seen).

    Raises:
        ValueError: When the tolerance is out of range.

    >>> null_rate(0.02, None), null_rate(0.02, 0.05)
    (0.02, 0.05)
    """
    if not 0.0 < tolerance < 1.0:
        raise ValueError(f"the flip tolerance must be above 0 and below 1 (got {tolerance!r})")
    seen = calibration_flip_rate or 0.0
    return min(max(tolerance, seen), 0.5)


class DriftStream(FrozenModel):
    """One stream of the test, over every check of the series so far.

    Attributes:
        name: ``flips`` or ``new_errors``.
        events: Events so far (>= 0).
        trials: Items observed so far (>= events).
        null_rate: The null's event probability per item, in (0, 1).
        e_value: :func:`mixture_e_value` of the counts (>= 0; 1 before any item).
        threshold: The e-value that declares drift on this stream (``1 / (alpha / 2)``).
        crossed: Whether ``e_value >= threshold``.
    """

    name: str
    events: int
    trials: int
    null_rate: float
    e_value: float
    threshold: float
    crossed: bool


class DriftTest(FrozenModel):
    """The sequential test after a check: both streams and whether drift is declared.

    Attributes:
        alpha: The false-alarm rate over the whole series (0 < alpha < 1), split equally over the streams.
        flips: The flip stream.
        new_errors: The new-error stream.
        threshold: The e-value either stream must reach (``2 / alpha``).
        detected: Whether either stream crossed its threshold.
    """

    alpha: float
    flips: DriftStream
    new_errors: DriftStream
    threshold: float
    detected: bool

    @property
    def summary(self) -> str:
        """One line: each stream's counts and e-value against the threshold."""
        parts = [
            f"{s.name} {s.events}/{s.trials} (null rate {s.null_rate:g}): e-value {s.e_value:.4g} "
            f"{'>=' if s.crossed else '<'} {s.threshold:g}"
            for s in (self.flips, self.new_errors)
        ]
        return "; ".join(parts) + f" (false-alarm rate {self.alpha:g} over the series)"


def drift_test(
    *,
    flips: int,
    rejudged: int,
    new_errors: int,
    right_before: int,
    null_rate: float,
    alpha: float = DEFAULT_ALPHA,
) -> DriftTest:
    """The sequential test on the series' cumulative counts (pure; call it after every check).

    Args:
        flips: Re-asked items whose new verdict differs from the recorded one, over the series.
        rejudged: Re-asked items the judge answered, over the series (>= flips).
        new_errors: Of ``right_before``, items whose new verdict differs from the consensus.
        right_before: Re-asked items whose recorded verdict agreed with the consensus (<= rejudged).
        null_rate: The null's flip probability (:func:`null_rate`), strictly between 0 and 1.
        alpha: The false-alarm rate over the series, strictly between 0 and 1.

    Returns:
        The test; ``detected`` when either stream's e-value reaches ``2 / alpha``.

    Raises:
        ValueError: On counts or rates out of range.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be above 0 and below 1 (got {alpha!r})")
    if right_before > rejudged:
        raise ValueError("right_before cannot exceed rejudged")
    threshold = 2.0 / alpha

    def stream(name: str, events: int, trials: int) -> DriftStream:
        e_value = mixture_e_value(events, trials, null_rate)
        return DriftStream(
            name=name,
            events=events,
            trials=trials,
            null_rate=null_rate,
            e_value=e_value,
            threshold=threshold,
            crossed=e_value >= threshold,
        )

    a, b = stream("flips", flips, rejudged), stream("new_errors", new_errors, right_before)
    return DriftTest(alpha=alpha, flips=a, new_errors=b, threshold=threshold, detected=a.crossed or b.crossed)
